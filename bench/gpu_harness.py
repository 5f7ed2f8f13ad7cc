"""The GPU measurement harness shared by bench/gpu_bench.py (16 chosen
cases) and bench/gpu_sweep.py (the shape sweep): one case model, one way to
build a case's tensors and its peers, one float64 check, one timing loop and
one report of ratios. The scripts keep only their case lists and reports.

Case model (``Case``): operator, dtypes, shape, the input's layout
(contig | transposed | permuted:<order> | sliced:<pad>,<row_step>,<col_step>,<offset>
| bcast:<dim>) and, for the norms, the weight's (contig | strided | bcast).
Outputs are always contiguous, as the library writes them.

Peers do the library's work (same inputs, same output layout):

* ``eager``: PyTorch eager, the fastest listed variant. silu/sigmoid write
  into the case's own preallocated contiguous output with ``out=``
  (``torch.sigmoid(x, out=y)``), as the library is called; the norms and
  softmax return contiguous outputs (``.contiguous()`` on each).
* ``compile``: ``torch.compile(lambda *a: tuple(o.contiguous() for o in
  f(*a)), dynamic=False)`` of the natural function, after a
  ``torch._dynamo.reset()`` for every case (no case runs another case's
  graph, and the recompile limit never turns a peer into eager). It runs in
  a separate torch-only worker process (``PeerWorker``) that never loads
  the library, so nothing the library or its Python package does to a
  process can touch the compile peer; a pool of such processes compiles the
  cases in parallel first (``precompile``), which fills inductor's on-disk
  caches, so the timing worker only loads compiled graphs.

Timing (``Timer.rounds``): every implementation of a case is captured as
its own CUDA graph of N back-to-back calls (or, for large cases, N calls
on the stream), and the implementations are replayed in turn, round after
round: the library, the same-bytes copy and the eager peer are timed in the
same rounds, so a drift of clocks or of memory placement touches all alike.
Median of the rounds per implementation. Cases under 1 MB run on one buffer
set (L2-resident, as in a model); larger ones whose working set is not well
above L2 rotate over up to 8 sets.

ratio = best peer time / library time (>= 1: the library is at least as
fast); % copy = same-bytes copy time / library time.
"""

from __future__ import annotations

import collections
import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback

EPS_RMS = 1e-6
EPS_LN = 1e-5
OPS = ("add_rms_norm", "layer_norm", "causal_softmax", "silu", "sigmoid")
ITEMSIZE = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8}
CHECK_CHUNK = 1 << 25   # elements of float64 reference computed at once (whole rows / S x T slices)

BIG_BYTES = 64e6        # cases moving >= 64 MB: >= 85% of copy
BIG_PCT = 85.0
SMALL_BYTES = 1e6       # cases moving < 1 MB: <= 2.5 us in a graph
SMALL_US = 2.5

# ------------------------------------------------------------------ output


class Log:
    def __init__(self):
        self.lines = []

    def __call__(self, s=""):
        print(s, flush=True)
        self.lines.append(s)


log = Log()


def warn(s):
    log(f"!!! {s}")


def git_commit(where):
    """HEAD's short hash, with "+changes" when the tracked files differ from
    it: a copied tree can carry a stale .git (the GPU machine's copy did),
    and a record must not name a commit whose code it did not run. Pass
    INFINIOP_COMMIT to name the commit explicitly."""
    try:
        run = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, timeout=20, cwd=where)
        head = run("rev-parse", "--short", "HEAD").stdout.strip()
        if not head:
            return None
        return head if run("diff", "--quiet", "HEAD", "--").returncode == 0 else head + "+changes"
    except Exception:
        return None


def short(e, n=160):
    s = str(e).strip()
    return s.splitlines()[0][:n] if s else type(e).__name__


def fmt_bytes(b):
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{int(b)} B"


# ------------------------------------------------------------------- views


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
        span = 0
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


# ------------------------------------------------------------------- cases


def min_bytes(op, dtype, wdtype, shape):
    """The fewest bytes the operation must move through memory (contiguous
    inputs, each read once; each output written once)."""
    es, ws = ITEMSIZE[dtype], ITEMSIZE[wdtype]
    n = math.prod(shape)
    if op == "add_rms_norm":  # read a, b, weight; write y, residual_out
        return 4 * n * es + shape[-1] * ws
    if op == "layer_norm":  # read x, weight, bias; write output, xhat, std
        d = shape[-1]
        return 3 * n * es + 2 * d * es + (n // d) * es
    if op == "causal_softmax":  # read the visible part of x; write all of y
        s, t = shape[-2], shape[-1]
        batch = n // (s * t)
        visible = s * (t - s + 1) + s * (s - 1) // 2
        return batch * visible * es + n * es
    if op in ("silu", "sigmoid"):
        return 2 * n * es
    raise ValueError(op)


class Case:
    """One measured case. cat: the sweep's category; named: why the case is
    listed (an issue's figure); decode: the bench's decode cases (target: a
    time, not a share of copy); target_pct: the bench's share-of-copy target;
    tiny: the shape a CPU dry run uses instead."""

    def __init__(self, op, dtype, shape, *, cat="model", wdtype=None, layout="contig", wlayout="contig", bias=True,
                 named=None, decode=False, target_pct=None, tiny=None):
        self.op, self.dtype, self.shape = op, dtype, tuple(shape)
        self.wdtype = wdtype or dtype
        self.cat, self.layout, self.wlayout, self.bias, self.named = cat, layout, wlayout, bias, named
        self.decode, self.target_pct = decode, target_pct
        self.tiny = tuple(tiny) if tiny else None

    def with_shape(self, shape):
        c = Case(self.op, self.dtype, shape, cat=self.cat, wdtype=self.wdtype, layout=self.layout, wlayout=self.wlayout,
                 bias=self.bias, named=self.named, decode=self.decode, target_pct=self.target_pct)
        c.label = self.name
        return c

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
        """The fewest bytes the operation must move (a broadcast input counts
        its distinct elements, an absent bias none)."""
        es = ITEMSIZE[self.dtype]
        if self.op in ("silu", "sigmoid"):
            return (self.input_view().unique() + math.prod(self.shape)) * es
        b = min_bytes(self.op, self.dtype, self.wdtype, self.shape)
        if self.op == "layer_norm" and not self.bias:
            b -= self.shape[-1] * es
        return b

    @property
    def name(self):
        if getattr(self, "label", None):
            return self.label
        dt = self.dtype if self.wdtype == self.dtype else f"{self.dtype}/{self.wdtype}"
        shp = "x".join(map(str, self.shape)) if self.shape else "scalar"
        s = f"{self.op} {dt} {shp}"
        if self.layout != "contig":
            s += f" {self.layout}"
        if self.wlayout != "contig":
            s += f" w:{self.wlayout}"
        if not self.bias:
            s += " nobias"
        if self.decode:
            s += " decode"
        return s

    def key(self):
        return (self.op, self.dtype, self.wdtype, self.shape, self.layout, self.wlayout, self.bias)

    def spec(self):
        """A plain dict that rebuilds the case (for the peer workers)."""
        return {"op": self.op, "dtype": self.dtype, "shape": list(self.shape), "cat": self.cat, "wdtype": self.wdtype,
                "layout": self.layout, "wlayout": self.wlayout, "bias": self.bias, "decode": self.decode,
                "label": getattr(self, "label", None)}

    @staticmethod
    def from_spec(d):
        c = Case(d["op"], d["dtype"], d["shape"], cat=d["cat"], wdtype=d["wdtype"], layout=d["layout"],
                 wlayout=d["wlayout"], bias=d["bias"], decode=d["decode"])
        if d.get("label"):
            c.label = d["label"]
        return c


# ----------------------------------------------------------- dtypes, checks


def torch_dtype(torch, name):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64}[name]


