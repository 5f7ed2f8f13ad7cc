#!/usr/bin/env python3
"""GPU shape sweep: infiniop-c on many shapes, views and dtypes, against
PyTorch eager and torch.compile doing the same work.

bench/gpu_bench.py times 16 chosen cases; this sweep asks whether the
library holds up on the shapes no benchmark names: model hidden sizes that
are not powers of two, odd sequence lengths, few rows with very long D,
decode-sized tensors (1..8 rows), mid-length softmax rows, 3-D and 4-D
tensors, views with any strides (transposed, permuted, sliced, broadcast),
every dtype. Its case list (``cases()``) has per operator the issues' named
cases (``named``), model dimensions (``model``, ``decode``, ``few-rows``,
``heads``), softmax heads x S x T with odd S and T (``softmax``), views
(``view``), dtypes (``dtype``), odd sizes (``odd``), tiny tensors (``tiny``)
and a seeded generator of random shapes, layouts and dtypes (``random``),
from a few bytes to 1 GB moved. ``--list`` prints it with bytes moved.

How each case is measured (bench/gpu_harness.py): the library's output is
checked element by element against float64; the library (best of out= and
fresh outputs), a copy of the same byte count and PyTorch eager
(silu/sigmoid with out= into the library's output tensor; the others with
contiguous outputs) are timed in the same rounds, as CUDA-graph replays for
cases under 8 MB or whose copy takes < 50 us, else events around
back-to-back calls; torch.compile (dynamic=False, .contiguous() outputs,
dynamo reset per case) is timed in a torch-only worker process, after a
parallel precompile of every case's peer has filled inductor's caches.

Targets, per operator: ratio = best peer time / library time >= 1 on every
case (minimum and geometric mean reported); >= 85% of the same-bytes copy
for cases moving >= 64 MB; <= 2.5 us in a graph for cases moving < 1 MB.

Run (repository root, CUDA library in build-gpu/):

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/gpu_sweep.py
        [--shard K/N] [--budget S] [--cases REGEX] [--ops OPS] [--category CATS] [--out DIR]

``--shard K/N`` runs every N-th case of the run order from the K-th (two
shards cover the list in two commands of the GPU machine). Writes the table
to stdout and, with $OUT or --out, sweep.md, sweep.json, sweep.png (ratio to
the best peer and % of copy per case; sweep-chart.txt, a text chart, always).
Without a GPU: ``--device cpu --quick`` runs a few small cases per operator
through the library's CPU backend (the numbers mean nothing).

Exit status: 0 every case that ran matched float64 and raised no library
error; 1 some case failed; 2 it could not run at all.
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import random
import re
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_harness as H  # noqa: E402
from gpu_harness import (BIG_BYTES, BIG_PCT, ITEMSIZE, OPS, SMALL_BYTES, SMALL_US, Case, View,  # noqa: E402,F401
                         chunks, contiguous_strides, fmt_bytes, v_bcast, v_contig, v_permuted, v_sliced,
                         v_transposed, weight_view)

SweepCase = Case
ACT_DTYPES = ("f16", "bf16", "f32", "f64")
NORM_DTYPES = ("f16", "bf16", "f32")
RMS_PAIRS = {"f16": ("f16", "bf16", "f32"), "bf16": ("bf16", "f16", "f32"), "f32": ("f32",)}
MODEL_D = (768, 896, 1280, 1536, 3584, 4096, 5120, 7168, 8192, 14336)
MAX_BYTES = 1.1e9       # the largest case moves ~1 GB
MIN_BYTES = 1e3
CATEGORIES = ("named", "model", "decode", "few-rows", "heads", "softmax", "view", "dtype", "odd", "tiny", "random")

# --------------------------------------------------------------------- cases
# Issue #19's shapes (decode rows, one long row, mid-length softmax, views,
# odd dims) come first in each list: a duplicate keeps its first entry.


def _issue19(op):
    C = lambda *a, **k: Case(op, *a, **k)  # noqa: E731
    L = [C("bf16", (r, 4096), cat="decode") for r in range(1, 9)]
    if op in ("silu", "sigmoid"):
        L += [C("bf16", (1, 65536), cat="few-rows")]
    else:
        L += [C("bf16", (1, 65536), cat="named", named="issue #19: one long row, 4.3-4.9 us"),
              C("f16", (1, 65536), cat="few-rows")]
    if op == "add_rms_norm":
        L += [C("bf16", (256, 65536), cat="named", named="issue #19: 68 us, 68% of copy"),
              C("bf16", (4096, 768), cat="named", named="issue #19: 10.6 vs 9.9 us (compile)")]
    if op == "layer_norm":
        L += [C("bf16", (4096, 768), layout="transposed", cat="named", named="issue #19: transposed input, 30% of copy"),
              C("bf16", (8192, 768), cat="named", named="issue #19: 15.6 vs 14.6 us (compile)")]
    if op in ("add_rms_norm", "layer_norm"):
        L += [C("bf16", (4097, 1023), cat="odd"), C("f16", (999, 3001), cat="odd"), C("bf16", (13, 4099), cat="odd"),
              C("f32", (7, 777), cat="odd"), C("bf16", (3, 5, 1531), cat="odd")]
    if op in ("silu", "sigmoid"):
        L += [C("bf16", (3571, 7814), layout="bcast:0", cat="named",
                named="issue #19: broadcast along dim 0, 113.6 vs 62.4 us (eager)" if op == "silu" else None),
              C("f16", (4099, 1031), cat="odd"), C("bf16", (999, 999), cat="odd"), C("f32", (3, 100003), cat="odd"),
              C("bf16", (4099, 1031), layout="transposed", cat="odd")]
    return L


def _softmax_issue19():
    C = lambda *a, **k: Case("causal_softmax", *a, **k)  # noqa: E731
    L = [C("f16", (12, 197, 197), cat="named", named="issue #19: 3.65 vs 2.72 us (compile)"),
         C("bf16", (32, 7, 1031), cat="named", named="issue #19: 3.59 vs 3.06 us (compile)"),
         C("f16", (40, 777, 777), cat="named", named="issue #19: 64.5 vs 38.2 us (compile), 49% of copy"),
         C("bf16", (2, 16, 1500, 1500), cat="named", named="issue #19: 160 us, 49% of copy"),
         C("bf16", (1, 65536), cat="named", named="issue #19: one long row")]
    L += [C("bf16", (r, 4096), cat="decode") for r in range(1, 9)]
    L += [C("f16", (32, 7, 1031), cat="softmax"), C("bf16", (40, 777, 777), cat="softmax"),
          C("bf16", (12, 197, 197), cat="softmax"), C("f16", (1, 65536), cat="few-rows"),
          C("bf16", (7, 129, 3001), cat="odd"), C("f16", (3, 1001, 1001), cat="odd")]
    return L


def _norm_fixed(op):
    C = lambda *a, **k: Case(op, *a, **k)  # noqa: E731
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
    C = lambda *a, **k: Case("causal_softmax", *a, **k)  # noqa: E731
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
    C = lambda *a, **k: Case(op, *a, **k)  # noqa: E731
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
        c = Case(op, dtype, shape, cat="random", layout=layout, **kw)
        if MIN_BYTES <= c.nbytes() <= MAX_BYTES and c.input_view().storage * ITEMSIZE[dtype] <= MAX_BYTES:
            return c


def cases(seed=0, n_random=16):
    """Every sweep case, deterministic for a seed: the fixed list of each
    operator, then n_random random cases per operator (duplicates dropped)."""
    out = []
    for op in OPS:
        if op in ("add_rms_norm", "layer_norm"):
            fixed = _issue19(op) + _norm_fixed(op)
        elif op == "causal_softmax":
            fixed = _softmax_issue19() + _softmax_fixed()
        else:
            fixed = _issue19(op) + _act_fixed(op)
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



# ---------------------------------------------------------------------- main


def parse_args(argv):
    p = argparse.ArgumentParser(description="infiniop-c GPU shape sweep against PyTorch eager and torch.compile")
    p.add_argument("--list", action="store_true", help="print the case list with bytes moved, and exit")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N, or cpu (logic check: small cases)")
    p.add_argument("--quick", action="store_true", help="with --device cpu: a few small cases per operator; "
                   "on a GPU: 5 timing rounds")
    p.add_argument("--seed", type=int, default=0, help="seed of the random cases (default 0)")
    p.add_argument("--random", type=int, default=16, metavar="N", help="random cases per operator (default 16)")
    p.add_argument("--cases", metavar="REGEX", help="only cases whose name matches")
    p.add_argument("--ops", help="comma-separated operators (default all)")
    p.add_argument("--category", help="comma-separated categories (" + ", ".join(CATEGORIES) + ")")
    p.add_argument("--shard", metavar="K/N", help="run cases K, K+N, K+2N, ... of the run order (0 <= K < N)")
    p.add_argument("--budget", type=float, default=3600.0,
                   help="seconds for the whole sweep; cases not started by then are 'not run' (default 3600)")
    p.add_argument("--compile-budget", type=float,
                   help="seconds the parallel precompile of the compile peers may take (default 0.5 x --budget)")
    p.add_argument("--compile", choices=("static", "off"), default="static",
                   help="torch.compile per case with dynamic=False (default), or off")
    p.add_argument("--processes", type=int, help="precompile processes (default: half the cores, at most 8)")
    p.add_argument("--reps", type=int, help="timing rounds (default 7; --quick 5; cpu 3)")
    p.add_argument("--graph-below", type=float, default=8e6, help="bytes under which cases are graph replays (8e6)")
    p.add_argument("--graph-below-us", type=float, default=50.0,
                   help="also graph replays where the same-bytes copy is faster than this (us; default 50)")
    p.add_argument("--out", help="directory for sweep.md, sweep.json, sweep.png (default: $OUT)")
    p.add_argument("--merge", nargs="+", metavar="JSON", help="join the sweep.json files of several shards into one "
                   "sweep.md/.json/.png in --out (no GPU needed)")
    p.add_argument("--compare", nargs=2, metavar=("BASE_JSON", "JSON"),
                   help="case by case, a sweep.json against an earlier one (no GPU needed): compare.md in --out, "
                   "and the cases slower beyond --tolerance as a --cases regex")
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="with --compare: a case counts as slower when its time and its time over the same-bytes copy "
                   "of its own run both grew by more than this fraction (default 0.05)")
    p.add_argument("--chart", metavar="JSON", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def merge(paths, out_dir):
    """One report from the sweep.json of several shards (cases in the order
    given; the summary recomputed over all of them). A case in more than one
    file keeps its first run: a later file's run replaces a 'not run' entry
    (the cases a budget left, run in a second command with --cases)."""
    import json
    docs = [json.load(open(p)) for p in paths]
    at, cs = {}, []
    for d in docs:
        for r in d["cases"]:
            i = at.get(r["case"])
            if i is None:
                at[r["case"]] = len(cs)
                cs.append(r)
            elif cs[i]["status"] == "not run" and r["status"] != "not run":
                cs[i] = r
    doc = dict(docs[0], cases=cs, summary=H.summarize(cs), shard="merged: " + ", ".join(str(d.get("shard")) for d in docs),
               elapsed_s=sum(d.get("elapsed_s", 0.0) for d in docs),
               commit=", ".join(sorted({str(d.get("commit")) for d in docs})))
    os.makedirs(out_dir, exist_ok=True)
    files = H.write_outputs(out_dir, "sweep", doc, "infiniop-c GPU shape sweep", os.path.abspath(__file__))
    for line in H.summary_lines(doc["summary"], doc.get("cpu_check")):
        print(line)
    n_not_run = sum(r["status"] == "not run" for r in cs)
    n_failed = sum(r["status"] == "failed" for r in cs)
    print(f"sweep: {len(cs)} cases, {len(cs) - n_not_run} run, {n_not_run} not run, {n_failed} failed; "
          f"{doc['elapsed_s']:.0f} s (shards together)")
    print(f"wrote {', '.join(files)}")
    return 1 if n_failed else 0


def compare(base_path, path, out_dir, tol):
    """Case by case, the library's time in one sweep against an earlier one.
    A case is slower when its time grew by more than tol AND its time over
    the copy of the same bytes, timed in its own run's rounds, grew by more
    than tol: the second ratio takes out a card or clock that differs
    between the two runs. Slower cases are candidates, to be timed again
    against the baseline build in one process (scripts/gpu-compare.sh)."""
    import json
    docs = [json.load(open(p)) for p in (base_path, path)]
    by = [{r["case"]: r for r in d["cases"] if r["status"] == "ok"} for d in docs]

    def t(r, impl):
        return r["impls"].get(impl, {}).get("time_us")
    rows, slower = [], []
    for name, r in by[1].items():
        b = by[0].get(name)
        if b is None or not (t(r, "infiniop") and t(b, "infiniop")):
            continue
        tr = t(r, "infiniop") / t(b, "infiniop")
        cr = tr * t(b, "copy") / t(r, "copy") if t(r, "copy") and t(b, "copy") else tr
        rows.append((tr, cr, name, t(b, "infiniop"), t(r, "infiniop")))
        if tr > 1 + tol and cr > 1 + tol:
            slower.append(name)
    rows.sort(reverse=True)
    gm = math.exp(sum(math.log(x[0]) for x in rows) / len(rows)) if rows else float("nan")
    lines = ["# Sweep against sweep", "", f"base: {docs[0].get('commit')} ({docs[0].get('device_info')}); "
             f"new: {docs[1].get('commit')} ({docs[1].get('device_info')})", "",
             f"{len(rows)} cases in both; time new / base, geometric mean {gm:.3f}; slower (time and time over "
             f"copy both up by more than {tol:.0%}): {len(slower)}", "",
             "| case | base (us) | new (us) | new / base | over copy: new / base |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {n} | {b:.2f} | {v:.2f} | {x:.3f} | {c:.3f} |" for x, c, n, b, v in rows]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[2:5]))
    for x, c, n, b, v in rows[:15]:
        print(f"  {n:55s} {b:9.2f} {v:9.2f}  {x:.3f}  {c:.3f}")
    print("slower:", "^(" + "|".join(re.escape(n) for n in slower) + ")$" if slower else "none")
    return 0


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
        print(f"{i:4d} {c.cat:9s} {fmt_bytes(c.nbytes()):>10s}  {c.name}" + (f"   [{c.named}]" if c.named else ""))
    print()
    print(f"{len(cs)} cases; per operator and category:")
    for op in OPS:
        n = sum(v for (o, _), v in per.items() if o == op)
        if n:
            print(f"  {op:15s} {n:3d}: " + ", ".join(f"{cat} {per[(op, cat)]}" for cat in CATEGORIES if per[(op, cat)]))
    return 0


def seed_of(case):
    """A case's input seed, from its name (the compile worker rebuilds the same data)."""
    return 1234 + zlib.crc32(case.name.encode()) % 100000


