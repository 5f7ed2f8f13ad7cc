#!/usr/bin/env python3
"""GPU shape sweep: infiniop-c on many shapes, views and dtypes, against
PyTorch eager and torch.compile in the same process.

bench/gpu_bench.py times 16 chosen cases; this sweep asks whether the
library holds up on the shapes no benchmark names (issue #13): model hidden
sizes that are not powers of two, odd sequence lengths, few rows with very
long D, 3-D and 4-D tensors, views with any strides, tiny decode tensors,
every dtype.  Its case list (``cases()``) has per operator

* the issue's named cases (``named``),
* model dimensions: rows x D with D in 768, 896, 1280, 1536, 3584, 4096,
  5120, 7168, 8192, 14336 (and 64..65536) and rows 1..65536 (``model``,
  ``decode``, ``few-rows``), 3-D per-head and 4-D shapes (``heads``),
* for causal_softmax heads x S x T with S and T odd, T > S, S = 1 decode
  rows and 4-D (``softmax``),
* views (``view``): transposed, permuted, sliced (padded rows, a row or
  column step, an odd offset), broadcast inputs for silu/sigmoid (stride
  0) and broadcast or strided weights for the norms,
* dtypes (``dtype``): F16, BF16, F32, F64 for silu/sigmoid, the mixed
  weight dtypes SPEC allows for add_rms_norm,
* a seeded generator of random shapes, layouts and dtypes (``random``),

from a few KB to 1 GB moved.  ``--list`` prints it with bytes moved.

For every case it measures, in one process on one GPU: ``copy`` (the
fastest device-to-device copy moving the case's own byte count:
gpu_bench.best_copy), ``eager`` (fastest listed eager variant),
``compile`` (torch.compile, dynamic=False, of the natural function) and
``infiniop`` (the library through the Python package; the faster of
preallocated ``out=`` outputs and outputs the allocator hands out at each
call, as the peers get).  Timing is gpu_bench's Timer: cases moving fewer
than --graph-below bytes (8 MB), or whose same-bytes copy takes less than
--graph-below-us (50 us, where a stream timing would measure Python and
ctypes rather than the GPU), are replays of a CUDA graph holding N calls;
larger cases are timed with events around N back-to-back calls on the
stream (>= 2 ms of work); median of --reps.  Cases whose buffers are not
well above L2 rotate over up to 8 buffer sets, except those under 1 MB
(decode-like: L2-resident, as in a model).

Checks: every output of the library, and of each peer (reported, not
fatal), against a float64 reference computed from the same inputs, over
all elements, at every size: nothing is sampled (the reference is
computed in chunks of about 2^25 elements, whole rows, for softmax whole
S x T slices, so memory stays bounded).  Tolerances: gpu_bench's
(about two units in the last place of the output type); the relative
error ||out - ref|| / ||ref|| is reported too.

Targets (issue #13), reported per operator: the library at least as fast
as the best peer on every case (ratio = best peer time / library time >=
1); >= 85% of the same-bytes copy for cases moving >= 64 MB; <= 2.5 us in
a graph for cases moving < 1 MB.  A peer that fails (torch.compile
error, unsupported dtype) is shown as n/a with its error, never dropped.

Budget: --budget seconds (default 210) for the whole sweep: cases are
ordered named first, then round-robin over operators and categories, so a
cut-off thins every operator alike; cases that did not start in time are
listed as "not run (budget)".  torch.compile is tried only in the first
--compile-budget seconds (default 0.6 x budget).  --shard K/N runs every
N-th case (for the whole list over several commands).

Run (repository root, CUDA library in build-gpu/):

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/gpu_sweep.py
        [--budget S] [--cases REGEX] [--ops OPS] [--shard K/N] [--out DIR]

Writes the table to stdout and, with $OUT or --out, sweep.md (tables),
sweep.json and sweep.png (ratio to the best peer and % of copy per case).
Without a GPU: ``--device cpu --quick`` runs a few small cases per
operator end to end through the library's CPU backend and PyTorch on the
CPU (the numbers mean nothing; the program's logic is what it checks).

Exit status: 0 every case that ran matched float64 and raised no library
error; 1 some case failed; 2 it could not run at all.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench as gb  # noqa: E402  (timing, copy ceiling, peers, tolerances)

OPS = ("add_rms_norm", "layer_norm", "causal_softmax", "silu", "sigmoid")
ITEMSIZE = gb.ITEMSIZE
ACT_DTYPES = ("f16", "bf16", "f32", "f64")
NORM_DTYPES = ("f16", "bf16", "f32")
RMS_PAIRS = {"f16": ("f16", "bf16", "f32"), "bf16": ("bf16", "f16", "f32"), "f32": ("f32",)}
MODEL_D = (768, 896, 1280, 1536, 3584, 4096, 5120, 7168, 8192, 14336)

BIG_BYTES = 64e6        # cases moving >= 64 MB: >= 85% of copy
BIG_PCT = 85.0
SMALL_BYTES = 1e6       # cases moving < 1 MB: <= 2.5 us in a graph
SMALL_US = 2.5
MAX_BYTES = 1.1e9       # the largest case moves ~1 GB
MIN_BYTES = 1e3
CHECK_CHUNK = 1 << 25   # elements of float64 reference computed at once (whole rows / S x T slices)
CATEGORIES = ("named", "model", "decode", "few-rows", "heads", "softmax", "view", "dtype", "tiny", "random")

# --------------------------------------------------------------------- views


def contiguous_strides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return tuple(reversed(st))


class View:
    """A strided view of a 1-D storage of `storage` elements (strides in
    elements, >= 0; stride 0: broadcast)."""

    __slots__ = ("shape", "strides", "offset", "storage")

    def __init__(self, shape, strides, offset, storage):
        self.shape, self.strides = tuple(shape), tuple(strides)
        self.offset, self.storage = offset, storage

    def numel(self):
        return math.prod(self.shape)

    def unique(self):
        """Distinct elements addressed (broadcast dimensions count once)."""
        return math.prod(n for n, s in zip(self.shape, self.strides) if s != 0)

    def max_index(self):
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if n > 0)

    def in_bounds(self):
        return (self.offset >= 0 and all(s >= 0 for s in self.strides)
                and (self.numel() == 0 or self.max_index() < self.storage))

    def non_overlapping(self):
        """Sufficient test that no two indices map to one address: sorted by
        stride, each dimension's stride exceeds the span of the smaller ones
        (dims of size 1 ignored; broadcast views fail it)."""
        span = 0  # the largest offset the smaller-stride dims reach
        for s, n in sorted((s, n) for n, s in zip(self.shape, self.strides) if n > 1):
            if s <= span:
                return False
            span += s * (n - 1)
        return True

    def contiguous(self):
        return self.offset == 0 and self.strides == contiguous_strides(self.shape) or self.numel() <= 1

    def as_dict(self):
        return {"shape": list(self.shape), "strides": list(self.strides), "offset": self.offset, "storage": self.storage}


def v_contig(shape):
    return View(shape, contiguous_strides(shape), 0, math.prod(shape))


def v_permuted(shape, order):
    """The view of a contiguous storage laid out as [shape[order[0]],
    shape[order[1]], ...]: view dim order[k] is storage dim k."""
    sshape = [shape[d] for d in order]
    sst = contiguous_strides(sshape)
    strides = [0] * len(shape)
    for k, d in enumerate(order):
        strides[d] = sst[k]
    return View(shape, strides, 0, math.prod(shape))


def v_transposed(shape):
    order = list(range(len(shape)))
    order[-1], order[-2] = order[-2], order[-1]
    return v_permuted(shape, order)


def v_sliced(shape, pad=0, row_step=1, col_step=1, offset=0):
    """shape out of a larger contiguous storage: the last dimension is
    storage[..., offset : offset + D*col_step : col_step] of rows D*col_step
    + pad long, the first dimension takes every row_step-th (ndim >= 2)."""
    assert 0 <= offset <= pad
    sshape = list(shape)
    sshape[-1] = shape[-1] * col_step + pad
    if len(shape) >= 2:
        sshape[0] = shape[0] * row_step
    sst = list(contiguous_strides(sshape))
    sst[-1] *= col_step
    if len(shape) >= 2:
        sst[0] *= row_step
    return View(shape, sst, offset, math.prod(sshape))


def v_bcast(shape, dim):
    st = list(contiguous_strides([1 if d == dim else n for d, n in enumerate(shape)]))
    st[dim] = 0
    return View(shape, st, 0, math.prod(n for d, n in enumerate(shape) if d != dim))


def weight_view(D, wlayout):
    if wlayout == "strided":
        return View((D,), (2,), 1, 2 * D)
    if wlayout == "bcast":
        return View((D,), (0,), 0, 1)
    return v_contig((D,))


# --------------------------------------------------------------------- cases


class SweepCase:
    """One sweep case: operator, dtypes, shape, the input's layout and (for
    the norms) the weight's. layout: contig | transposed | permuted:<order>
    | sliced:<pad>,<row_step>,<col_step>,<offset> | bcast:<dim>."""

    def __init__(self, op, dtype, shape, *, cat, wdtype=None, layout="contig", wlayout="contig", bias=True, named=None):
        self.op, self.dtype, self.shape = op, dtype, tuple(shape)
        self.wdtype = wdtype or dtype
        self.cat, self.layout, self.wlayout, self.bias, self.named = cat, layout, wlayout, bias, named

    def input_view(self):
        kind, _, arg = self.layout.partition(":")
        if kind == "contig":
            return v_contig(self.shape)
        if kind == "transposed":
            return v_transposed(self.shape)
        if kind == "permuted":
            return v_permuted(self.shape, [int(c) for c in arg.split(",")])
        if kind == "sliced":
            pad, rs, cs, off = (int(c) for c in arg.split(","))
            return v_sliced(self.shape, pad, rs, cs, off)
        if kind == "bcast":
            return v_bcast(self.shape, int(arg))
        raise ValueError(self.layout)

    def views(self):
        """{tensor name: View} of the inputs (outputs are contiguous)."""
        if self.op == "add_rms_norm":
            return {"a": self.input_view(), "b": self.input_view(), "w": weight_view(self.shape[-1], self.wlayout)}
        if self.op == "layer_norm":
            v = {"x": self.input_view(), "w": weight_view(self.shape[-1], self.wlayout)}
            if self.bias:
                v["bias"] = weight_view(self.shape[-1], self.wlayout)
            return v
        return {"x": self.input_view()}

    def nbytes(self):
        """The fewest bytes the operation must move (gpu_bench.min_bytes;
        a broadcast input counts its distinct elements, an absent bias none)."""
        es = ITEMSIZE[self.dtype]
        if self.op in ("silu", "sigmoid"):
            return (self.input_view().unique() + math.prod(self.shape)) * es
        b = gb.min_bytes(self.op, self.dtype, self.wdtype, self.shape)
        if self.op == "layer_norm" and not self.bias:
            b -= self.shape[-1] * es
        return b

    @property
    def name(self):
        dt = self.dtype if self.wdtype == self.dtype else f"{self.dtype}/{self.wdtype}"
        shp = "x".join(map(str, self.shape)) if self.shape else "scalar"
        s = f"{self.op} {dt} {shp}"
        if self.layout != "contig":
            s += f" {self.layout}"
        if self.wlayout != "contig":
            s += f" w:{self.wlayout}"
        if not self.bias:
            s += " nobias"
        return s

    def key(self):
        return (self.op, self.dtype, self.wdtype, self.shape, self.layout, self.wlayout, self.bias)


def _norm_fixed(op):
    C = lambda *a, **k: SweepCase(op, *a, **k)  # noqa: E731
    L = []
    rms = op == "add_rms_norm"
    if rms:
        L += [C("bf16", (512, 14336), cat="named", named="issue #13: 71% of copy"),
              C("bf16", (256, 65536), cat="named", named="issue #13: 62% of copy")]
    else:
        L += [C("bf16", (8192, 1280), cat="named", named="issue #13: 64% of copy"),
              C("bf16", (12608, 768), cat="named", named="issue #13: 69% of copy")]
    rows = 4096 if rms else 8192
    L += [C("bf16", (rows, D), cat="model") for D in MODEL_D]
    L += [C("bf16", (1, D), cat="decode") for D in (896, 1536, 3584, 5120, 7168, 14336)]
    L += [C("f16", (32, D), cat="decode") for D in (768, 1280, 4096, 8192)]
    L += [C("bf16", (r, 896), cat="model") for r in (7, 197, 1000, 16384, 65536)]
    L += [C("bf16", (65536, 64), cat="model"), C("f16", (65536, 128), cat="model"), C("f16", (16384, 256), cat="model")]
    L += [C("bf16", (1, 65536), cat="few-rows"), C("bf16", (4, 65536), cat="few-rows"),
          C("bf16", (16, 32768), cat="few-rows"), C("bf16", (64, 65536), cat="few-rows"),
          C("f32", (8, 65536), cat="few-rows"), C("f16", (3, 49999), cat="few-rows")]
    L += [C("bf16", (4096, 32, 128), cat="heads"), C("f16", (197, 12, 64), cat="heads"),
          C("bf16", (1024, 14, 64), cat="heads"), C("bf16", (8, 40, 128), cat="heads"),
          C("f32", (512, 28, 128), cat="heads"), C("bf16", (2, 16, 197, 64), cat="heads"),
          C("f16", (1, 32, 777, 128), cat="heads")]
    if rms:
        L += [C("f16", (4096, 4096), wdtype="f32", cat="dtype"), C("bf16", (8192, 5120), wdtype="f32", cat="dtype"),
              C("f16", (2048, 3584), wdtype="bf16", cat="dtype"), C("bf16", (1024, 7168), wdtype="f16", cat="dtype"),
              C("f32", (4096, 1536), cat="dtype"), C("f32", (1000, 14336), cat="dtype"),
              C("f16", (8192, 896), cat="dtype")]
        L += [C("bf16", (4096, 3584), layout="sliced:64,1,1,0", cat="view"),
              C("bf16", (2048, 5120), layout="sliced:0,2,1,0", cat="view"),
              C("f16", (1000, 1536), layout="sliced:8,1,1,8", cat="view"),
              C("bf16", (1024, 32, 128), layout="permuted:1,0,2", cat="view"),
              C("f16", (197, 12, 64), layout="permuted:1,0,2", cat="view"),
              C("bf16", (4096, 1536), wlayout="strided", cat="view"),
              C("bf16", (2048, 896), wlayout="bcast", cat="view"),
              C("f16", (512, 7168), wdtype="f32", wlayout="strided", cat="view")]
    else:
        L += [C("f32", (8192, 4096), cat="dtype"), C("f16", (4096, 14336), cat="dtype"),
              C("f32", (65536, 768), cat="dtype"), C("f16", (197, 768), cat="dtype"),
              C("bf16", (9850, 768), cat="dtype"), C("f16", (32768, 896), cat="dtype"),
              C("f32", (3, 5120), cat="dtype")]
        L += [C("bf16", (4096, 768), layout="transposed", cat="view"),
              C("f32", (1000, 1001), layout="transposed", cat="view"),
              C("bf16", (8192, 1280), layout="sliced:128,1,1,0", cat="view"),
              C("f16", (2048, 3584), layout="sliced:3,1,1,1", cat="view"),
              C("bf16", (197, 64, 768), layout="permuted:1,0,2", cat="view"),
              C("bf16", (4096, 3584), wlayout="strided", cat="view"),
              C("f16", (2048, 5120), wlayout="bcast", cat="view"),
              C("bf16", (8192, 4096), bias=False, cat="view"),
              C("f32", (1024, 1536), bias=False, wlayout="strided", cat="view")]
    L += [C("bf16", (1, 64), cat="tiny"), C("f32", (3, 33), cat="tiny"), C("f16", (5, 200), cat="tiny")]
    return L


def _softmax_fixed():
    C = lambda *a, **k: SweepCase("causal_softmax", *a, **k)  # noqa: E731
    return [
        C("f16", (12, 197, 197), cat="named", named="issue #13: 3.7 vs 2.6 us (compile)"),
        C("f16", (40, 777, 777), cat="named", named="issue #13: 26% of copy"),
        C("bf16", (2, 16, 1500, 1500), cat="named", named="issue #13: 32% of copy"),
        C("f16", (32, 1, 8192), cat="decode"), C("bf16", (32, 1, 777), cat="decode"),
        C("f16", (12, 1, 4097), cat="decode"), C("bf16", (28, 1, 32769), cat="decode"),
        C("f32", (1, 1, 65536), cat="decode"), C("bf16", (64, 1, 1999), cat="decode"),
        C("f16", (8, 1, 197), cat="decode"),
        C("bf16", (32, 7, 1031), cat="softmax"), C("f16", (16, 3, 65535), cat="softmax"),
        C("bf16", (40, 5, 4099), cat="softmax"), C("bf16", (8, 127, 4095), cat="softmax"),
        C("f16", (32, 255, 1023), cat="softmax"), C("bf16", (16, 333, 1025), cat="softmax"),
        C("f32", (12, 197, 393), cat="softmax"), C("bf16", (14, 999, 2047), cat="softmax"),
        C("bf16", (32, 2048, 2048), cat="softmax"), C("f32", (8, 512, 4608), cat="softmax"),
        C("bf16", (1, 4096, 4096), cat="softmax"), C("f16", (64, 577, 577), cat="softmax"),
        C("bf16", (96, 1025, 1025), cat="softmax"), C("f32", (16, 257, 257), cat="softmax"),
        C("f16", (4, 8191, 8191), cat="softmax"),
        C("bf16", (1, 32, 255, 255), cat="heads"), C("f16", (2, 12, 197, 197), cat="heads"),
        C("bf16", (4, 8, 333, 1025), cat="heads"), C("f32", (2, 4, 100, 700), cat="heads"),
        C("f16", (197, 197), cat="model"), C("bf16", (1, 65536), cat="few-rows"),
        C("f32", (40, 777, 777), cat="dtype"), C("bf16", (12, 197, 197), cat="dtype"),
        C("f16", (2, 16, 1500, 1500), cat="dtype"),
        C("bf16", (32, 511, 511), layout="sliced:1,1,1,0", cat="view"),
        C("f16", (12, 197, 197), layout="sliced:3,1,1,1", cat="view"),
        C("bf16", (8, 1023, 2047), layout="sliced:0,2,1,0", cat="view"),
        C("f16", (12, 197, 197), layout="permuted:1,0,2", cat="view"),
        C("bf16", (2, 197, 12, 197), layout="permuted:0,2,1,3", cat="view"),
        C("bf16", (16, 255, 255), layout="transposed", cat="view"),
        C("f32", (7, 13), cat="tiny"), C("bf16", (2, 3, 5), cat="tiny"),
    ]


def _act_fixed(op):
    C = lambda *a, **k: SweepCase(op, *a, **k)  # noqa: E731
    own = lambda which, note: note if which == op else None  # noqa: E731
    return [
        C("bf16", (5000, 5000), layout="transposed", cat="named",
          named=own("sigmoid", "issue #13: 73.0 vs 29.1 us (eager), 0.40x")),
        C("f32", (1000001,), cat="named", named=own("silu", "issue #13: 9.8 vs 6.5 us")),
        C("f16", (65536,), cat="named", named=own("silu", "issue #13: 1.7 vs 1.3 us (graph)")),
        C("bf16", (1,), cat="tiny"), C("f32", (7,), cat="tiny"), C("f16", (4095,), cat="tiny"), C("f32", (), cat="tiny"),
        C("bf16", (1 << 20,), cat="model"), C("f16", (1000003,), cat="model"), C("bf16", ((1 << 24) + 1,), cat="model"),
        C("f32", (30000001,), cat="model"), C("bf16", (1 << 28,), cat="model"), C("f64", (33554431,), cat="dtype"),
        C("bf16", (4096, 14336), cat="model"), C("bf16", (8192, 18944), cat="model"),
        C("bf16", (8192, 1280), cat="model"), C("f32", (197, 768), cat="model"), C("bf16", (1, 14336), cat="decode"),
        C("bf16", (32, 11008), cat="decode"), C("bf16", (2048, 4864), cat="model"), C("f16", (197, 3072), cat="model"),
        C("bf16", (512, 8960), cat="model"), C("f16", (16384, 5120), cat="model"), C("f32", (4096, 7168), cat="dtype"),
        C("f64", (1024, 1536), cat="dtype"), C("f64", (4096, 8192), cat="dtype"), C("f16", (7, 896), cat="decode"),
        C("bf16", (8, 4096, 896), cat="heads"), C("f16", (64, 197, 3072), cat="heads"),
        C("bf16", (8192, 8192), layout="transposed", cat="view"),
        C("f32", (4097, 3001), layout="transposed", cat="view"), C("f16", (65, 33), layout="transposed", cat="view"),
        C("bf16", (1000, 1000), layout="transposed", cat="view"), C("f64", (2048, 1023), layout="transposed", cat="view"),
        C("bf16", (16, 4096), layout="transposed", cat="view"),
        C("bf16", (2, 197, 12, 64), layout="permuted:0,2,1,3", cat="view"),
        C("f16", (8, 1024, 32, 128), layout="permuted:0,2,1,3", cat="view"),
        C("f32", (64, 128, 33), layout="permuted:2,0,1", cat="view"),
        C("bf16", (4096, 3584), layout="sliced:1,1,1,0", cat="view"),
        C("f16", (1000, 1001), layout="sliced:0,1,2,0", cat="view"),
        C("f32", (2047, 4096), layout="sliced:0,2,1,0", cat="view"),
        C("bf16", (8192, 1536), layout="sliced:1,1,1,1", cat="view"),
        C("bf16", (4096, 14336), layout="bcast:0", cat="view"),
        C("f32", (1000, 1000), layout="bcast:1", cat="view"),
        C("f16", (64, 197, 768), layout="bcast:1", cat="view"),
    ]


def _loguniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _random_case(rng, op):
    """One random case of op moving MIN_BYTES..MAX_BYTES (rejection sampled)."""
    while True:
        if op in ("silu", "sigmoid"):
            dtype = rng.choice(ACT_DTYPES)
            ndim = rng.choice((1, 2, 2, 3, 4))
            shape = [_loguniform(rng, 1, 65536 if ndim <= 2 else 512) for _ in range(ndim)]
            kinds = ["contig", "contig", "sliced", "bcast"] + (["transposed", "permuted"] if ndim >= 2 else [])
        elif op == "causal_softmax":
            dtype = rng.choice(NORM_DTYPES)
            S = _loguniform(rng, 1, 4096)
            T = S + rng.choice((0, _loguniform(rng, 1, 8192)))
            lead = [_loguniform(rng, 1, 64) for _ in range(rng.choice((0, 1, 1, 2)))]
            shape = lead + [S, T]
            kinds = ["contig", "contig", "sliced", "transposed"] + (["permuted"] if len(shape) >= 3 else [])
        else:
            dtype = rng.choice(NORM_DTYPES)
            D = rng.choice(MODEL_D + (64, 128, 256) + (_loguniform(rng, 64, 65536),) * 4)
            ndim = rng.choice((2, 2, 3, 4))
            lead = [_loguniform(rng, 1, 65536 if ndim == 2 else 256) for _ in range(ndim - 1)]
            shape = lead + [D]
            kinds = ["contig", "contig", "sliced"] + (["permuted"] if ndim >= 3 else [])
            if op == "layer_norm":
                kinds.append("transposed")
        kind = rng.choice(kinds)
        nd = len(shape)
        if kind == "sliced":
            pad = rng.choice((1, 3, 8, 64))
            layout = f"sliced:{pad},{rng.choice((1, 1, 2))},{rng.choice((1, 2)) if op in ('silu', 'sigmoid') else 1},{rng.randint(0, pad)}"
        elif kind == "permuted":
            fixed_last = op not in ("silu", "sigmoid")
            m = nd - 1 if fixed_last else nd
            order = list(range(m))
            while order == sorted(order):
                rng.shuffle(order)
            if fixed_last:
                order.append(nd - 1)
            layout = "permuted:" + ",".join(map(str, order))
        elif kind == "bcast":
            layout = f"bcast:{rng.randrange(nd)}"
        else:
            layout = kind
        kw = {}
        if op == "add_rms_norm":
            kw["wdtype"] = rng.choice(RMS_PAIRS[dtype])
        if op in ("add_rms_norm", "layer_norm"):
            kw["wlayout"] = rng.choice(("contig", "contig", "strided", "bcast"))
        if op == "layer_norm":
            kw["bias"] = rng.random() < 0.8
        c = SweepCase(op, dtype, shape, cat="random", layout=layout, **kw)
        if MIN_BYTES <= c.nbytes() <= MAX_BYTES and c.input_view().storage * ITEMSIZE[dtype] <= MAX_BYTES:
            return c


def cases(seed=0, n_random=16):
    """Every sweep case, deterministic for a seed: the fixed list of each
    operator, then n_random random cases per operator (duplicates dropped)."""
    out = []
    for op in OPS:
        if op in ("add_rms_norm", "layer_norm"):
            fixed = _norm_fixed(op)
        elif op == "causal_softmax":
            fixed = _softmax_fixed()
        else:
            fixed = _act_fixed(op)
        rng = random.Random(f"infiniop-sweep:{seed}:{op}")
        seen = set()
        fixed = [c for c in fixed if not (c.key() in seen or seen.add(c.key()))]  # a named case may be a model one too
        rnd = []
        while len(rnd) < n_random:
            c = _random_case(rng, op)
            if c.key() not in seen:
                seen.add(c.key())
                rnd.append(c)
        out += fixed + rnd
    return out


def run_order(cs):
    """Named cases first, then round-robin over operators and, within each,
    over categories: a cut-off by the time budget thins everything alike."""
    named = [c for c in cs if c.cat == "named"]
    per_op = []
    for op in OPS:
        bycat = collections.OrderedDict()
        for c in cs:
            if c.op == op and c.cat != "named":
                bycat.setdefault(c.cat, []).append(c)
        seq = []
        queues = [collections.deque(v) for v in bycat.values()]
        while any(queues):
            for q in queues:
                if q:
                    seq.append(q.popleft())
        per_op.append(collections.deque(seq))
    rest = []
    while any(per_op):
        for q in per_op:
            if q:
                rest.append(q.popleft())
    return named + rest


def quick_cpu_cases(cs, per_op=4, max_bytes=2e6):
    """A handful of small cases per operator, distinct layouts first."""
    out = []
    for op in OPS:
        mine = [c for c in cs if c.op == op and c.nbytes() <= max_bytes and c.input_view().storage * 8 <= 4 * max_bytes]
        picked, kinds = [], set()
        for c in mine:
            k = (c.layout.split(":")[0], c.wlayout, c.wdtype != c.dtype)
            if k not in kinds:
                kinds.add(k)
                picked.append(c)
            if len(picked) == per_op:
                break
        out += picked
    return out


# ----------------------------------------------------------------- reference


def chunks(shape, keep, limit=CHECK_CHUNK):
    """Index tuples (of slices over the leading dims) that cover a tensor of
    this shape with pieces of at most `limit` elements, never splitting the
    last `keep` dimensions."""
    shape = list(shape)
    keep = min(keep, len(shape))
    lead, inner = shape[:len(shape) - keep], math.prod(shape[len(shape) - keep:])

    def rec(dims):
        if not dims or math.prod(dims) * inner <= limit:
            yield ()
            return
        per = math.prod(dims[1:]) * inner
        if per <= limit:
            step = max(1, limit // per)
            for s in range(0, dims[0], step):
                yield (slice(s, min(s + step, dims[0])),)
        else:
            for i in range(dims[0]):
                for sub in rec(dims[1:]):
                    yield (slice(i, i + 1),) + sub

    yield from rec(lead)


def reference(torch, op, ins):
    """float64 outputs of op from float64 inputs (one chunk of rows)."""
    if op == "add_rms_norm":
        a, b, w = ins
        r = a + b
        return (r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + gb.EPS_RMS) * w, r)
    if op == "layer_norm":
        x, w, bias = ins
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        std = torch.sqrt(var + gb.EPS_LN)
        xhat = (x - mean) / std
        out = xhat * w + (bias if bias is not None else 0.0)
        return (out, xhat, std.squeeze(-1))
    if op == "causal_softmax":
        (x,) = ins
        S, T = x.shape[-2], x.shape[-1]
        i = torch.arange(S, device=x.device).unsqueeze(-1)
        j = torch.arange(T, device=x.device)
        return (torch.softmax(x.masked_fill(j > i + (T - S), float("-inf")), dim=-1),)
    (x,) = ins
    s = torch.sigmoid(x)
    return (x * s if op == "silu" else s,)


class CheckResult:
    def __init__(self):
        self.ok, self.nbad, self.n, self.max_abs, self.sq_err, self.sq_ref, self.first = True, 0, 0, 0.0, 0.0, 0.0, None

    def rel(self):
        return math.sqrt(self.sq_err / self.sq_ref) if self.sq_ref > 0 else math.sqrt(self.sq_err)

    def as_dict(self):
        return {"ok": self.ok, "elements": self.n, "mismatches": self.nbad, "max_abs_err": self.max_abs,
                "rel_err": self.rel(), "first_mismatch": self.first}

    def text(self):
        s = f"rel {self.rel():.1e}"
        if not self.ok:
            s = f"{self.nbad} of {self.n} differ ({self.first}); " + s
        return s


def check(torch, case, inputs, outs):
    """Every element of outs (library or peer outputs) against float64."""
    rtol, atol = gb.tolerances(case.dtype)
    keep = {"causal_softmax": 2, "silu": 0, "sigmoid": 0}.get(case.op, 1)
    res = CheckResult()
    for idx in chunks(case.shape, keep):
        ins64 = []
        for name, t in inputs:
            if t is None:
                ins64.append(None)
            elif name in ("w", "bias"):
                ins64.append(t.to(torch.float64))
            else:
                ins64.append(t[idx].to(torch.float64))
        refs = reference(torch, case.op, ins64)
        for k, (g, r) in enumerate(zip(outs, refs)):
            gi = g[idx]
            if tuple(gi.shape) != tuple(r.shape):
                res.ok = False
                res.first = f"output {k}: shape {tuple(gi.shape)} != {tuple(r.shape)}"
                return res
            g64 = gi.to(torch.float64)
            close = torch.isclose(g64, r, rtol=rtol, atol=atol, equal_nan=True)
            nbad = int((~close).sum().item())
            d = torch.nan_to_num((g64 - r).abs(), nan=float("inf"))
            res.n += g64.numel()
            if d.numel():
                res.max_abs = max(res.max_abs, float(d.max().item()))
                res.sq_err += float(torch.nan_to_num(d, posinf=1e300).pow(2).sum().item())
                res.sq_ref += float(torch.nan_to_num(r, nan=0.0).pow(2).sum().item())
            if nbad:
                res.ok = False
                if res.first is None:
                    flat = int((~close).flatten().nonzero()[0].item())
                    res.first = (f"output {k} at flat {flat} of chunk: got {g64.flatten()[flat].item():.6g}, "
                                 f"want {r.flatten()[flat].item():.6g}")
                res.nbad += nbad
            del g64, close, d
        del ins64, refs
    return res


# ------------------------------------------------------------------ building


def build(torch, case, device, n_sets, infiniop, seed):
    """gpu_bench.Built for a sweep case: sets of inputs laid out as the
    case's views, contiguous outputs, the peers from gpu_bench.make_peers."""
    dt = gb.torch_dtype(torch, case.dtype)
    wdt = gb.torch_dtype(torch, case.wdtype)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    views = case.views()

    def make(v, dtype, scale=1.0, shift=0.0):
        st = torch.randn((max(1, v.storage),), generator=gen, device=device,
                         dtype=torch.float64 if dtype == torch.float64 else torch.float32)
        if scale != 1.0:
            st.mul_(scale)
        if shift != 0.0:
            st.add_(shift)
        return st.to(dtype).as_strided(v.shape, v.strides, v.offset)

    B = gb.Built()
    shape = case.shape
    op = case.op
    empty = lambda shp: torch.empty(shp, dtype=dt, device=device)  # noqa: E731
    if op == "add_rms_norm":
        w = make(views["w"], wdt, 0.1, 1.0)
        for _ in range(n_sets):
            B.sets.append({"a": make(views["a"], dt), "b": make(views["b"], dt), "y": empty(shape), "r": empty(shape)})
        B.args = lambda k: (B.sets[k]["a"], B.sets[k]["b"], w)
        B.natural, B.eager = gb.make_peers(torch, op, shape, device, w=w)
        B.check_inputs = lambda: [("a", B.sets[0]["a"]), ("b", B.sets[0]["b"]), ("w", w)]

        def lib(k, fresh=False):
            s = B.sets[k]
            return infiniop.add_rms_norm(s["a"], s["b"], w, gb.EPS_RMS, out=None if fresh else (s["y"], s["r"]))
    elif op == "layer_norm":
        w = make(views["w"], dt, 0.1, 1.0)
        bias = make(views["bias"], dt, 0.1) if case.bias else None
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 2.0, 0.5), "o": empty(shape), "xh": empty(shape), "sd": empty(shape[:-1])})
        B.args = lambda k: (B.sets[k]["x"], w, bias)
        natural, eager = gb.make_peers(torch, op, shape, device)
        if bias is None:  # the peers' formulas with a zero bias; native_layer_norm with none
            def nb(f):
                return lambda x, w, b: f(x, w, torch.zeros((), dtype=x.dtype, device=x.device))
            natural = nb(natural)
            eager = {k: nb(f) for k, f in eager.items() if k != "native_layer_norm"}
            eager["native_layer_norm"] = lambda x, w, b: _native_ln_nobias(torch, x, w)
        B.natural, B.eager = natural, eager
        B.check_inputs = lambda: [("x", B.sets[0]["x"]), ("w", w), ("bias", bias)]

        def lib(k, fresh=False):
            s = B.sets[k]
            return infiniop.layer_norm(s["x"], w, bias, gb.EPS_LN, out=None if fresh else (s["o"], s["xh"], s["sd"]))
    elif op == "causal_softmax":
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 2.0), "y": empty(shape)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.natural, B.eager = gb.make_peers(torch, op, shape, device)
        B.check_inputs = lambda: [("x", B.sets[0]["x"])]

        def lib(k, fresh=False):
            s = B.sets[k]
            return (infiniop.causal_softmax(s["x"], out=None if fresh else s["y"]),)
    else:
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 3.0), "y": empty(shape)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.natural, B.eager = gb.make_peers(torch, op, shape, device, contiguous_out=not views["x"].contiguous())
        B.check_inputs = lambda: [("x", B.sets[0]["x"])]
        libfn = infiniop.silu if op == "silu" else infiniop.sigmoid

        def lib(k, fresh=False):
            s = B.sets[k]
            # out= always: a broadcast input's output shape is the case's
            return (libfn(s["x"], out=empty(shape) if fresh else s["y"]),)

        xv = views["x"]
        if not xv.contiguous() and xv.non_overlapping() and xv.offset == 0 and xv.storage == xv.numel():
            # A dense permuted input: torch.silu(x) keeps x's layout (no
            # transposition at all). Timed for information, not as a peer
            # (other work than the contiguous output); the library does
            # the same given such an output (the layouts then coalesce).
            fn = torch.nn.functional.silu if op == "silu" else torch.sigmoid
            B.info = {"eager": lambda k: (fn(B.sets[k]["x"]),),
                      "infiniop": lambda k: (libfn(B.sets[k]["x"], out=torch.empty_like(B.sets[k]["x"])),)}
    B.lib = lib
    return B