def tolerances(name):
    # (rtol, atol): about two units in the last place of the output type
    return {"bf16": (1.6e-2, 1e-2), "f16": (2e-3, 1e-3), "f32": (1e-4, 1e-5), "f64": (1e-10, 1e-12)}[name]


def chunks(shape, keep, limit=CHECK_CHUNK):
    """Index tuples (of slices over the leading dims) that cover a tensor of
    this shape with pieces of at most `limit` elements, never splitting the
    last `keep` dimensions."""
    shape = list(shape)
    keep = min(keep, len(shape))
    inner = math.prod(shape[len(shape) - keep:])
    lead = shape[:len(shape) - keep]

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
        return (r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + EPS_RMS) * w, r)
    if op == "layer_norm":
        x, w, bias = ins
        mean = x.mean(-1, keepdim=True)
        var = (x - mean).pow(2).mean(-1, keepdim=True)
        std = torch.sqrt(var + EPS_LN)
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
    rtol, atol = tolerances(case.dtype)
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
            if not gi.is_contiguous():
                res.ok = False
                res.first = f"output {k} is not contiguous (strides {tuple(g.stride())})"
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


# -------------------------------------------------------------------- peers


def _contig(f):
    """The outputs of f as contiguous tensors (the library's layout)."""
    def g(*a):
        return tuple(o.contiguous() for o in f(*a))
    return g


def make_peers(torch, case, w=None):
    """(natural, {variant: fn(set k) -> outputs}) for a built case.
    natural(*args) is what torch.compile gets (wrapped to contiguous
    outputs); the eager variants take the same args plus, for silu/sigmoid,
    the set's preallocated output."""
    F = torch.nn.functional
    op = case.op
    if op == "add_rms_norm":
        w32 = w.float()

        def natural(a, b, w):
            r = a.float() + b.float()
            y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + EPS_RMS) * w
            return y.to(a.dtype), r.to(a.dtype)

        def fused(a, b, w):
            r = a.float() + b.float()
            return F.rms_norm(r, (r.shape[-1],), w32, EPS_RMS).to(a.dtype), r.to(a.dtype)

        return natural, {"natural": _contig(natural), "F.rms_norm": _contig(fused)}
    if op == "layer_norm":
        def natural(x, w, b):
            xf = x.float()
            var, mean = torch.var_mean(xf, dim=-1, correction=0, keepdim=True)
            std = torch.sqrt(var + EPS_LN)
            xhat = (xf - mean) / std
            out = xhat * w + (b if b is not None else 0.0)
            return out.to(x.dtype), xhat.to(x.dtype), std.squeeze(-1).to(x.dtype)

        def native(x, w, b):
            out, mean, rstd = torch.native_layer_norm(x, (x.shape[-1],), w, b, EPS_LN)
            mean, rstd = mean.float(), rstd.float()
            xhat = torch.sub(x, mean).mul_(rstd)
            return out, xhat.to(x.dtype), rstd.reciprocal().squeeze(-1).to(x.dtype)

        return natural, {"var_mean": _contig(natural), "native_layer_norm": _contig(native)}
    if op == "causal_softmax":
        S, T = case.shape[-2], case.shape[-1]

        def natural(x):
            # the mask from indices (row i sees j <= i + T - S): fused by inductor
            s, t = x.shape[-2], x.shape[-1]
            i = torch.arange(s, device=x.device).unsqueeze(-1)
            j = torch.arange(t, device=x.device)
            xm = x.masked_fill(j > i + (t - s), float("-inf"))
            return (torch.softmax(xm, dim=-1, dtype=torch.float32).to(x.dtype),)

        hidden = {}

        def mask(x):
            if x.device not in hidden:
                hidden[x.device] = ~torch.ones((S, T), dtype=torch.bool, device=x.device).tril(diagonal=T - S)
            return hidden[x.device]

        def masked(x):
            return (torch.softmax(x.masked_fill(mask(x), float("-inf")), dim=-1, dtype=torch.float32).to(x.dtype),)

        def masked_native(x):  # softmax in the input's dtype (float accumulation inside), no float32 copy
            return (torch.softmax(x.masked_fill(mask(x), float("-inf")), dim=-1),)

        return natural, {"masked_fill+softmax(f32)": _contig(masked), "masked_fill+softmax": _contig(masked_native)}
    if op in ("silu", "sigmoid"):
        fn = F.silu if op == "silu" else torch.sigmoid
        aten_out = torch.ops.aten.silu.out if op == "silu" else torch.ops.aten.sigmoid.out

        def natural(x):
            return (fn(x),)

        # out= into the case's own contiguous output, as the library is called
        return natural, {f"{op}(x, out=y)": "out"}, aten_out
    raise ValueError(op)


class Built:
    """One case's tensors and the callables that compute it.

    sets[k]: the k-th buffer set (inputs and the outputs); args(k): the
    peers' inputs for set k; eager: {variant: fn(k) -> outputs};
    natural: the function torch.compile gets (outputs made contiguous);
    lib(k) -> outputs written into set k's outputs (lib(k, fresh=True):
    into outputs the allocator hands out at each call, as the peers').
    check_inputs(): [(name, tensor)] of set 0 for the float64 check."""

    def __init__(self):
        self.sets, self.args, self.eager, self.natural, self.lib, self.check_inputs = [], None, {}, None, None, None