HDR = (f"{'case':52s} {'bytes':>9s} {'how':5s} {'copy':>9s} {'eager':>9s} {'compile':>9s} {'infiniop':>9s} "
       f"{'%copy':>6s} {'ratio':>6s}  check / notes")


def print_case(r):
    if r["status"] == "not run":
        H.log(f"{r['case'][:52]:52s} {fmt_bytes(r['bytes']):>9s} {'; '.join(r['errors'])}")
        return

    def cell(impl):
        v = r["impls"].get(impl, {})
        return f"{v['time_us']:9.2f}" if v.get("time_us") else f"{'n/a':>9s}"
    how = {"graph": "graph", "stream": "strm", "cpu": "cpu"}.get(r.get("timing"), "-")
    pct = f"{r['pct_copy']:6.1f}" if "pct_copy" in r else f"{'':6s}"
    ratio = f"{r['ratio']:5.2f}x" if "ratio" in r else f"{'':6s}"
    notes = []
    if "check" in r:
        notes.append(("ok " if r["check"]["ok"] else "MISMATCH ") + f"rel {r['check']['rel_err']:.0e}")
    notes += [f"{k}: {r['impls'][k]['error']}" for k in ("copy", "eager", "compile", "infiniop")
              if r["impls"].get(k, {}).get("error")]
    notes += r["notes"] + ([r["named"]] if r.get("named") else [])
    H.log(f"{r['case'][:52]:52s} {fmt_bytes(r['bytes']):>9s} {how:5s} {cell('copy')} {cell('eager')} {cell('compile')} "
          f"{cell('infiniop')} {pct} {ratio}  {'; '.join(notes)}")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.chart:
        return H.chart_from_json(args.chart, "sweep.png")
    if args.merge:
        return merge(args.merge, args.out or os.environ.get("OUT") or ".")
    if args.compare:
        return compare(*args.compare, args.out or os.environ.get("OUT") or ".", args.tolerance)
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
    reps = args.reps or (3 if args.device == "cpu" else (5 if args.quick else 7))
    env, out_dir = H.start("gpu_sweep", args.device, reps, args.out)
    if env is None:
        return 2
    env.header("infiniop-c GPU shape sweep" + (" (CPU logic check)" if env.cpu else ""),
               f"median of {reps} rounds; graph replays under {fmt_bytes(args.graph_below)} or where the copy takes "
               f"< {args.graph_below_us:g} us, else events around back-to-back calls on the stream")
    H.log(f"cases:   {len(cs)} (seed {args.seed}, {args.random} random per operator"
          + (f", shard {args.shard}" if args.shard else "") + f"); budget {args.budget:.0f} s")
    H.log("")
    budget = args.budget
    results, elapsed = H.run(
        env, cs, budget=budget, compile_on=args.compile != "off", seed_of=seed_of, print_case=print_case,
        opts={"graph_below": args.graph_below, "graph_below_us": args.graph_below_us,
              "compile_off_reason": "off (--compile off)"},
        precompile_share=(args.compile_budget / budget) if args.compile_budget else 0.5, processes=args.processes)
    summary = H.summarize(results)
    H.log("")
    for line in H.summary_lines(summary, env.cpu):
        H.log(line)
    n_failed = sum(r["status"] == "failed" for r in results)
    n_not_run = sum(r["status"] == "not run" for r in results)
    H.log(f"sweep: {len(results)} cases, {len(results) - n_not_run} run, {n_not_run} not run, {n_failed} failed; "
          f"{elapsed:.0f} s")
    if n_failed:
        H.warn(f"{n_failed} case(s) FAILED (mismatch against float64 or library error)")
    if out_dir:
        doc = dict(env.doc(), seed=args.seed, random_per_op=args.random, shard=args.shard, budget_s=budget,
                   elapsed_s=elapsed, summary=summary, cases=results,
                   targets={"ratio": 1.0, "big_bytes": BIG_BYTES, "big_pct_copy": BIG_PCT,
                            "small_bytes": SMALL_BYTES, "small_graph_us": SMALL_US})
        files = H.write_outputs(out_dir, "sweep", doc, "infiniop-c GPU shape sweep", os.path.abspath(__file__))
        H.log(f"wrote {', '.join(files)}")
    return 1 if n_failed else 0


if __name__ == "__main__":
    sys.exit(main())