def _native_ln_nobias(torch, x, w):
    out, mean, rstd = torch.native_layer_norm(x, (x.shape[-1],), w, None, gb.EPS_LN)
    xhat = torch.sub(x, mean.float()).mul_(rstd.float())
    return out, xhat.to(x.dtype), rstd.float().reciprocal().squeeze(-1).to(x.dtype)


# ---------------------------------------------------------------------- main


class _Stopped(BaseException):  # not caught by the per-implementation "except Exception"
    pass


def _on_sigterm(signum, frame):
    raise _Stopped()


def parse_args(argv):
    p = argparse.ArgumentParser(description="infiniop-c GPU shape sweep against PyTorch eager and torch.compile")
    p.add_argument("--list", action="store_true", help="print the case list with bytes moved, and exit")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (logic check: small cases)")
    p.add_argument("--quick", action="store_true", help="with --device cpu: a few small cases per operator; "
                   "on a GPU: 5 repetitions")
    p.add_argument("--seed", type=int, default=0, help="seed of the random cases (default 0)")
    p.add_argument("--random", type=int, default=16, metavar="N", help="random cases per operator (default 16)")
    p.add_argument("--cases", metavar="REGEX", help="only cases whose name matches")
    p.add_argument("--ops", help="comma-separated operators (default all)")
    p.add_argument("--category", help="comma-separated categories (" + ", ".join(CATEGORIES) + ")")
    p.add_argument("--shard", metavar="K/N", help="run cases K, K+N, K+2N, ... of the run order (0 <= K < N)")
    p.add_argument("--budget", type=float, default=210.0, help="seconds for the whole sweep (default 210)")
    p.add_argument("--compile-budget", type=float, help="seconds after which torch.compile is no longer tried "
                   "(default 0.6 x --budget)")
    p.add_argument("--compile", choices=("static", "off"), default="static",
                   help="torch.compile per case with dynamic=False (default), or off")
    p.add_argument("--reps", type=int, help="timed repetitions (default 7; --quick 5; cpu 3)")
    p.add_argument("--graph-below", type=float, default=8e6, help="bytes under which cases are graph replays (8e6)")
    p.add_argument("--graph-below-us", type=float, default=50.0,
                   help="also graph replays where the same-bytes copy is faster than this (us; default 50)")
    p.add_argument("--out", help="directory for sweep.md, sweep.json, sweep.png (default: $OUT)")
    p.add_argument("--chart", metavar="JSON", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def select(args):
    cs = cases(args.seed, args.random)
    if args.ops:
        want = set(args.ops.split(","))
        bad = want - set(OPS)
        if bad:
            raise SystemExit(f"gpu_sweep: unknown operator(s) {sorted(bad)}; operators: {', '.join(OPS)}")
        cs = [c for c in cs if c.op in want]
    if args.category:
        want = set(args.category.split(","))
        cs = [c for c in cs if c.cat in want]
    if args.cases:
        rx = re.compile(args.cases)
        cs = [c for c in cs if rx.search(c.name)]
    if args.device == "cpu" and args.quick:
        cs = quick_cpu_cases(cs)
    cs = run_order(cs)
    if args.shard:
        k, n = (int(v) for v in args.shard.split("/"))
        if not 0 <= k < n:
            raise SystemExit("gpu_sweep: --shard K/N needs 0 <= K < N")
        cs = cs[k::n]
    return cs


def print_list(cs):
    print(f"{'#':>4s} {'category':9s} {'bytes':>10s}  case")
    per = collections.Counter()
    for i, c in enumerate(cs):
        per[(c.op, c.cat)] += 1
        print(f"{i:4d} {c.cat:9s} {gb.fmt_bytes(c.nbytes()):>10s}  {c.name}" + (f"   [{c.named}]" if c.named else ""))
    print()
    print(f"{len(cs)} cases; per operator and category:")
    for op in OPS:
        n = sum(v for (o, _), v in per.items() if o == op)
        if n:
            print(f"  {op:15s} {n:3d}: " + ", ".join(f"{cat} {per[(op, cat)]}" for cat in CATEGORIES if per[(op, cat)]))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.chart:
        return chart_from_json(args.chart)
    try:
        cs = select(args)
    except re.error as e:
        print(f"gpu_sweep: bad --cases regex: {e}", file=sys.stderr)
        return 2
    if args.list:
        return print_list(cs)
    if not cs:
        print("gpu_sweep: no case selected", file=sys.stderr)
        return 2
    t_start = time.monotonic()
    budget = args.budget
    compile_budget = args.compile_budget if args.compile_budget is not None else 0.6 * budget
    log = gb.log
    warn = gb.warn

    try:
        import torch
    except ImportError as e:
        print(f"gpu_sweep: cannot import torch ({e})", file=sys.stderr)
        return 2
    cpu = args.device == "cpu"
    if cpu:
        device = torch.device("cpu")
    else:
        if not torch.cuda.is_available():
            print(f"gpu_sweep: CUDA is not available (torch {torch.__version__}); use --device cpu --quick "
                  "to check the program on the CPU", file=sys.stderr)
            return 2
        device = torch.device(args.device)
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
    reps = args.reps or (3 if cpu else (5 if args.quick else 7))
    timer = gb.Timer(torch, device, reps=reps, warmup=1, use_graph=True)
    out_dir = args.out or os.environ.get("OUT")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)

    lib_error, lib_path, infiniop = None, None, None
    try:
        import infiniop
        lib_path = infiniop.library_path()
        if not cpu and infiniop.device_count() < 1:
            lib_error = f"the library at {lib_path} sees no NVIDIA device"
    except Exception as e:
        lib_error = f"cannot load infiniop: {str(e).splitlines()[0] if str(e) else type(e).__name__}"

    if not cpu:
        props = torch.cuda.get_device_properties(device)
        l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
        dev_name = props.name
        dev_info = f"{props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB, L2 {l2 / 2**20:.0f} MiB"
    else:
        l2, dev_name = 1 << 20, "cpu"
        dev_info = "CPU (logic check: wall-clock timing of small cases; the numbers mean nothing)"
    commit = os.environ.get("INFINIOP_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                                    cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or None
        except Exception:
            commit = None
    compile_ok = args.compile != "off"
    if compile_ok:
        try:
            import torch._dynamo  # noqa: F401
        except Exception as e:
            compile_ok = False
            warn(f"torch.compile unavailable: {e}")

    log("infiniop-c GPU shape sweep" + (" (CPU logic check)" if cpu else ""))
    log(f"device:  {dev_info}")
    log(f"torch:   {torch.__version__} (CUDA {torch.version.cuda}); python {sys.version.split()[0]}")
    log(f"library: {lib_path or 'n/a'}" + (f"; commit {commit}" if commit else "") + (f"; ERROR {lib_error}" if lib_error else ""))
    log(f"cases:   {len(cs)} (seed {args.seed}, {args.random} random per operator"
        + (f", shard {args.shard}" if args.shard else "") + f"); budget {budget:.0f} s, torch.compile until {compile_budget:.0f} s")
    log(f"timing:  median of {reps}; graph replays under {gb.fmt_bytes(args.graph_below)} or where the copy takes "
        f"< {args.graph_below_us:g} us, else events around back-to-back calls on the stream")
    log("check:   every output element against float64 (library: a mismatch fails the case; peers: noted)")
    log("ratio:   best peer time / infiniop time (>= 1: the library is at least as fast); %copy: same-bytes copy time / infiniop time")
    log("")
    hdr = (f"{'case':52s} {'bytes':>9s} {'how':5s} {'copy':>9s} {'eager':>9s} {'compile':>9s} {'infiniop':>9s} "
           f"{'%copy':>6s} {'ratio':>6s}  check / notes")
    log(hdr)
    log("-" * len(hdr))

    results = []
    stop_reason = None
    # SIGTERM (the timeout of scripts/gpu-check.sh): stop, then write what was measured
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        for ci, case in enumerate(cs):
            nbytes = case.nbytes()
            res = {"case": case.name, "op": case.op, "dtype": case.dtype, "weight_dtype": case.wdtype,
                   "shape": list(case.shape), "category": case.cat, "named": case.named, "layout": case.layout,
                   "weight_layout": case.wlayout, "bias": case.bias,
                   "views": {k: v.as_dict() for k, v in case.views().items()},
                   "bytes": nbytes, "impls": {}, "status": "ok", "errors": [], "notes": []}
            results.append(res)
            elapsed = time.monotonic() - t_start
            if stop_reason or elapsed > budget:
                stop_reason = stop_reason or f"budget of {budget:.0f} s used"
                res["status"] = "not run"
                res["errors"].append(f"not run ({stop_reason})")
                log(f"{case.name[:52]:52s} {gb.fmt_bytes(nbytes):>9s} not run ({stop_reason})")
                continue
            views = case.views()
            es = ITEMSIZE[case.dtype]
            n_out = {"add_rms_norm": 2, "layer_norm": 2, "causal_softmax": 1}.get(case.op, 1)
            ws_bytes = (sum(v.storage for v in views.values()) + n_out * math.prod(case.shape)) * es
            if nbytes < SMALL_BYTES or ws_bytes >= 4 * l2:
                n_sets = 1
            else:
                n_sets = min(8, math.ceil(4 * l2 / ws_bytes))
            if not cpu:
                free, _ = torch.cuda.mem_get_info(device)
                need = n_sets * ws_bytes * 1.5 + 2 * nbytes + 4 * ws_bytes
                if need > 0.8 * free:
                    res["status"] = "not run"
                    res["errors"].append(f"not run (needs ~{gb.fmt_bytes(need)}, {gb.fmt_bytes(free)} free)")
                    log(f"{case.name:52s} {gb.fmt_bytes(nbytes):>9s} not run: memory")
                    continue
            ceil_est = 3.0e12 if not cpu else 5e9
            t_est = max(nbytes / ceil_est, 2e-6)
            graph = (not cpu) and (nbytes < args.graph_below or t_est * 1e6 < args.graph_below_us)
            if graph:
                n_calls = max(1, min(200, int(1e-3 / t_est)))
            else:
                n_calls = max(3, min(200, int(2e-3 / t_est)))
            if cpu:
                n_calls = min(n_calls, 3)
            res.update(buffer_sets=n_sets, calls_per_timing=n_calls, timing="graph" if graph else ("cpu" if cpu else "stream"))

            def record(impl, t, how, note=""):
                res["impls"][impl] = {"time_us": t * 1e6, "gbps": nbytes / t / 1e9, "timing": how, "note": note}

            def fail(impl, msg):
                res["impls"][impl] = {"time_us": None, "error": msg}

            try:
                B = build(torch, case, device, n_sets, infiniop, seed=1234 + ci)
            except Exception as e:
                res["status"] = "failed"
                res["errors"].append(f"setup: {e}")
                warn(f"{case.name}: setup failed: {e}")
                traceback.print_exc()
                continue
            keep = collections.deque(maxlen=n_sets if n_sets > 1 else 0)

            def peer_call(f):
                def call(i):
                    o = f(*B.args(i % n_sets))
                    if n_sets > 1:
                        keep.append(o)
                return call

            def short(e):
                return str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__

            # -- the library: check every element against float64, then time
            lib_ok = True
            if lib_error or infiniop is None:
                fail("infiniop", lib_error or "infiniop unavailable")
                res["status"] = "failed"
                res["errors"].append("infiniop unavailable")
                lib_ok = False
            else:
                try:
                    got = B.lib(0)
                    if not cpu:
                        torch.cuda.synchronize(device)
                    chk = check(torch, case, B.check_inputs(), got)
                    res["check"] = chk.as_dict()
                    if not chk.ok:
                        res["status"] = "failed"
                        res["errors"].append(f"MISMATCH against float64: {chk.text()}")
                        warn(f"{case.name}: MISMATCH against float64: {chk.text()}")
                    del got
                except Exception as e:
                    lib_ok = False
                    fail("infiniop", f"error: {short(e)}")
                    res["status"] = "failed"
                    res["errors"].append(f"infiniop: {short(e)}")
                    warn(f"{case.name}: infiniop failed: {short(e)}")
                    if not cpu:
                        timer._recover()

            # -- copy of the same byte count
            try:
                half = max(1, nbytes // 2)
                cpairs = [(torch.randint(0, 256, (half,), dtype=torch.uint8, device=device),
                           torch.empty(half, dtype=torch.uint8, device=device)) for _ in range(n_sets)]
                t, how, kind = gb.best_copy(timer, torch, cpairs, n_calls, graph)
                record("copy", t, how, kind)
                cpairs = None
            except Exception as e:
                fail("copy", short(e))

            # -- eager: every variant, checked against float64 once; the fastest counts
            best = None
            for vname, f in B.eager.items():
                try:
                    out = f(*B.args(0))
                    pc = check(torch, case, B.check_inputs(), out)
                    del out
                    if not pc.ok:
                        res["notes"].append(f"eager {vname} differs from float64: {pc.text()}")
                    t, how = timer.time(peer_call(f), n_calls, graph, keep.clear)
                    res.setdefault("eager_variants", {})[vname] = t * 1e6
                    if best is None or t < best[0]:
                        best = (t, how, vname)
                except Exception as e:
                    keep.clear()
                    res.setdefault("eager_variants", {})[vname] = None
                    res["notes"].append(f"eager {vname} failed: {short(e)}")
            if best:
                record("eager", best[0], best[1], best[2] if len(B.eager) > 1 else "")
            else:
                fail("eager", "every eager variant failed")

            # -- torch.compile
            if not compile_ok:
                fail("compile", "off (--compile off)" if args.compile == "off" else "torch.compile unavailable")
            elif time.monotonic() - t_start > compile_budget:
                fail("compile", f"skipped: past the compile budget ({compile_budget:.0f} s)")
            else:
                try:
                    torch._dynamo.reset()
                    cf = torch.compile(B.natural, dynamic=False)
                    c0 = time.monotonic()
                    out = cf(*B.args(0))
                    if not cpu:
                        torch.cuda.synchronize(device)
                    compile_s = time.monotonic() - c0
                    note = f"compiled in {compile_s:.1f} s"
                    pc = check(torch, case, B.check_inputs(), out)
                    del out
                    if not pc.ok:
                        note += f"; differs from float64: {pc.text()}"
                    t, how = timer.time(peer_call(cf), n_calls, graph, keep.clear)
                    record("compile", t, how, note)
                except Exception as e:
                    keep.clear()
                    fail("compile", f"n/a: {short(e)}")
                    if not cpu:
                        timer._recover()
                try:
                    torch._dynamo.reset()
                except Exception:
                    pass

            if lib_ok:
                try:
                    t, how = timer.time(lambda i: B.lib(i % n_sets), n_calls, graph)
                    placement = "out="
                    res["lib_placements"] = {"out=": t * 1e6}

                    def fresh_call(i):
                        o = B.lib(i % n_sets, fresh=True)
                        if n_sets > 1:
                            keep.append(o)

                    t2, how2 = timer.time(fresh_call, n_calls, graph, keep.clear)
                    res["lib_placements"]["fresh"] = t2 * 1e6
                    if t2 < t:
                        t, how, placement = t2, how2, "fresh outputs"
                    record("infiniop", t, how, "" if placement == "out=" else placement)
                except Exception as e:
                    fail("infiniop", f"error: {short(e)}")
                    res["status"] = "failed"
                    res["errors"].append(f"infiniop timing: {short(e)}")
                    if not cpu:
                        timer._recover()

            # -- information: outputs in the input's layout (dense permuted silu/sigmoid inputs)
            for iname, f in getattr(B, "info", {}).items():
                try:
                    if iname == "infiniop":
                        pc = check(torch, case, B.check_inputs(), f(0))
                        if not pc.ok:
                            res["status"] = "failed"
                            res["errors"].append(f"MISMATCH (output in x's layout) against float64: {pc.text()}")

                    def info_call(i, f=f):
                        o = f(i % n_sets)
                        if n_sets > 1:
                            keep.append(o)

                    t, _ = timer.time(info_call, n_calls, graph, keep.clear)
                    res.setdefault("same_layout_us", {})[iname] = t * 1e6
                except Exception as e:
                    keep.clear()
                    res["notes"].append(f"{iname} with the output in x's layout failed: {short(e)}")
            if res.get("same_layout_us"):
                res["notes"].append("output in x's layout (information, not a peer): " + ", ".join(
                    f"{k} {v:.2f} us" for k, v in res["same_layout_us"].items()))

            # -- metrics
            li = res["impls"].get("infiniop", {})
            cp = res["impls"].get("copy", {})
            peers = {k: res["impls"][k]["time_us"] for k in ("eager", "compile") if res["impls"].get(k, {}).get("time_us")}
            if li.get("time_us"):
                if cp.get("time_us"):
                    res["pct_copy"] = 100.0 * cp["time_us"] / li["time_us"]
                if peers:
                    bp = min(peers, key=peers.get)
                    res["best_peer"] = bp
                    res["ratio"] = peers[bp] / li["time_us"]

            # -- print
            def cell(impl):
                r = res["impls"].get(impl, {})
                return f"{r['time_us']:9.2f}" if r.get("time_us") else f"{'n/a':>9s}"

            how = {"graph": "graph", "stream": "strm", "cpu": "cpu"}[res["timing"]]
            pct = f"{res['pct_copy']:6.1f}" if "pct_copy" in res else f"{'':6s}"
            ratio = f"{res['ratio']:5.2f}x" if "ratio" in res else f"{'':6s}"
            notes = []
            if "check" in res:
                notes.append(("ok " if res["check"]["ok"] else "MISMATCH ") + f"rel {res['check']['rel_err']:.0e}")
            for impl in ("copy", "eager", "compile", "infiniop"):
                r = res["impls"].get(impl, {})
                if r.get("error"):
                    notes.append(f"{impl}: {r['error']}")
            notes += res["notes"]
            if case.named:
                notes.append(case.named)
            log(f"{case.name[:52]:52s} {gb.fmt_bytes(nbytes):>9s} {how:5s} {cell('copy')} {cell('eager')} {cell('compile')} "
                f"{cell('infiniop')} {pct} {ratio}  {'; '.join(notes)}")

            B = None
            keep.clear()
            gc.collect()
            if not cpu:
                broken = gb.cuda_broken(torch, device)
                if broken:
                    warn(f"the CUDA context is unusable after {case.name} ({broken}); the remaining cases are not run")
                    stop_reason = f"CUDA context unusable: {broken}"
                    continue
                torch.cuda.empty_cache()
    except _Stopped:
        warn("stopped by SIGTERM: writing the cases measured so far")
        if results and results[-1]["status"] == "ok" and not results[-1]["impls"].get("infiniop"):
            results[-1]["status"] = "not run"
            results[-1]["errors"].append("not run (stopped by SIGTERM)")
        done = {r["case"] for r in results}
        for c in cs:
            if c.name not in done:
                results.append({"case": c.name, "op": c.op, "dtype": c.dtype, "shape": list(c.shape), "category": c.cat,
                                "named": c.named, "bytes": c.nbytes(), "impls": {}, "status": "not run",
                                "errors": ["not run (stopped by SIGTERM)"], "notes": []})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    elapsed = time.monotonic() - t_start
    summary = summarize(results)
    log("")
    for line in summary_lines(summary, cpu):
        log(line)
    n_failed = sum(r["status"] == "failed" for r in results)
    n_not_run = sum(r["status"] == "not run" for r in results)
    log(f"sweep: {len(results)} cases, {len(results) - n_not_run} run, {n_not_run} not run, {n_failed} failed; {elapsed:.0f} s")
    if n_failed:
        warn(f"{n_failed} case(s) FAILED (mismatch against float64 or library error)")

    if out_dir:
        doc = {"device": dev_name, "device_info": dev_info, "torch": torch.__version__, "cuda": torch.version.cuda,
               "library": lib_path, "library_error": lib_error, "commit": commit, "cpu_check": cpu,
               "seed": args.seed, "random_per_op": args.random, "shard": args.shard, "reps": reps,
               "budget_s": budget, "compile_budget_s": compile_budget, "elapsed_s": elapsed,
               "targets": {"ratio": 1.0, "big_bytes": BIG_BYTES, "big_pct_copy": BIG_PCT,
                           "small_bytes": SMALL_BYTES, "small_graph_us": SMALL_US},
               "summary": summary, "cases": results}
        jpath = os.path.join(out_dir, "sweep.json")
        with open(jpath, "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(out_dir, "sweep.md"), "w") as f:
            f.write(markdown(doc))
        try:
            cp = subprocess.run([sys.executable, os.path.abspath(__file__), "--chart", jpath],
                                capture_output=True, text=True, timeout=180)
            if cp.returncode != 0:
                log(f"(chart failed: {(cp.stderr.strip().splitlines() or ['?'])[-1]})")
        except Exception as e:
            log(f"(chart failed: {e})")
        log(f"wrote {', '.join(os.path.join(out_dir, n) for n in ('sweep.md', 'sweep.json', 'sweep.png'))}")
    return 1 if n_failed else 0


# ------------------------------------------------------------------- summary


def summarize(results):
    """Per operator: cases run, min and geometric-mean ratio, the targets."""
    out = {}
    for op in OPS:
        rs = [r for r in results if r["op"] == op]
        if not rs:
            continue
        run = [r for r in rs if r["status"] != "not run"]
        ratios = [(r["ratio"], r["case"]) for r in run if r.get("ratio")]
        big = [r for r in run if r["bytes"] >= BIG_BYTES and "pct_copy" in r]
        small = [r for r in run if r["bytes"] < SMALL_BYTES and r["impls"].get("infiniop", {}).get("time_us")
                 and r["impls"]["infiniop"]["timing"] == "graph"]
        s = {"cases": len(rs), "run": len(run), "not_run": len(rs) - len(run),
             "failed": [r["case"] for r in run if r["status"] == "failed"],
             "with_ratio": len(ratios),
             "min_ratio": min(ratios)[0] if ratios else None, "min_ratio_case": min(ratios)[1] if ratios else None,
             "geomean_ratio": math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios)) if ratios else None,
             "behind_best_peer": sorted(((x, c) for x, c in ratios if x < 1.0)),
             "big_cases": len(big), "big_under_pct": [(r["pct_copy"], r["case"]) for r in big if r["pct_copy"] < BIG_PCT],
             "small_cases_graph": len(small),
             "small_over_us": [(r["impls"]["infiniop"]["time_us"], r["case"]) for r in small
                               if r["impls"]["infiniop"]["time_us"] > SMALL_US],
             "peer_failures": sum(1 for r in run for k in ("eager", "compile")
                                  if r["impls"].get(k, {}).get("error", "").startswith(("n/a", "every")))}
        out[op] = s
    return out


def summary_lines(summary, cpu=False):
    L = ["summary per operator" + (" (CPU logic check: the targets are GPU targets; numbers mean nothing)" if cpu else "")
         + f": ratio = best peer / infiniop; big = cases >= {gb.fmt_bytes(BIG_BYTES)} under {BIG_PCT:.0f}% of copy; "
         f"small = cases < {gb.fmt_bytes(SMALL_BYTES)} over {SMALL_US} us in a graph",
         f"  {'operator':15s} {'cases':>5s} {'run':>4s} {'failed':>6s} {'min ratio':>9s} {'geomean':>8s} {'behind':>7s} "
         f"{'big<85%':>9s} {'small>2.5us':>11s}  worst case"]
    for op, s in summary.items():
        mr = f"{s['min_ratio']:.2f}x" if s["min_ratio"] else "n/a"
        gm = f"{s['geomean_ratio']:.2f}x" if s["geomean_ratio"] else "n/a"
        L.append(f"  {op:15s} {s['cases']:5d} {s['run']:4d} {len(s['failed']):6d} {mr:>9s} {gm:>8s} "
                 f"{len(s['behind_best_peer']):3d}/{s['with_ratio']:<3d} {len(s['big_under_pct']):4d}/{s['big_cases']:<4d} "
                 f"{len(s['small_over_us']):5d}/{s['small_cases_graph']:<5d}  {s['min_ratio_case'] or ''}")
    return L


def markdown(doc):
    L = [f"# infiniop-c GPU shape sweep", "",
         f"device: {doc['device_info']}; torch {doc['torch']} (CUDA {doc['cuda']}); commit {doc['commit']}; "
         f"seed {doc['seed']}; {doc['elapsed_s']:.0f} s" + ("; **CPU logic check: the numbers mean nothing**" if doc["cpu_check"] else ""),
         "", "ratio: best peer time / infiniop time (>= 1: at least as fast); % copy: time of a copy moving the same "
         "bytes / infiniop time. Times in us (median).", "", "## Summary", "",
         "| operator | cases | run | failed | min ratio (case) | geomean ratio | behind best peer | >= 64 MB under 85% of copy | < 1 MB over 2.5 us (graph) |",
         "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]
    for op, s in doc["summary"].items():
        mr = f"{s['min_ratio']:.2f}x ({s['min_ratio_case']})" if s["min_ratio"] else "n/a"
        gm = f"{s['geomean_ratio']:.2f}x" if s["geomean_ratio"] else "n/a"
        L.append(f"| {op} | {s['cases']} | {s['run']} | {len(s['failed'])} | {mr} | {gm} | "
                 f"{len(s['behind_best_peer'])} of {s['with_ratio']} | {len(s['big_under_pct'])} of {s['big_cases']} | "
                 f"{len(s['small_over_us'])} of {s['small_cases_graph']} |")
    L += ["", "## Cases missing a target", ""]
    miss = []
    for op, s in doc["summary"].items():
        miss += [f"* {c}: {x:.3f}x the best peer" for x, c in s["behind_best_peer"]]
        miss += [f"* {c}: {p:.0f}% of copy" for p, c in s["big_under_pct"]]
        miss += [f"* {c}: {u:.2f} us in a graph" for u, c in s["small_over_us"]]
        miss += [f"* {c}: FAILED" for c in s["failed"]]
    L += miss or ["(none)"]
    L += ["", "## All cases", "",
          "| case | category | bytes | timed | copy | eager | compile | infiniop | % copy | ratio | check | notes |",
          "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in doc["cases"]:
        def cell(k):
            v = r["impls"].get(k, {})
            return f"{v['time_us']:.2f}" if v.get("time_us") else ("n/a" if k in r["impls"] else "")
        notes = [f"{k}: {r['impls'][k]['error']}" for k in ("copy", "eager", "compile", "infiniop")
                 if r["impls"].get(k, {}).get("error")]
        notes += r.get("notes", []) + [e for e in r["errors"] if not e.startswith("MISMATCH")]
        if r.get("named"):
            notes.append(r["named"])
        ck = r.get("check")
        cks = "" if not ck else (f"ok ({ck['rel_err']:.0e})" if ck["ok"] else f"**MISMATCH** {ck['mismatches']}/{ck['elements']}")
        pct = f"{r['pct_copy']:.1f}" if "pct_copy" in r else ""
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else ""
        cells = [r["case"], r["category"], gb.fmt_bytes(r["bytes"]), r.get("timing", ""), cell("copy"), cell("eager"),
                 cell("compile"), cell("infiniop"), pct, ratio, cks, "; ".join(notes)]
        L.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(L) + "\n"


def chart_from_json(path):
    """sweep.png beside sweep.json: per case, the ratio to the best peer
    (log scale) and the % of the same-bytes copy (no torch needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(path) as f:
        doc = json.load(f)
    rs = [r for r in doc["cases"] if r.get("ratio") or r.get("pct_copy")]
    colors = {"add_rms_norm": "#4c72b0", "layer_norm": "#dd8452", "causal_softmax": "#55a868",
              "silu": "#c44e52", "sigmoid": "#8172b2"}
    n = max(1, len(rs))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(min(60.0, max(10.0, 0.16 * n + 2)), 9), sharex=True)
    xs = list(range(len(rs)))
    for ax, key, ylabel in ((ax1, "ratio", "best peer time / infiniop time"), (ax2, "pct_copy", "% of same-bytes copy")):
        for op, col in colors.items():
            pts = [(i, r[key]) for i, r in enumerate(rs) if r["op"] == op and r.get(key)]
            if pts:
                ax.bar([p[0] for p in pts], [p[1] for p in pts], 0.8, color=col, label=op)
        ax.set_ylabel(ylabel)
    ax1.set_yscale("log")
    ax1.axhline(1.0, color="k", linewidth=0.8)
    ax2.axhline(BIG_PCT, color="k", linestyle="--", linewidth=0.8)
    for i, r in enumerate(rs):
        if r["status"] == "failed":
            ax1.annotate("X", (i, 1.0), ha="center", color="red", fontsize=7)
    ax1.legend(fontsize=8, ncol=5, loc="upper right")
    ax2.set_xticks(xs)
    ax2.set_xticklabels([r["case"] for r in rs], rotation=90, fontsize=5 if n > 60 else 7)
    ax1.set_title(f"infiniop-c shape sweep on {doc['device']}: ratio to the best peer (>= 1: at least as fast) "
                  f"and % of copy (dashed: {BIG_PCT:.0f}%)" + (" [CPU logic check]" if doc.get("cpu_check") else ""),
                  fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(os.path.abspath(path)), "sweep.png"), dpi=110)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