def build(torch, case, device, n_sets, infiniop=None, seed=1234):
    """Sets of inputs laid out as the case's views (drawn from a generator
    seeded with `seed`: the peer workers rebuild the same data), contiguous
    outputs, the peers, and (infiniop given) the library call."""
    dt = torch_dtype(torch, case.dtype)
    wdt = torch_dtype(torch, case.wdtype)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    views = case.views()
    shape, op = case.shape, case.op

    def make(v, dtype, scale=1.0, shift=0.0):
        st = torch.randn((max(1, v.storage),), generator=gen, device=device,
                         dtype=torch.float64 if dtype == torch.float64 else torch.float32)
        if scale != 1.0:
            st.mul_(scale)
        if shift != 0.0:
            st.add_(shift)
        return st.to(dtype).as_strided(v.shape, v.strides, v.offset)

    def empty(shp):
        return torch.empty(shp, dtype=dt, device=device)

    B = Built()
    lib = None
    if op == "add_rms_norm":
        w = make(views["w"], wdt, 0.1, 1.0)
        for _ in range(n_sets):
            B.sets.append({"a": make(views["a"], dt), "b": make(views["b"], dt), "y": empty(shape), "r": empty(shape)})
        B.args = lambda k: (B.sets[k]["a"], B.sets[k]["b"], w)
        B.check_inputs = lambda: [("a", B.sets[0]["a"]), ("b", B.sets[0]["b"]), ("w", w)]
        natural, eager = make_peers(torch, case, w=w)
        if infiniop is not None:
            def lib(k, fresh=False):
                s = B.sets[k]
                return infiniop.add_rms_norm(s["a"], s["b"], w, EPS_RMS, out=None if fresh else (s["y"], s["r"]))
    elif op == "layer_norm":
        w = make(views["w"], dt, 0.1, 1.0)
        bias = make(views["bias"], dt, 0.1) if case.bias else None
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 2.0, 0.5), "o": empty(shape), "xh": empty(shape),
                           "sd": empty(shape[:-1])})
        B.args = lambda k: (B.sets[k]["x"], w, bias)
        B.check_inputs = lambda: [("x", B.sets[0]["x"]), ("w", w), ("bias", bias)]
        natural, eager = make_peers(torch, case)
        if infiniop is not None:
            def lib(k, fresh=False):
                s = B.sets[k]
                return infiniop.layer_norm(s["x"], w, bias, EPS_LN, out=None if fresh else (s["o"], s["xh"], s["sd"]))
    elif op == "causal_softmax":
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 2.0), "y": empty(shape)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.check_inputs = lambda: [("x", B.sets[0]["x"])]
        natural, eager = make_peers(torch, case)
        if infiniop is not None:
            def lib(k, fresh=False):
                s = B.sets[k]
                return (infiniop.causal_softmax(s["x"], out=None if fresh else s["y"]),)
    else:
        for _ in range(n_sets):
            B.sets.append({"x": make(views["x"], dt, 3.0), "y": empty(shape)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.check_inputs = lambda: [("x", B.sets[0]["x"])]
        natural, names, aten_out = make_peers(torch, case)
        # out= into set k's own output tensor: the one the library writes
        B.eager = {n: (lambda k: (aten_out(B.sets[k]["x"], out=B.sets[k]["y"]),)) for n in names}
        eager = None
        if infiniop is not None:
            libfn = infiniop.silu if op == "silu" else infiniop.sigmoid

            def lib(k, fresh=False):
                s = B.sets[k]
                # out= always: a broadcast input's output shape is the case's
                return (libfn(s["x"], out=empty(shape) if fresh else s["y"]),)
    if eager is not None:
        B.eager = {n: (lambda k, f=f: f(*B.args(k))) for n, f in eager.items()}
    B.natural = _contig(natural)
    B.lib = lib
    return B


# ------------------------------------------------------------------- timing


class Timer:
    """Times implementations fn(i) (i: the call's index, for buffer
    rotation) in shared rounds: CUDA graphs of n_calls calls each (or
    n_calls calls on the stream), replayed in turn, reps rounds; on the CPU
    wall clock."""

    def __init__(self, torch, device, reps):
        self.torch, self.device, self.reps = torch, device, reps
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def recover(self):
        torch = self.torch
        try:
            self.sync()
        except Exception:
            pass
        gc.collect()
        if self.cuda:
            try:
                torch.cuda.empty_cache()
            except Exception:
                pass

    def _warm(self, fn, n):
        torch = self.torch
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for i in range(n):
                fn(i)
        torch.cuda.current_stream(self.device).wait_stream(side)
        self.sync()

    def rounds(self, impls, n_calls, graph):
        """impls: {name: (fn, cleanup or None)}. Returns {name: (seconds per
        call, how timed) or Exception}. Graph capture that fails for one
        implementation times it on the stream, in the same rounds."""
        torch = self.torch
        out = {}
        if not self.cuda:
            for name, (fn, cleanup) in impls.items():
                try:
                    fn(0)
                    ts = []
                    for _ in range(self.reps):
                        t0 = time.perf_counter()
                        for i in range(n_calls):
                            fn(i)
                        ts.append((time.perf_counter() - t0) / n_calls)
                    out[name] = (statistics.median(ts), "cpu")
                except Exception as e:
                    out[name] = e
                finally:
                    if cleanup:
                        cleanup()
            return out
        runners = {}  # name -> (replay callable, how)
        graphs = []
        for name, (fn, cleanup) in impls.items():
            try:
                self._warm(fn, max(2, min(n_calls, 4)))
                if cleanup:
                    cleanup()
            except Exception as e:
                out[name] = e
                if cleanup:
                    cleanup()
                self.recover()
                continue
            if graph:
                g = torch.cuda.CUDAGraph()
                try:
                    with torch.cuda.graph(g):
                        for i in range(n_calls):
                            fn(i)
                    g.replay()
                    self.sync()
                    graphs.append(g)
                    runners[name] = (g.replay, "graph")
                    continue
                except Exception as e:
                    del g
                    if cleanup:
                        cleanup()
                    self.recover()
                    how = f"stream (graph capture failed: {short(e, 100)})"
            else:
                how = "stream"

            def run(fn=fn, cleanup=cleanup):
                for i in range(n_calls):
                    fn(i)
                if cleanup:
                    cleanup()
            try:
                run()
                self.sync()
                runners[name] = (run, how)
            except Exception as e:
                out[name] = e
                self.recover()
        ev = {n: [] for n in runners}
        try:
            for _ in range(self.reps):
                for name, (run, _) in runners.items():
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    run()
                    e.record()
                    ev[name].append((s, e))
            self.sync()
            for name, (run, how) in runners.items():
                out[name] = (statistics.median(s.elapsed_time(e) for s, e in ev[name]) * 1e-3 / n_calls, how)
        except Exception as e:
            for name in runners:
                out.setdefault(name, e)
        finally:
            for name, (fn, cleanup) in impls.items():
                if cleanup:
                    cleanup()
            del graphs[:]
            runners.clear()
            self.recover()
        return out


def copy_impls(torch, pairs):
    """Three ways to copy each (src, dst) pair of uint8 buffers (rotated by
    call index): copy_ (cudaMemcpyAsync), clone() (a destination from the
    allocator at each call, as fresh outputs are) and PyTorch's elementwise
    kernel (int32 -> float32 of the same bytes: a copy's traffic). Where the
    destination sits relative to the source changes the rate by up to 1.5x
    on an H200 (bench/NOTES.md): the ceiling is the best of them."""
    n = len(pairs)
    keep = collections.deque(maxlen=n if n > 1 else 0)
    impls = {"copy:cudaMemcpy": (lambda i: pairs[i % n][1].copy_(pairs[i % n][0]), None),
             "copy:clone": (lambda i: keep.append(pairs[i % n][0].clone()), keep.clear)}
    if pairs[0][0].numel() % 4 == 0:
        views = [(a.view(torch.int32), b.view(torch.float32)) for a, b in pairs]
        impls["copy:elementwise"] = (lambda i: views[i % n][1].copy_(views[i % n][0]), None)
    return impls


def cuda_broken(torch, device):
    """None while the CUDA context works, else the error that broke it."""
    try:
        torch.cuda.synchronize(device)
        torch.ones(1, device=device).add_(1).item()
        return None
    except Exception as e:
        return short(e, 200)


def plan(case, cpu, l2, opts):
    """(buffer sets, calls per timing, graph?) of a case."""
    nbytes = case.nbytes()
    views = case.views()
    es = ITEMSIZE[case.dtype]
    n_out = {"add_rms_norm": 2, "layer_norm": 2, "causal_softmax": 1}.get(case.op, 1)
    ws_bytes = (sum(v.storage for v in views.values()) + n_out * math.prod(case.shape)) * es
    n_sets = 1 if (nbytes < SMALL_BYTES or ws_bytes >= 4 * l2 or case.decode) else min(8, math.ceil(4 * l2 / ws_bytes))
    t_est = max(nbytes / (3.0e12 if not cpu else 5e9), 1.5e-6)
    graph = (not cpu) and (case.decode or nbytes < opts.get("graph_below", 8e6)
                           or t_est * 1e6 < opts.get("graph_below_us", 50.0))
    if cpu:
        n_calls = 2
    elif graph:  # enough calls for a replay of >= ~0.2 ms: launch gaps and event cost vanish
        n_calls = max(2, min(100, int(2e-4 / t_est)))
    else:
        n_calls = max(2, min(50, int(1e-3 / t_est)))
    return n_sets, n_calls, graph, ws_bytes


# ------------------------------------------------------- the compile peer


def _worker_env():
    # compile in the worker itself (no pool of compile subprocesses per worker)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")


def compile_peer(torch, spec, device_name, opts, time_it):
    """Compile the case's natural function (after torch._dynamo.reset()),
    run it once, and with time_it check it against float64 and time it as
    the library is timed. Returns a dict; runs in a torch-only process."""
    case = Case.from_spec(spec)
    device = torch.device(device_name)
    cpu = device.type == "cpu"
    res = {"ok": False}
    B = None
    try:
        n_sets, n_calls, graph = opts["n_sets"] if time_it else 1, opts["n_calls"], opts["graph"]
        B = build(torch, case, device, n_sets, None, seed=opts["seed"])
        torch._dynamo.reset()
        cf = torch.compile(B.natural, dynamic=False)
        c0 = time.monotonic()
        out = cf(*B.args(0))
        if not cpu:
            torch.cuda.synchronize(device)
        res["compile_s"] = time.monotonic() - c0
        if time_it:
            pc = check(torch, case, B.check_inputs(), out)
            res["check"] = pc.as_dict()
            del out
            keep = collections.deque(maxlen=n_sets if n_sets > 1 else 0)

            def call(i):
                o = cf(*B.args(i % n_sets))
                if n_sets > 1:
                    keep.append(o)
            r = Timer(torch, device, opts["reps"]).rounds({"compile": (call, keep.clear)}, n_calls, graph)["compile"]
            if isinstance(r, Exception):
                raise r
            res["time_us"], res["timing"] = r[0] * 1e6, r[1]
        res["ok"] = True
    except Exception as e:
        res["error"] = short(e, 200)
        res["traceback"] = traceback.format_exc()[-3000:]
    finally:
        B = None
        try:
            torch._dynamo.reset()
        except Exception:
            pass
        gc.collect()
        if not cpu:
            torch.cuda.empty_cache()
    return res


def _precompile_one(args):
    spec, device_name, opts = args
    _worker_env()
    import torch
    if device_name.startswith("cuda"):
        torch.cuda.set_device(torch.device(device_name))
    return compile_peer(torch, spec, device_name, opts, time_it=False)


def _peer_worker_main(conn, device_name):
    _worker_env()
    import torch
    if device_name.startswith("cuda"):
        torch.cuda.set_device(torch.device(device_name))
    while True:
        msg = conn.recv()
        if msg is None:
            break
        spec, opts = msg
        conn.send(compile_peer(torch, spec, device_name, opts, time_it=True))


class PeerWorker:
    """The compile peer in a torch-only process (started with spawn; never
    imports the library): one request at a time, while the main process
    waits, so the GPU runs one thing at a time. A failed compile is retried
    once in a fresh process."""

    def __init__(self, device_name):
        self.device_name = device_name
        self.proc = self.conn = None

    def _start(self):
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_peer_worker_main, args=(child, self.device_name), daemon=True)
        self.proc.start()
        child.close()

    def stop(self):
        if self.proc is not None:
            try:
                self.conn.send(None)
                self.proc.join(10)
            except Exception:
                pass
            if self.proc.is_alive():
                self.proc.kill()
            self.proc = self.conn = None

    def _ask(self, spec, opts, timeout):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send((spec, opts))
        if not self.conn.poll(timeout):
            self.stop()
            return {"ok": False, "error": f"no answer in {timeout:.0f} s"}
        try:
            return self.conn.recv()
        except EOFError:
            self.stop()
            return {"ok": False, "error": "the peer process died"}

    def time(self, case, opts, timeout=300.0):
        r = self._ask(case.spec(), opts, timeout)
        if not r.get("ok"):
            self.stop()  # a fresh process for the retry and the cases after
            r2 = self._ask(case.spec(), opts, timeout)
            if r2.get("ok"):
                r2["note"] = f"first try failed ({r.get('error')}); ok in a fresh process"
                return r2
            r2.setdefault("first_error", r.get("error"))
            return r2
        return r


def precompile(cases, device_name, opts_of, processes, deadline):
    """Compile every case's peer in a pool of torch-only processes (before
    anything is timed: they share the GPU), filling inductor's on-disk
    caches (FX graphs, Triton kernels, autotuning choices) so that the
    timing worker's compile is a load. Returns {case name: result}."""
    import concurrent.futures as cf
    import multiprocessing as mp
    done = {}
    if not cases:
        return done
    ex = cf.ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context("spawn"))
    futs = {ex.submit(_precompile_one, (c.spec(), device_name, opts_of(c))): c for c in cases}
    try:
        for f in cf.as_completed(futs, timeout=max(1.0, deadline - time.monotonic())):
            c = futs[f]
            try:
                done[c.name] = f.result()
            except Exception as e:
                done[c.name] = {"ok": False, "error": short(e)}
    except cf.TimeoutError:
        pass
    finally:
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for p in procs:  # the pool's own processes, stuck in a compile past the deadline
            if p.is_alive():
                p.kill()
    return done


# ---------------------------------------------------------------- the loop


def start(prog, device_arg, reps, out):
    """A run's Env and output folder (out, else $OUT; created; None for
    neither); (None, None) where the Env cannot start, the reason printed
    on stderr after "prog: "."""
    try:
        env = Env(device_arg, reps)
    except Exception as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None, None
    out_dir = out or os.environ.get("OUT")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    return env, out_dir


class Env:
    """What every run needs: torch, the device, the library, and the lines
    that describe them."""

    def __init__(self, device_arg, reps):
        import torch
        self.torch = torch
        self.cpu = device_arg == "cpu"
        if self.cpu:
            self.device = torch.device("cpu")
            self.l2, self.dev_name = 1 << 20, "cpu"
            self.dev_info = "CPU (logic check: wall-clock timing of small cases; the numbers mean nothing)"
        else:
            if not torch.cuda.is_available():
                raise RuntimeError(f"CUDA is not available (torch {torch.__version__}); use --device cpu "
                                   "to check the program on the CPU")
            d = torch.device(device_arg)
            if d.index is None:
                d = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(d)
            self.device = d
            props = torch.cuda.get_device_properties(d)
            self.l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
            self.dev_name = props.name
            self.dev_info = (f"{props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB, "
                             f"L2 {self.l2 / 2**20:.0f} MiB")
        self.timer = Timer(torch, self.device, reps)
        self.reps = reps
        self.lib_error, self.lib_path, self.infiniop = None, None, None
        try:
            import infiniop
            self.lib_path = infiniop.library_path()
            try:
                self.lib_path += f" (infiniop {infiniop.library_version()}, CPU kernels: {infiniop.cpu_isa()})"
            except Exception:
                pass
            if not self.cpu and infiniop.device_count() < 1:
                self.lib_error = f"the library at {self.lib_path} sees no NVIDIA device"
            else:
                self.infiniop = infiniop
        except Exception as e:
            self.lib_error = f"cannot load infiniop: {short(e)} (PYTHONPATH=python, INFINIOP_LIBRARY_PATH=build-gpu)"
        self.commit = os.environ.get("INFINIOP_COMMIT") or git_commit(os.path.dirname(os.path.abspath(__file__)))

    def header(self, title, timing_line):
        torch = self.torch
        log(title)
        log(f"device:  {self.dev_info}")
        log(f"torch:   {torch.__version__} (CUDA {torch.version.cuda}); python {sys.version.split()[0]}")
        log(f"library: {self.lib_path or 'n/a'}" + (f"; commit {self.commit}" if self.commit else "")
            + (f"; ERROR {self.lib_error}" if self.lib_error else ""))
        log(f"timing:  {timing_line}")
        log("peers:   eager (silu/sigmoid: out= into the library's output tensor) and torch.compile "
            "(dynamic=False, outputs .contiguous(), dynamo reset per case, in a torch-only process)")
        log("check:   every output element against float64 (library: a mismatch fails the case; peers: noted)")
        log("ratio:   best peer time / infiniop time (>= 1: at least as fast); %copy: same-bytes copy time / infiniop time")

    def doc(self):
        torch = self.torch
        return {"device": self.dev_name, "device_info": self.dev_info, "torch": torch.__version__,
                "cuda": torch.version.cuda, "library": self.lib_path, "library_error": self.lib_error,
                "commit": self.commit, "cpu_check": self.cpu, "reps": self.reps}


def new_result(case):
    return {"case": case.name, "op": case.op, "dtype": case.dtype, "weight_dtype": case.wdtype,
            "shape": list(case.shape), "category": case.cat, "named": case.named, "layout": case.layout,
            "weight_layout": case.wlayout, "bias": case.bias, "decode": case.decode,
            "views": {k: v.as_dict() for k, v in case.views().items()},
            "bytes": case.nbytes(), "impls": {}, "status": "ok", "errors": [], "notes": []}


def measure(env, case, seed, opts, peer=None, pre=None):
    """One case: the library checked against float64, then the library (out=
    and fresh outputs), the same-bytes copy and the eager peer timed in
    shared rounds; then the compile peer (in its worker). Returns the
    result dict (impls: {copy, eager, compile, infiniop})."""
    torch, cpu, device, timer = env.torch, env.cpu, env.device, env.timer
    res = new_result(case)
    nbytes = res["bytes"]
    n_sets, n_calls, graph, ws_bytes = plan(case, cpu, env.l2, opts)
    if not cpu:
        free, _ = torch.cuda.mem_get_info(device)
        need = n_sets * ws_bytes * 1.5 + 2 * nbytes + 4 * ws_bytes
        if need > 0.8 * free:
            res["status"] = "not run"
            res["errors"].append(f"not run (needs ~{fmt_bytes(need)}, {fmt_bytes(free)} free)")
            return res
    res.update(buffer_sets=n_sets, calls_per_timing=n_calls, timing="graph" if graph else ("cpu" if cpu else "stream"))

    def record(impl, t, how, note=""):
        res["impls"][impl] = {"time_us": t * 1e6, "gbps": nbytes / t / 1e9, "timing": how, "note": note}

    def fail(impl, msg):
        res["impls"][impl] = {"time_us": None, "error": msg}

    try:
        B = build(torch, case, device, n_sets, env.infiniop, seed=seed)
    except Exception as e:
        res["status"] = "failed"
        res["errors"].append(f"setup: {short(e)}")
        warn(f"{case.name}: setup failed: {e}")
        traceback.print_exc()
        return res
    keep = collections.deque(maxlen=n_sets if n_sets > 1 else 0)
    impls = {}

    # -- the library: every element against float64 first
    if B.lib is None:
        fail("infiniop", env.lib_error or "infiniop unavailable")
        res["status"] = "failed"
        res["errors"].append("infiniop unavailable")
    else:
        try:
            got = B.lib(0)
            timer.sync()
            chk = check(torch, case, B.check_inputs(), got)
            res["check"] = chk.as_dict()
            if not chk.ok:
                res["status"] = "failed"
                res["errors"].append(f"MISMATCH against float64: {chk.text()}")
                warn(f"{case.name}: MISMATCH against float64: {chk.text()}")
            del got
            impls["infiniop:out="] = (lambda i: B.lib(i % n_sets), None)

            def fresh(i):
                o = B.lib(i % n_sets, fresh=True)
                if n_sets > 1:
                    keep.append(o)
            impls["infiniop:fresh"] = (fresh, keep.clear)
        except Exception as e:
            fail("infiniop", f"error: {short(e)}")
            res["status"] = "failed"
            res["errors"].append(f"infiniop: {short(e)}")
            warn(f"{case.name}: infiniop failed: {short(e)}")
            timer.recover()

    # -- eager variants, each checked against float64 once
    for vname, f in B.eager.items():
        try:
            out = f(0)
            pc = check(torch, case, B.check_inputs(), out)
            del out
            if not pc.ok:
                res["notes"].append(f"eager {vname} differs from float64: {pc.text()}")

            def call(i, f=f):
                o = f(i % n_sets)
                if n_sets > 1:
                    keep.append(o)
            impls[f"eager:{vname}"] = (call, keep.clear)
        except Exception as e:
            res["notes"].append(f"eager {vname} failed: {short(e)}")

    # -- copy of the same byte count
    cpairs = None
    try:
        half = max(1, nbytes // 2)
        cpairs = [(torch.randint(0, 256, (half,), dtype=torch.uint8, device=device),
                   torch.empty(half, dtype=torch.uint8, device=device)) for _ in range(n_sets)]
        impls.update(copy_impls(torch, cpairs))
    except Exception as e:
        fail("copy", short(e))

    # -- one timing: all of them in the same rounds
    times = timer.rounds(impls, n_calls, graph) if impls else {}
    cpairs = None
    keep.clear()

    def best(prefix):
        got = {k.split(":", 1)[1]: v for k, v in times.items() if k.startswith(prefix + ":") and not isinstance(v, Exception)}
        errs = {k.split(":", 1)[1]: v for k, v in times.items() if k.startswith(prefix + ":") and isinstance(v, Exception)}
        if not got:
            return None, got, errs
        k = min(got, key=lambda n: got[n][0])
        return (got[k][0], got[k][1], k), got, errs

    b, got, errs = best("infiniop")
    if b:
        res["lib_placements"] = {k: v[0] * 1e6 for k, v in got.items()}
        record("infiniop", b[0], b[1], "" if b[2] == "out=" else "fresh outputs")
    elif "infiniop" not in res["impls"]:
        e = next(iter(errs.values()), None)
        fail("infiniop", f"error: {short(e)}" if e else "not timed")
        res["status"] = "failed"
        res["errors"].append(f"infiniop timing: {short(e) if e else 'not timed'}")
    b, got, errs = best("eager")
    res["eager_variants"] = {k: v[0] * 1e6 for k, v in got.items()}
    for k, e in errs.items():
        res["notes"].append(f"eager {k} failed: {short(e)}")
    if b:
        record("eager", b[0], b[1], b[2] if len(B.eager) > 1 else "")
    else:
        fail("eager", "every eager variant failed")
    b, got, errs = best("copy")
    if b:
        record("copy", b[0], b[1], b[2])
    elif "copy" not in res["impls"]:
        fail("copy", short(next(iter(errs.values()), "not timed")))
    B = None
    gc.collect()
    if not cpu:
        torch.cuda.empty_cache()

    # -- torch.compile, in its own process
    if peer is None:
        fail("compile", opts.get("compile_off_reason", "off"))
    else:
        r = peer.time(case, {"n_sets": n_sets, "n_calls": n_calls, "graph": graph, "reps": env.reps, "seed": seed})
        if r.get("ok"):
            note = f"compiled in {r['compile_s']:.1f} s" + (f"; {r['note']}" if r.get("note") else "")
            if pre is not None and not pre.get("ok", True):
                note += f"; precompile failed: {pre.get('error')}"
            if r.get("check") and not r["check"]["ok"]:
                note += f"; differs from float64: {r['check']['mismatches']} of {r['check']['elements']}"
            record("compile", r["time_us"] * 1e-6, r["timing"], note)
        else:
            fail("compile", f"n/a: {r.get('error')}")
            if r.get("traceback"):
                res["compile_traceback"] = r["traceback"]

    # -- metrics
    li, cp = res["impls"].get("infiniop", {}), res["impls"].get("copy", {})
    peers = {k: res["impls"][k]["time_us"] for k in ("eager", "compile") if res["impls"].get(k, {}).get("time_us")}
    if li.get("time_us"):
        if cp.get("time_us"):
            res["pct_copy"] = 100.0 * cp["time_us"] / li["time_us"]
        if peers:
            bp = min(peers, key=peers.get)
            res["best_peer"] = bp
            res["ratio"] = peers[bp] / li["time_us"]
    return res


class _Stopped(BaseException):  # not caught by the per-case "except Exception"
    pass


def _on_sigterm(signum, frame):
    raise _Stopped()


def run(env, cases, *, budget, compile_on, opts, print_case, seed_of, precompile_share=0.5, processes=None):
    """Measure cases in order within `budget` seconds (cases that did not
    start in time, or after SIGTERM, are "not run"). With compile_on: a
    parallel precompile of the compile peers (at most precompile_share of
    the budget), then one peer worker for the timings."""
    t0 = time.monotonic()
    results = []
    peer = None
    pre = {}
    dev_name = str(env.device)
    stop_reason = None
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if compile_on:
            procs = processes or max(1, min(8, (os.cpu_count() or 2) // 2))
            if env.cpu:
                procs = 1
            log(f"precompile: torch.compile of {len(cases)} peers in {procs} torch-only processes "
                f"(at most {precompile_share * budget:.0f} s)")

            def opts_of(c):
                n_sets, n_calls, graph, _ = plan(c, env.cpu, env.l2, opts)
                return {"n_sets": 1, "n_calls": n_calls, "graph": graph, "reps": env.reps, "seed": seed_of(c)}
            pre = precompile(cases, dev_name, opts_of, procs, t0 + precompile_share * budget)
            nok = sum(1 for r in pre.values() if r.get("ok"))
            bad = [(n, r.get("error")) for n, r in pre.items() if not r.get("ok")]
            log(f"precompile: {nok} of {len(cases)} compiled, {len(bad)} failed, "
                f"{len(cases) - len(pre)} not reached; {time.monotonic() - t0:.0f} s")
            for n, e in bad[:10]:
                log(f"  precompile failed: {n}: {e}")
            peer = PeerWorker(dev_name)
        for case in cases:
            if stop_reason is None and time.monotonic() - t0 > budget:
                stop_reason = f"budget of {budget:.0f} s used"
            if stop_reason:
                res = new_result(case)
                res["status"] = "not run"
                res["errors"].append(f"not run ({stop_reason})")
                results.append(res)
                print_case(res)
                continue
            res = measure(env, case, seed_of(case), opts, peer=peer, pre=pre.get(case.name))
            results.append(res)
            print_case(res)
            if not env.cpu:
                broken = cuda_broken(env.torch, env.device)
                if broken:
                    warn(f"the CUDA context is unusable after {case.name} ({broken}); the remaining cases are not run")
                    stop_reason = f"CUDA context unusable: {broken}"
    except _Stopped:
        warn("stopped by SIGTERM: writing the cases measured so far")
        done = {r["case"] for r in results}
        for c in cases:
            if c.name not in done:
                res = new_result(c)
                res["status"] = "not run"
                res["errors"].append("not run (stopped by SIGTERM)")
                results.append(res)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if peer is not None:
            peer.stop()
    return results, time.monotonic() - t0


# ------------------------------------------------------------------ reports


def summarize(results):
    """Per operator: cases run, min and geometric-mean ratio, the targets."""
    out = {}
    for op in OPS:
        rs = [r for r in results if r["op"] == op]
        if not rs:
            continue
        run_ = [r for r in rs if r["status"] != "not run"]
        ratios = [(r["ratio"], r["case"]) for r in run_ if r.get("ratio")]
        big = [r for r in run_ if r["bytes"] >= BIG_BYTES and "pct_copy" in r]
        small = [r for r in run_ if r["bytes"] < SMALL_BYTES and r["impls"].get("infiniop", {}).get("time_us")
                 and r["impls"]["infiniop"]["timing"] == "graph"]
        out[op] = {
            "cases": len(rs), "run": len(run_), "not_run": len(rs) - len(run_),
            "failed": [r["case"] for r in run_ if r["status"] == "failed"],
            "with_ratio": len(ratios),
            "min_ratio": min(ratios)[0] if ratios else None, "min_ratio_case": min(ratios)[1] if ratios else None,
            "geomean_ratio": math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios)) if ratios else None,
            "behind_best_peer": sorted(((x, c) for x, c in ratios if x < 1.0)),
            "ties": sum(1 for x, _ in ratios if 0.97 <= x < 1.0),
            "big_cases": len(big), "big_under_pct": [(r["pct_copy"], r["case"]) for r in big if r["pct_copy"] < BIG_PCT],
            "small_cases_graph": len(small),
            "small_over_us": [(r["impls"]["infiniop"]["time_us"], r["case"]) for r in small
                              if r["impls"]["infiniop"]["time_us"] > SMALL_US],
            "compile_peers": sum(1 for r in run_ if r["impls"].get("compile", {}).get("time_us")),
            "compile_failures": [r["case"] for r in run_ if r["impls"].get("compile", {}).get("error", "").startswith("n/a")],
        }
    return out


def summary_lines(summary, cpu=False):
    L = ["summary per operator" + (" (CPU logic check: the targets are GPU targets; numbers mean nothing)" if cpu else "")
         + f": ratio = best peer / infiniop; big = cases >= {fmt_bytes(BIG_BYTES)} under {BIG_PCT:.0f}% of copy; "
         f"small = cases < {fmt_bytes(SMALL_BYTES)} over {SMALL_US} us in a graph",
         f"  {'operator':15s} {'cases':>5s} {'run':>4s} {'failed':>6s} {'min ratio':>9s} {'geomean':>8s} {'behind':>7s} "
         f"{'big<85%':>9s} {'small>2.5us':>11s} {'compile':>7s}  worst case"]
    for op, s in summary.items():
        mr = f"{s['min_ratio']:.2f}x" if s["min_ratio"] else "n/a"
        gm = f"{s['geomean_ratio']:.2f}x" if s["geomean_ratio"] else "n/a"
        L.append(f"  {op:15s} {s['cases']:5d} {s['run']:4d} {len(s['failed']):6d} {mr:>9s} {gm:>8s} "
                 f"{len(s['behind_best_peer']):3d}/{s['with_ratio']:<3d} {len(s['big_under_pct']):4d}/{s['big_cases']:<4d} "
                 f"{len(s['small_over_us']):5d}/{s['small_cases_graph']:<5d} {s['compile_peers']:3d}/{s['run']:<3d}  "
                 f"{s['min_ratio_case'] or ''}")
    return L


def cell(r, impl):
    v = r["impls"].get(impl, {})
    return f"{v['time_us']:.2f}" if v.get("time_us") else ("n/a" if impl in r["impls"] else "")


def markdown(doc, title):
    L = [f"# {title}", "",
         f"device: {doc['device_info']}; torch {doc['torch']} (CUDA {doc['cuda']}); commit {doc['commit']}; "
         f"{doc['elapsed_s']:.0f} s" + ("; **CPU logic check: the numbers mean nothing**" if doc["cpu_check"] else ""),
         "", "ratio: best peer time / infiniop time (>= 1: at least as fast); % copy: time of a copy moving the same "
         "bytes, in the same timing rounds / infiniop time. Times in us (median).", "", "## Summary", "",
         "| operator | cases | run | failed | min ratio (case) | geomean ratio | behind best peer (ties within 3%) "
         "| >= 64 MB under 85% of copy | < 1 MB over 2.5 us (graph) | compile peer |",
         "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for op, s in doc["summary"].items():
        mr = f"{s['min_ratio']:.2f}x ({s['min_ratio_case']})" if s["min_ratio"] else "n/a"
        gm = f"{s['geomean_ratio']:.2f}x" if s["geomean_ratio"] else "n/a"
        L.append(f"| {op} | {s['cases']} | {s['run']} | {len(s['failed'])} | {mr} | {gm} | "
                 f"{len(s['behind_best_peer'])} of {s['with_ratio']} ({s['ties']}) | {len(s['big_under_pct'])} of {s['big_cases']} | "
                 f"{len(s['small_over_us'])} of {s['small_cases_graph']} | {s['compile_peers']} of {s['run']} |")
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
        notes = [f"{k}: {r['impls'][k]['error']}" for k in ("copy", "eager", "compile", "infiniop")
                 if r["impls"].get(k, {}).get("error")]
        notes += r.get("notes", []) + [e for e in r["errors"] if not e.startswith("MISMATCH")]
        if r.get("named"):
            notes.append(r["named"])
        ck = r.get("check")
        cks = "" if not ck else (f"ok ({ck['rel_err']:.0e})" if ck["ok"] else f"**MISMATCH** {ck['mismatches']}/{ck['elements']}")
        pct = f"{r['pct_copy']:.1f}" if "pct_copy" in r else ""
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else ""
        cells = [r["case"], r["category"], fmt_bytes(r["bytes"]), r.get("timing", ""), cell(r, "copy"), cell(r, "eager"),
                 cell(r, "compile"), cell(r, "infiniop"), pct, ratio, cks, "; ".join(notes)]
        L.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(L) + "\n"


def text_chart(doc):
    """The ratio chart as text (when matplotlib is missing): per operator the
    minimum and geometric mean, then one bar per case on a log scale."""
    L = [f"ratio to the best peer per case (| marks 1.0x; each # is a factor 2^(1/4)); {doc['device']}"]
    for op, s in doc["summary"].items():
        mr = f"{s['min_ratio']:.2f}x" if s["min_ratio"] else "n/a"
        gm = f"{s['geomean_ratio']:.2f}x" if s["geomean_ratio"] else "n/a"
        L.append(f"{op}: min {mr}, geomean {gm}")
        for r in doc["cases"]:
            if r["op"] != op or not r.get("ratio"):
                continue
            k = max(-12, int(round(4 * math.log2(r["ratio"]))))
            bar = (" " * max(0, 12 + k) + "#" * -k + "|") if k < 0 else (" " * 12 + "|" + "#" * min(k, 40))
            pct = f"{r['pct_copy']:5.1f}%" if "pct_copy" in r else "      "
            L.append(f"  {r['ratio']:6.2f}x {pct} {bar:54s} {r['case']}")
    return "\n".join(L) + "\n"


def chart_from_json(path, png_name):
    """png_name beside the JSON: per case, the ratio to the best peer (log
    scale) and the % of the same-bytes copy, with the per-operator minimum
    and geometric mean in the legend (no torch needed). Without matplotlib
    the text chart (same name, .txt) is all there is."""
    with open(path) as f:
        doc = json.load(f)
    d = os.path.dirname(os.path.abspath(path))
    with open(os.path.join(d, os.path.splitext(png_name)[0] + "-chart.txt"), "w") as f:
        f.write(text_chart(doc))
    try:
        import matplotlib
    except ImportError:
        return 0
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
                s = doc["summary"].get(op, {})
                label = op
                if key == "ratio" and s.get("min_ratio"):
                    label += f" (min {s['min_ratio']:.2f}x, geomean {s['geomean_ratio']:.2f}x)"
                ax.bar([p[0] for p in pts], [p[1] for p in pts], 0.8, color=col, label=label)
        ax.set_ylabel(ylabel)
    ax1.set_yscale("log")
    ax1.axhline(1.0, color="k", linewidth=0.8)
    ax2.axhline(BIG_PCT, color="k", linestyle="--", linewidth=0.8)
    for i, r in enumerate(rs):
        if r["status"] == "failed":
            ax1.annotate("X", (i, 1.0), ha="center", color="red", fontsize=7)
    ax1.legend(fontsize=8, ncol=3, loc="upper right")
    ax2.set_xticks(xs)
    ax2.set_xticklabels([r["case"] for r in rs], rotation=90, fontsize=5 if n > 60 else 7)
    ax1.set_title(f"infiniop-c on {doc['device']}: ratio to the best peer (>= 1: at least as fast) "
                  f"and % of the same-bytes copy (dashed: {BIG_PCT:.0f}%)" + (" [CPU logic check]" if doc.get("cpu_check") else ""),
                  fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(d, png_name), dpi=110)
    plt.close(fig)
    return 0


def write_outputs(out_dir, stem, doc, title, script):
    """stem.json, stem.md, and the chart (stem.png by `script --chart`, in a
    separate process: matplotlib beside torch's extensions failed once with
    a pybind11 error; stem-chart.txt always). Returns the files written."""
    jpath = os.path.join(out_dir, f"{stem}.json")
    with open(jpath, "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, f"{stem}.md"), "w") as f:
        f.write(markdown(doc, title))
    written = [f"{stem}.md", f"{stem}.json"]
    try:
        cp = subprocess.run([sys.executable, script, "--chart", jpath], capture_output=True, text=True, timeout=180)
        if cp.returncode != 0:
            log(f"(chart failed: {(cp.stderr.strip().splitlines() or ['?'])[-1]})")
    except Exception as e:
        log(f"(chart failed: {e})")
    for n in (f"{stem}.png", f"{stem}-chart.txt"):
        if os.path.isfile(os.path.join(out_dir, n)):
            written.append(n)
    return [os.path.join(out_dir, n) for n in written]
