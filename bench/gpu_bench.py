#!/usr/bin/env python3
"""GPU benchmark: infiniop-c against PyTorch eager and torch.compile.

For every case (operator, dtypes, shape) it measures, in one process on one
GPU:

* ``copy``     a device-to-device copy moving the case's own byte count
               (the same-size copy ceiling; for decode cases an L2-resident
               copy),
* ``eager``    PyTorch eager (the fastest of the listed eager variants),
* ``compile``  torch.compile (mode "default", dynamic=False) of the natural
               eager function,
* ``infiniop`` this library through the ``infiniop`` Python package, with
               preallocated ``out=`` tensors.

Effective bandwidth counts the minimum bytes the operation must move: each
input read once, each output written once (causal softmax reads only the
unmasked part of x).  "% ceil" is that bandwidth over the copy ceiling: a
copy_ of a 2 GiB buffer (>> L2), bytes read + written per second.

Timing: CUDA events, median over repeated warm runs.  By default every case
is timed as replays of a CUDA graph that holds N back-to-back calls (GPU time
only: no Python, ctypes or launch overhead, for the peers as for the
library); --no-graph times non-decode cases on the stream instead (decode
cases are always graph replays).  Cases whose working set is not well above
L2 rotate over several buffer sets.  Before timing, the library's outputs
are checked against the eager peer (allclose with dtype tolerances); a
mismatch is reported loudly and the case marked failed.

Run (from the repository root, after building the CUDA library into
build-gpu/):

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/gpu_bench.py
        [--quick] [--cases REGEX] [--no-compile] [--no-graph] [--out DIR]

Writes the table to stdout and, with $OUT (or --out), bench.txt, bench.json
and bench.png there.  --dry-run runs the whole program on the CPU with tiny
shapes (no GPU needed) to check its logic.

Exit status: 0 all cases ran and matched; 1 some case failed (mismatch or a
library error); 2 it could not run at all (no torch, no CUDA device).
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import traceback

EPS_RMS = 1e-6
EPS_LN = 1e-5
DECODE_TARGET_US = 2.5

# --------------------------------------------------------------------- cases


class Case:
    def __init__(self, op, dtype, shape, *, wdtype=None, decode=False, transposed=False, tiny=None, target_pct=90.0):
        self.op = op
        self.dtype = dtype  # "bf16", "f16", "f32", "f64"
        self.wdtype = wdtype or dtype
        self.shape = tuple(shape)
        self.decode = decode
        self.transposed = transposed
        self.tiny = tuple(tiny) if tiny else self.shape
        self.target_pct = target_pct

    @property
    def name(self):
        dt = self.dtype if self.wdtype == self.dtype else f"{self.dtype}/{self.wdtype}"
        shp = "x".join(map(str, self.shape)) if len(self.shape) == 2 else str(self.shape).replace(" ", "")
        s = f"{self.op} {dt} {shp}"
        if self.transposed:
            s += " x.t()"
        if self.decode:
            s += " decode"
        return s


CASES = [
    Case("add_rms_norm", "bf16", (16384, 8192), tiny=(64, 256), target_pct=95.0),
    Case("add_rms_norm", "f16", (4096, 4096), wdtype="f32", tiny=(32, 128)),
    Case("add_rms_norm", "bf16", (4096, 32, 128), tiny=(8, 4, 128)),
    Case("add_rms_norm", "bf16", (256, 65536), tiny=(4, 4096)),
    Case("add_rms_norm", "bf16", (32, 4096), decode=True, tiny=(4, 512)),
    Case("layer_norm", "bf16", (16384, 4096), tiny=(64, 256)),
    Case("layer_norm", "f32", (65536, 512), tiny=(256, 64)),
    Case("layer_norm", "f16", (8, 768), decode=True),
    Case("causal_softmax", "bf16", (32, 2048, 2048), tiny=(2, 64, 64)),
    Case("causal_softmax", "f32", (8, 512, 4608), tiny=(2, 16, 144)),
    Case("causal_softmax", "f16", (32, 1, 8192), decode=True, tiny=(4, 1, 512)),
    Case("silu", "bf16", (16384, 16384), tiny=(64, 64), target_pct=95.0),
    Case("silu", "f32", (8192, 8192), tiny=(64, 64)),
    Case("silu", "bf16", (8192, 8192), transposed=True, tiny=(48, 80)),
    Case("sigmoid", "bf16", (16384, 16384), tiny=(64, 64), target_pct=95.0),
    Case("sigmoid", "f64", (4096, 8192), tiny=(32, 64)),
]

ITEMSIZE = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8}


def min_bytes(op, dtype, wdtype, shape):
    """The fewest bytes the operation must move through memory."""
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


# ------------------------------------------------------------------- output


class Log:
    def __init__(self):
        self.lines = []

    def __call__(self, s=""):
        print(s, flush=True)
        self.lines.append(s)


log = Log()


def warn(s):
    log(f"!!! {s}")


def fmt_bytes(b):
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= k:
            return f"{b / k:.3g} {unit}"
    return f"{b} B"


# ------------------------------------------------------------------- timing


class Timer:
    """CUDA-event timing of fn(i) (i: the call's index, for buffer rotation)."""

    def __init__(self, torch, device, reps, warmup, use_graph):
        self.torch = torch
        self.device = device
        self.reps = reps
        self.warmup = warmup
        self.use_graph = use_graph
        self.cuda = device.type == "cuda"

    def _sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def time(self, fn, n_calls, graph, cleanup=None):
        """Median seconds per call and how it was timed ("graph", "stream",
        "stream (graph capture failed: ...)" or "cpu"). cleanup() drops what
        fn kept alive (called before a graph is destroyed)."""
        cleanup = cleanup or (lambda: None)
        try:
            if not self.cuda:
                return self._time_cpu(fn, n_calls), "cpu"
            if graph:
                try:
                    return self._time_graph(fn, n_calls, cleanup), "graph"
                except Exception as e:  # capture not possible: say so and time on the stream
                    cleanup()
                    self._recover()
                    msg = str(e).strip().splitlines()[0][:120] if str(e).strip() else type(e).__name__
                    return self._time_stream(fn, n_calls), f"stream (graph capture failed: {msg})"
            return self._time_stream(fn, n_calls), "stream"
        finally:
            cleanup()

    def _recover(self):
        torch = self.torch
        try:
            torch.cuda.synchronize(self.device)
        except Exception:
            pass
        gc.collect()
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
        self._sync()

    def _time_graph(self, fn, n_calls, cleanup):
        torch = self.torch
        self._warm(fn, max(2, min(n_calls, 8)))
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g):
                for i in range(n_calls):
                    fn(i)
            for _ in range(self.warmup):
                g.replay()
            self._sync()
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(self.reps)]
            for s, e in ev:
                s.record()
                g.replay()
                e.record()
            self._sync()
            return statistics.median(s.elapsed_time(e) for s, e in ev) * 1e-3 / n_calls
        finally:
            cleanup()
            del g
            gc.collect()
            torch.cuda.empty_cache()

    def _time_stream(self, fn, n_calls):
        torch = self.torch
        for _ in range(self.warmup):
            for i in range(n_calls):
                fn(i)
        self._sync()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(self.reps)]
        for s, e in ev:
            s.record()
            for i in range(n_calls):
                fn(i)
            e.record()
        self._sync()
        return statistics.median(s.elapsed_time(e) for s, e in ev) * 1e-3 / n_calls

    def _time_cpu(self, fn, n_calls):
        for _ in range(self.warmup):
            for i in range(n_calls):
                fn(i)
        ts = []
        for _ in range(self.reps):
            t0 = time.perf_counter()
            for i in range(n_calls):
                fn(i)
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) / n_calls

    def host_per_call(self, fn, n=200):
        """Wall-clock seconds per call for back-to-back stream calls (what a
        caller without graphs sees: the larger of host overhead and GPU time)."""
        for i in range(10):
            fn(i)
        self._sync()
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        self._sync()
        return (time.perf_counter() - t0) / n


# --------------------------------------------------------- case construction


def torch_dtype(torch, name):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "f64": torch.float64}[name]


def tolerances(name):
    # (rtol, atol): about two units in the last place of the output type
    return {"bf16": (1.6e-2, 1e-2), "f16": (2e-3, 1e-3), "f32": (1e-4, 1e-5), "f64": (1e-10, 1e-12)}[name]


class Built:
    """One case's tensors and the callables that compute it.

    sets[k]: the k-th buffer set (inputs and the library's outputs);
    args(k): the peers' positional inputs for set k;
    eager: {variant: fn(*args) -> outputs tuple}; natural: the function given
    to torch.compile; lib(k) -> outputs tuple (written into set k's outputs;
    lib(k, fresh=True): into outputs the allocator hands out, as the peers').
    """

    def __init__(self):
        self.sets = []
        self.args = None
        self.eager = {}
        self.natural = None
        self.lib = None


def make_peers(torch, op, shape, device, *, w=None, contiguous_out=False):
    """The peers of one case: (natural, {variant: fn(*args) -> outputs tuple}).
    natural is the function given to torch.compile (and the first eager
    variant); w: add_rms_norm's weight; contiguous_out: silu/sigmoid on a
    non-contiguous input write a contiguous output, as the library does.
    Shared with bench/gpu_sweep.py."""
    F = torch.nn.functional
    if op == "add_rms_norm":
        w32 = w.float()

        def natural(a, b, w):
            r = a.float() + b.float()
            y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + EPS_RMS) * w
            return y.to(a.dtype), r.to(a.dtype)

        def fused(a, b, w):
            r = a.float() + b.float()
            return F.rms_norm(r, (r.shape[-1],), w32, EPS_RMS).to(a.dtype), r.to(a.dtype)

        return natural, {"natural": natural, "F.rms_norm": fused}
    if op == "layer_norm":
        def natural(x, w, b):
            xf = x.float()
            var, mean = torch.var_mean(xf, dim=-1, correction=0, keepdim=True)
            std = torch.sqrt(var + EPS_LN)
            xhat = (xf - mean) / std
            out = xhat * w + b
            return out.to(x.dtype), xhat.to(x.dtype), std.squeeze(-1).to(x.dtype)

        def native(x, w, b):
            out, mean, rstd = torch.native_layer_norm(x, (x.shape[-1],), w, b, EPS_LN)
            mean, rstd = mean.float(), rstd.float()
            xhat = torch.sub(x, mean).mul_(rstd)
            return out, xhat.to(x.dtype), rstd.reciprocal().squeeze(-1).to(x.dtype)

        return natural, {"var_mean": natural, "native_layer_norm": native}
    if op == "causal_softmax":
        S, T = shape[-2], shape[-1]
        visible = torch.ones((S, T), dtype=torch.bool, device=device).tril(diagonal=T - S)
        hidden = ~visible

        def eager_masked(x):
            return (torch.softmax(x.masked_fill(hidden, float("-inf")), dim=-1, dtype=torch.float32).to(x.dtype),)

        def natural(x):
            # the mask from indices (row i sees j <= i + T - S): fused by inductor
            s, t = x.shape[-2], x.shape[-1]
            i = torch.arange(s, device=x.device).unsqueeze(-1)
            j = torch.arange(t, device=x.device)
            xm = x.masked_fill(j > i + (t - s), float("-inf"))
            return (torch.softmax(xm, dim=-1, dtype=torch.float32).to(x.dtype),)

        return natural, {"masked_fill+softmax": eager_masked}
    if op in ("silu", "sigmoid"):
        fn = F.silu if op == "silu" else torch.sigmoid
        aten_out = torch.ops.aten.silu.out if op == "silu" else torch.ops.aten.sigmoid.out
        if contiguous_out:
            # output contiguous, as the library's
            def natural(x):
                return (fn(x).contiguous(),)

            def eager_out(x):
                return (aten_out(x, out=torch.empty(x.shape, dtype=x.dtype, device=x.device)),)

            return natural, {f"{op}.out(contiguous)": eager_out, f"{op}().contiguous()": natural}

        def natural(x):
            return (fn(x),)

        return natural, {op: natural}
    raise ValueError(op)


def build_case(torch, case, shape, device, n_sets, infiniop):
    dt = torch_dtype(torch, case.dtype)
    wdt = torch_dtype(torch, case.wdtype)
    gen = torch.Generator(device=device)
    gen.manual_seed(1234)

    def randn(shp, dtype=dt, scale=1.0, shift=0.0):
        t = torch.randn(shp, generator=gen, device=device, dtype=torch.float32 if dtype != torch.float64 else dtype)
        if scale != 1.0:
            t.mul_(scale)
        if shift != 0.0:
            t.add_(shift)
        return t.to(dtype)

    B = Built()
    op = case.op
    if op == "add_rms_norm":
        D = shape[-1]
        w = randn((D,), wdt, 0.1, 1.0)
        for _ in range(n_sets):
            B.sets.append({"a": randn(shape), "b": randn(shape),
                           "y": torch.empty(shape, dtype=dt, device=device),
                           "r": torch.empty(shape, dtype=dt, device=device)})
        B.args = lambda k: (B.sets[k]["a"], B.sets[k]["b"], w)
        B.natural, B.eager = make_peers(torch, op, shape, device, w=w)

        def lib(k, fresh=False):
            s = B.sets[k]
            return infiniop.add_rms_norm(s["a"], s["b"], w, EPS_RMS, out=None if fresh else (s["y"], s["r"]))

        B.lib = lib
    elif op == "layer_norm":
        D = shape[-1]
        w = randn((D,), dt, 0.1, 1.0)
        bias = randn((D,), dt, 0.1)
        for _ in range(n_sets):
            B.sets.append({"x": randn(shape, scale=2.0, shift=0.5),
                           "o": torch.empty(shape, dtype=dt, device=device),
                           "xh": torch.empty(shape, dtype=dt, device=device),
                           "sd": torch.empty(shape[:-1], dtype=dt, device=device)})
        B.args = lambda k: (B.sets[k]["x"], w, bias)
        B.natural, B.eager = make_peers(torch, op, shape, device)

        def lib(k, fresh=False):
            s = B.sets[k]
            return infiniop.layer_norm(s["x"], w, bias, EPS_LN, out=None if fresh else (s["o"], s["xh"], s["sd"]))

        B.lib = lib
    elif op == "causal_softmax":
        for _ in range(n_sets):
            B.sets.append({"x": randn(shape, scale=2.0), "y": torch.empty(shape, dtype=dt, device=device)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.natural, B.eager = make_peers(torch, op, shape, device)

        def lib(k, fresh=False):
            s = B.sets[k]
            return (infiniop.causal_softmax(s["x"], out=None if fresh else s["y"]),)

        B.lib = lib
    elif op in ("silu", "sigmoid"):
        for _ in range(n_sets):
            if case.transposed:
                base = randn(tuple(reversed(shape)), scale=3.0)
                x = base.t()  # shape `shape`, column-major: non-contiguous
            else:
                x = randn(shape, scale=3.0)
            B.sets.append({"x": x, "y": torch.empty(shape, dtype=dt, device=device)})
        B.args = lambda k: (B.sets[k]["x"],)
        B.natural, B.eager = make_peers(torch, op, shape, device, contiguous_out=case.transposed)
        libfn = infiniop.silu if op == "silu" else infiniop.sigmoid

        def lib(k, fresh=False):
            s = B.sets[k]
            return (libfn(s["x"], out=None if fresh else s["y"]),)

        B.lib = lib
    else:
        raise ValueError(op)
    return B


def best_copy(timer, torch, pairs, n_calls, graph):
    """The fastest of three ways to copy each (src, dst) pair of uint8 buffers
    (rotated by call index): copy_ (cudaMemcpyAsync device to device) into
    dst, clone() (cudaMemcpy into a destination the caching allocator hands
    out at each call, as the peers' outputs are) and PyTorch's vectorized
    elementwise kernel (the same bytes as int32 -> float32, 16-byte loads and
    stores; its bits differ, its traffic is a copy's). Where the destination
    sits relative to the source changes the rate by up to 1.5x on an H200
    (bench/NOTES.md), so the ceiling is the best placement. cudaMemcpy alone was seen at 2.7 TB/s on an H200 where kernels
    moved 3.7+ TB/s (bench/NOTES.md): the ceiling is the best copy, not one
    routine's. Returns (seconds, how timed, which)."""
    n = len(pairs)
    best = None
    t, how = timer.time(lambda i: pairs[i % n][1].copy_(pairs[i % n][0]), n_calls, graph)
    best = (t, how, "cudaMemcpy")
    # a destination from the allocator at each call, as the peers' outputs
    keep = collections.deque(maxlen=n if n > 1 else 0)
    try:
        t3, how3 = timer.time(lambda i: keep.append(pairs[i % n][0].clone()), n_calls, graph, keep.clear)
        if t3 < best[0]:
            best = (t3, how3, "clone")
    except Exception as e:
        warn(f"clone copy failed: {e}")
    if pairs[0][0].numel() % 4 == 0:
        views = [(a.view(torch.int32), b.view(torch.float32)) for a, b in pairs]
        try:
            t2, how2 = timer.time(lambda i: views[i % n][1].copy_(views[i % n][0]), n_calls, graph)
            if t2 < best[0]:
                best = (t2, how2, "elementwise kernel")
        except Exception as e:  # keep the memcpy number
            warn(f"elementwise copy failed: {e}")
    return best


def cuda_broken(torch, device):
    """None while the CUDA context works, else the error that broke it."""
    try:
        torch.cuda.synchronize(device)
        torch.ones(1, device=device).add_(1).item()
        return None
    except Exception as e:
        return str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__


def compare(torch, got, ref, dtname):
    """(ok, max abs error, detail) of the library's outputs against a peer's."""
    rtol, atol = tolerances(dtname)
    ok, worst, details = True, 0.0, []
    for idx, (g, r) in enumerate(zip(got, ref)):
        if tuple(g.shape) != tuple(r.shape):
            return False, None, f"output {idx}: shape {tuple(g.shape)} != {tuple(r.shape)}"
        wide = torch.float64 if g.dtype == torch.float64 else torch.float32
        gw, rw = g.to(wide), r.to(wide)
        close = torch.isclose(gw, rw, rtol=rtol, atol=atol, equal_nan=True)
        nbad = int((~close).sum().item())
        diff = torch.nan_to_num((gw - rw).abs(), nan=0.0)
        err = float(diff.max().item()) if diff.numel() else 0.0
        worst = max(worst, err)
        if nbad:
            ok = False
            flat = (~close).flatten().nonzero()[0].item()
            details.append(f"output {idx}: {nbad} of {g.numel()} elements differ (first at flat index {flat}: "
                           f"got {gw.flatten()[flat].item():.6g}, want {rw.flatten()[flat].item():.6g}; max abs err {err:.3g})")
        del gw, rw, close, diff
    return ok, worst, "; ".join(details)


# --------------------------------------------------------------------- main


def parse_args(argv):
    p = argparse.ArgumentParser(description="infiniop-c GPU benchmark against PyTorch eager and torch.compile")
    p.add_argument("--quick", action="store_true", help="fewer repetitions and a 1 GiB copy ceiling")
    p.add_argument("--cases", metavar="REGEX", help="run only the cases whose name matches (re.search), e.g. 'silu|decode'")
    p.add_argument("--list", action="store_true", help="list the cases and their minimum bytes, and exit")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--no-graph", action="store_true", help="time non-decode cases on the stream instead of as CUDA graph replays")
    p.add_argument("--reps", type=int, help="timed repetitions per implementation (default 20, --quick 7)")
    p.add_argument("--budget", type=float, default=210.0,
                   help="seconds after which torch.compile is skipped for the remaining cases (default 210)")
    p.add_argument("--out", help="directory for bench.txt, bench.json, bench.png (default: $OUT)")
    p.add_argument("--device", default="cuda", help="CUDA device (default: cuda, i.e. the current one)")
    p.add_argument("--dry-run", action="store_true",
                   help="check the program's logic on the CPU with tiny shapes (timings mean nothing)")
    return p.parse_args(argv)


def chart_from_json(path):
    """--chart bench.json: draw bench.png beside it (no torch needed)."""
    with open(path) as f:
        doc = json.load(f)
    draw_chart(doc["cases"], os.path.join(os.path.dirname(os.path.abspath(path)), "bench.png"), doc["device"],
               doc["copy_ceiling"]["gbps"] * 1e9)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--chart":
        return chart_from_json(argv[1])
    args = parse_args(argv)
    t_start = time.monotonic()
    cases = CASES
    if args.cases:
        try:
            rx = re.compile(args.cases)
        except re.error as e:
            print(f"gpu_bench: bad --cases regex {args.cases!r}: {e}", file=sys.stderr)
            return 2
        cases = [c for c in cases if rx.search(c.name)]
        if not cases:
            print(f"gpu_bench: no case matches {args.cases!r}; cases are:\n  " + "\n  ".join(c.name for c in CASES), file=sys.stderr)
            return 2
    if args.list:
        for c in cases:
            print(f"{c.name:44s} {fmt_bytes(min_bytes(c.op, c.dtype, c.wdtype, c.shape)):>10s}")
        return 0

    try:
        import torch
    except ImportError as e:
        print(f"gpu_bench: cannot import torch ({e}); this benchmark needs PyTorch with CUDA", file=sys.stderr)
        return 2
    if args.dry_run:
        device = torch.device("cpu")
    else:
        if not torch.cuda.is_available():
            print(f"gpu_bench: CUDA is not available (torch {torch.__version__}, built for CUDA "
                  f"{torch.version.cuda}); this benchmark needs an NVIDIA GPU. "
                  "Use --dry-run to check its logic on the CPU.", file=sys.stderr)
            return 2
        device = torch.device(args.device)
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(device)
    quick = args.quick
    reps = args.reps or (7 if quick else 20)
    if args.dry_run:
        reps = args.reps or 3
    timer = Timer(torch, device, reps=reps, warmup=2 if not quick else 1, use_graph=not args.no_graph)
    out_dir = args.out or os.environ.get("OUT")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)

    try:
        import infiniop
        lib_error = None
    except Exception as e:  # the package itself missing: time the peers anyway
        infiniop, lib_error = None, f"cannot import infiniop ({e}); set PYTHONPATH=python"
    lib_path = None
    if infiniop is not None:
        try:
            lib_path = infiniop.library_path()
            try:  # the library's version and the instruction set of its CPU kernels
                lib_path += f" (infiniop {infiniop.library_version()}, CPU kernels: {infiniop.cpu_isa()})"
            except Exception:
                pass
        except Exception as e:
            lib_error = f"cannot load the library: {str(e).splitlines()[0]} (set INFINIOP_LIBRARY_PATH=build-gpu)"
        if lib_error is None and device.type == "cuda":
            try:
                if infiniop.device_count() < 1:
                    lib_error = f"the library at {lib_path} sees no NVIDIA device (built without its CUDA backend?)"
            except Exception as e:
                lib_error = f"infiniop.device_count() failed: {e}"

    # ---------------------------------------------------------------- header
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        dev_name = props.name
        l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
        dev_info = f"{props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB, L2 {l2 / 2**20:.0f} MiB"
    else:
        dev_name, l2 = "cpu (dry run)", 1 << 20
        dev_info = "CPU (--dry-run: tiny shapes, wall-clock timing; the numbers mean nothing)"
    # INFINIOP_COMMIT names the commit of a tree exported without its git history
    commit = os.environ.get("INFINIOP_COMMIT") or None
    if commit is None:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=os.path.dirname(os.path.abspath(__file__)), timeout=10).stdout.strip() or None
        except Exception:
            commit = None

    # copy ceiling
    ceil_bytes = (256 << 10) if args.dry_run else ((1 << 30) if quick else (2 << 30))
    src = torch.randint(0, 256, (ceil_bytes,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    ceil_t, ceil_how, ceil_kind = best_copy(timer, torch, [(src, dst)], 2, True)
    ceil_how = f"{ceil_how}, {ceil_kind}"
    ceil_bps = 2 * ceil_bytes / ceil_t
    src = dst = None
    if device.type == "cuda":
        torch.cuda.empty_cache()

    timing_note = ("every case as CUDA graph replays of N back-to-back calls (GPU time only: no Python/ctypes/launch overhead, for every implementation)"
                   if not args.no_graph else "non-decode cases on the stream (includes any host overhead the GPU does not hide); decode cases as CUDA graph replays")
    if device.type != "cuda":
        timing_note = "wall clock on the CPU (dry run)"
    log("infiniop-c GPU benchmark" + (" (DRY RUN on the CPU)" if args.dry_run else ""))
    log(f"device:  {dev_info}")
    log(f"torch:   {torch.__version__} (CUDA {torch.version.cuda}); python {sys.version.split()[0]}")
    log(f"library: {lib_path or 'n/a: ' + str(lib_error)}" + (f"; commit {commit}" if commit else ""))
    log(f"copy ceiling: {ceil_bps / 1e9:.1f} GB/s (copy_ of {fmt_bytes(ceil_bytes)}, bytes read + written, {fmt_bytes(2 * ceil_bytes)} in {ceil_t * 1e6:.1f} us; {ceil_how})")
    log(f"timing:  {'CUDA events, ' if device.type == 'cuda' else ''}median of {reps} warm runs; {timing_note}")
    log("bytes:   the minimum the operation must move (inputs read once, outputs written once; causal softmax: the visible part of x)")
    log("%ceil:   effective GB/s over the copy ceiling; speed-up: best of eager/compile time over infiniop time")
    if lib_error:
        warn(f"infiniop: {lib_error}")
    log("")

    results = []
    compile_ok = not args.no_compile
    if compile_ok:
        try:
            import torch._dynamo  # noqa: F401
        except Exception as e:
            compile_ok = False
            warn(f"torch.compile unavailable: {e}")
    rot_target = 4 * l2

    hdr = f"{'case':44s} {'bytes':>9s}  {'impl':8s} {'time us':>10s} {'GB/s':>8s} {'%ceil':>6s} {'speedup':>7s}  note"
    log(hdr)
    log("-" * len(hdr))

    for case in cases:
        shape = case.tiny if args.dry_run else case.shape
        nbytes = min_bytes(case.op, case.dtype, case.wdtype, shape)
        # working set (what the buffers occupy), for rotation
        ws_bytes = nbytes if case.op != "causal_softmax" else 2 * math.prod(shape) * ITEMSIZE[case.dtype]
        n_sets = 1 if (case.decode or ws_bytes >= rot_target) else min(8, math.ceil(rot_target / ws_bytes))
        t_est = max(nbytes / ceil_bps, 2e-6)
        n_calls = max(1, min(200, int((1e-3 if quick else 2e-3) / t_est)))
        if args.dry_run:
            n_calls = min(n_calls, 3)
        graph = case.decode or not args.no_graph
        res = {"case": case.name, "op": case.op, "dtype": case.dtype, "weight_dtype": case.wdtype,
               "shape": list(shape), "decode": case.decode, "transposed_input": case.transposed,
               "bytes": nbytes, "buffer_sets": n_sets, "calls_per_timing": n_calls, "impls": {},
               "status": "ok", "errors": []}
        results.append(res)

        def record(impl, t, how, note=""):
            gbps = nbytes / t / 1e9
            res["impls"][impl] = {"time_us": t * 1e6, "gbps": gbps, "pct_ceiling": 100.0 * nbytes / t / ceil_bps,
                                  "timing": how, "note": note}

        def fail(impl, msg):
            res["impls"][impl] = {"time_us": None, "error": msg}

        try:
            built = build_case(torch, case, shape, device, n_sets, infiniop)
        except Exception as e:
            res["status"] = "failed"
            res["errors"].append(f"setup: {e}")
            warn(f"{case.name}: setup failed: {e}")
            traceback.print_exc()
            continue

        keep = collections.deque(maxlen=n_sets if n_sets > 1 else 0)

        def peer_call(f):
            def call(i):
                o = f(*built.args(i % n_sets))
                if n_sets > 1:
                    keep.append(o)  # rotate the peers' outputs too
            return call

        # -- copy of the same byte count
        try:
            half = max(1, nbytes // 2)
            cpairs = [(torch.randint(0, 256, (half,), dtype=torch.uint8, device=device),
                       torch.empty(half, dtype=torch.uint8, device=device)) for _ in range(n_sets)]
            t, how, kind = best_copy(timer, torch, cpairs, n_calls, graph)
            record("copy", t, how, f"same bytes ({kind})")
            cpairs = None
        except Exception as e:
            fail("copy", str(e))

        # -- eager: reference outputs, then every variant; the fastest is "eager"
        ref = None
        best = None
        for vname, f in built.eager.items():
            try:
                out = f(*built.args(0))
                if ref is None:
                    ref = tuple(o.clone() for o in out)
                else:  # a variant must compute the same thing as the first (natural) one
                    ok, err, detail = compare(torch, out, ref, case.dtype)
                    if not ok:
                        del out
                        res.setdefault("eager_variants", {})[vname] = None
                        warn(f"{case.name}: eager variant {vname} differs from the natural one, not used: {detail}")
                        continue
                del out
                t, how = timer.time(peer_call(f), n_calls, graph, keep.clear)
                res.setdefault("eager_variants", {})[vname] = t * 1e6
                if best is None or t < best[0]:
                    best = (t, how, vname)
            except Exception as e:
                keep.clear()
                res.setdefault("eager_variants", {})[vname] = None
                warn(f"{case.name}: eager variant {vname} failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        if best:
            record("eager", best[0], best[1], best[2] if len(built.eager) > 1 else "")
        else:
            fail("eager", "every eager variant failed")

        # -- torch.compile
        if not compile_ok:
            fail("compile", "skipped (--no-compile)" if args.no_compile else "torch.compile unavailable")
        elif time.monotonic() - t_start > args.budget:
            fail("compile", f"skipped: past the {args.budget:.0f} s budget")
        else:
            try:
                torch._dynamo.reset()
                cf = torch.compile(built.natural, dynamic=False)
                c0 = time.monotonic()
                out = cf(*built.args(0))
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                compile_s = time.monotonic() - c0
                note = f"compiled in {compile_s:.1f} s"
                if ref is not None:
                    ok, err, detail = compare(torch, out, ref, case.dtype)
                    if not ok:
                        note += f"; differs from eager: {detail}"
                del out
                t, how = timer.time(peer_call(cf), n_calls, graph, keep.clear)
                record("compile", t, how, note)
                res["impls"]["compile"]["compile_s"] = compile_s
            except Exception as e:
                keep.clear()
                msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                fail("compile", f"n/a: {msg}")
                warn(f"{case.name}: torch.compile failed: {msg}")
            try:
                torch._dynamo.reset()
            except Exception:
                pass

        # -- infiniop: check against eager, then time
        if lib_error:
            fail("infiniop", lib_error)
            res["status"] = "failed"
            res["errors"].append("infiniop unavailable")
        else:
            try:
                got = built.lib(0)
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                verified = None
                if ref is None:
                    res["errors"].append("no eager reference to check against")
                else:
                    ok, err, detail = compare(torch, got, ref, case.dtype)
                    res["max_abs_err"] = err
                    verified = ok
                    if not ok:
                        res["status"] = "failed"
                        res["errors"].append(f"MISMATCH against eager: {detail}")
                        warn(f"{case.name}: MISMATCH: infiniop differs from PyTorch eager: {detail}")
                res["verified"] = verified
                del got
                lib_call = lambda i: built.lib(i % n_sets)  # noqa: E731
                t, how = timer.time(lib_call, n_calls, graph)
                placement = "out="
                res["lib_placements"] = {"out=": t * 1e6}
                # outputs from the allocator at each call, as the peers
                # get theirs (placement changes the rate: see best_copy)
                def fresh_call(i):
                    o = built.lib(i % n_sets, fresh=True)
                    if n_sets > 1:
                        keep.append(o)

                t2, how2 = timer.time(fresh_call, n_calls, graph, keep.clear)
                res["lib_placements"]["fresh"] = t2 * 1e6
                if t2 < t:
                    t, how, placement = t2, how2, "fresh outputs"
                note = "WRONG RESULTS" if verified is False else ("" if placement == "out=" else placement)
                record("infiniop", t, how, note)
                if case.decode and device.type == "cuda":
                    res["impls"]["infiniop"]["stream_us_per_call"] = timer.host_per_call(lib_call) * 1e6
            except Exception as e:
                msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
                fail("infiniop", f"error: {msg}")
                res["status"] = "failed"
                res["errors"].append(f"infiniop: {msg}")
                warn(f"{case.name}: infiniop failed: {msg}")
                if device.type == "cuda":
                    timer._recover()
                    broken = cuda_broken(torch, device)
                    if broken:
                        res["errors"].append(f"CUDA context unusable afterwards: {broken}")

        # -- speed-up and targets
        peers = [res["impls"][k]["time_us"] for k in ("eager", "compile") if res["impls"].get(k, {}).get("time_us")]
        lib_r = res["impls"].get("infiniop", {})
        if lib_r.get("time_us"):
            if peers:
                res["speedup"] = min(peers) / lib_r["time_us"]
            if case.decode:
                tgt = f"<= {DECODE_TARGET_US} us"
                met = lib_r["time_us"] <= DECODE_TARGET_US
            else:
                tgt = f">= {case.target_pct:.0f}% ceil"
                met = lib_r["pct_ceiling"] >= case.target_pct
            if peers:
                tgt += ", >= best peer"
                met = met and lib_r["time_us"] <= min(peers)
            met = met and res.get("verified") is not False
            res["target"] = {"goal": tgt, "met": met}

        # -- print this case
        first = True
        for impl in ("copy", "eager", "compile", "infiniop"):
            r = res["impls"].get(impl)
            if r is None:
                continue
            c1 = f"{case.name:44s} {fmt_bytes(nbytes):>9s}" if first else f"{'':44s} {'':>9s}"
            first = False
            if r.get("time_us") is None:
                log(f"{c1}  {impl:8s} {'n/a':>10s} {'':>8s} {'':>6s} {'':>7s}  {r.get('error', '')}")
                continue
            sp = f"{res['speedup']:.2f}x" if impl == "infiniop" and res.get("speedup") else ""
            notes = [r.get("note", "")]
            if r["timing"] not in ("graph", "cpu") and not (r["timing"] == "stream" and args.no_graph):
                notes.append(f"timed: {r['timing']}")
            if impl == "infiniop":
                if "stream_us_per_call" in r:
                    notes.append(f"without graph {r['stream_us_per_call']:.1f} us/call")
                if "target" in res:
                    notes.append(f"target {res['target']['goal']}: {'met' if res['target']['met'] else 'MISS'}")
            note = "; ".join(n for n in notes if n)
            log(f"{c1}  {impl:8s} {r['time_us']:10.2f} {r['gbps']:8.1f} {r['pct_ceiling']:6.1f} {sp:>7s}  {note}")
        if res["status"] != "ok":
            log(f"{'':44s} FAILED: {'; '.join(res['errors'])}")

        built = ref = None
        keep.clear()
        gc.collect()
        if device.type == "cuda":
            broken = cuda_broken(torch, device)
            if broken:  # a sticky error (e.g. an illegal address): nothing more can run in this process
                rest = cases[cases.index(case) + 1:]
                warn(f"the CUDA context is unusable after {case.name} ({broken}); "
                     f"{len(rest)} remaining case(s) not run")
                for c in rest:
                    results.append({"case": c.name, "op": c.op, "dtype": c.dtype, "decode": c.decode, "impls": {},
                                    "status": "failed", "errors": ["not run: CUDA context unusable"]})
                break
            torch.cuda.empty_cache()

    # ----------------------------------------------------------------- summary
    elapsed = time.monotonic() - t_start
    n_failed = sum(r["status"] != "ok" for r in results)
    with_target = [r for r in results if "target" in r]
    n_met = sum(r["target"]["met"] for r in with_target)
    log("")
    log(f"summary (infiniop; {len(results)} cases, {elapsed:.0f} s):")
    log(f"  {'case':44s} {'time us':>9s} {'%ceil':>6s} {'speedup':>7s}  {'target':34s} status")
    for r in results:
        li = r["impls"].get("infiniop", {})
        tu = f"{li['time_us']:.2f}" if li.get("time_us") else "n/a"
        pc = f"{li['pct_ceiling']:.1f}" if li.get("time_us") else ""
        sp = f"{r['speedup']:.2f}x" if r.get("speedup") else ""
        tg = (r["target"]["goal"] + (": met" if r["target"]["met"] else ": MISS")) if "target" in r else ""
        st = "ok" if r["status"] == "ok" else ("FAILED: mismatch" if r.get("verified") is False else "FAILED: error")
        log(f"  {r['case']:44s} {tu:>9s} {pc:>6s} {sp:>7s}  {tg:34s} {st}")
    log(f"targets met: {n_met} of {len(results)}; failed cases: {n_failed}")
    if n_failed:
        warn(f"{n_failed} case(s) FAILED (mismatch or library error): see above")

    # ------------------------------------------------------------------ files
    if out_dir:
        doc = {"device": dev_name, "device_info": dev_info, "torch": torch.__version__, "cuda": torch.version.cuda,
               "library": lib_path, "library_error": lib_error, "commit": commit, "dry_run": args.dry_run,
               "quick": quick, "reps": reps, "timing": timing_note,
               "copy_ceiling": {"gbps": ceil_bps / 1e9, "bytes_copied": ceil_bytes, "time_us": ceil_t * 1e6},
               "elapsed_s": elapsed, "cases": results}
        with open(os.path.join(out_dir, "bench.json"), "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(out_dir, "bench.txt"), "w") as f:
            f.write("\n".join(log.lines) + "\n")
        # In a separate process: matplotlib beside torch's extensions failed
        # once with a pybind11 error (H200, torch 2.11).
        written = ["bench.txt", "bench.json"]
        try:
            cp = subprocess.run([sys.executable, os.path.abspath(__file__), "--chart", os.path.join(out_dir, "bench.json")],
                                capture_output=True, text=True, timeout=120)
            if cp.returncode != 0:
                log(f"(chart failed: {(cp.stderr.strip().splitlines() or ['?'])[-1]}; no bench.png)")
            elif os.path.isfile(os.path.join(out_dir, "bench.png")):
                written.append("bench.png")
            else:
                log("(chart failed: no bench.png was written)")
        except Exception as e:
            log(f"(chart failed: {e}; no bench.png)")
        log(f"wrote {', '.join(os.path.join(out_dir, n) for n in written)}")
    return 1 if n_failed else 0


def draw_chart(results, path, dev_name, ceil_bps):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    impls = [("copy", "copy (same bytes)", "#bbbbbb"), ("eager", "PyTorch eager", "#4c72b0"),
             ("compile", "torch.compile", "#dd8452"), ("infiniop", "infiniop", "#55a868")]
    n = len(results)
    width = 0.2
    fig, ax = plt.subplots(figsize=(max(8.0, 0.9 * n + 2), 5.5))
    vals = [v["pct_ceiling"] for r in results for v in r["impls"].values() if v.get("time_us")]
    top = max(110.0, min(max(vals, default=100.0) * 1.08, 200.0))  # taller bars (L2-resident copies) are cut
    for k, (key, label, color) in enumerate(impls):
        xs, ys = [], []
        for i, r in enumerate(results):
            v = r["impls"].get(key, {})
            if v.get("time_us"):
                xs.append(i + (k - 1.5) * width)
                ys.append(v["pct_ceiling"])
        bars = ax.bar(xs, ys, width, label=label, color=color)
        if key == "infiniop":  # the value: % of ceiling, or the time for decode cases (their target is a time)
            lib_rows = [r for r in results if r["impls"].get(key, {}).get("time_us")]
            for bar, y, r in zip(bars, ys, lib_rows):
                txt = f"{r['impls'][key]['time_us']:.1f}us" if r["decode"] else f"{y:.0f}"
                ax.annotate(txt, (bar.get_x() + bar.get_width() / 2, min(y, top)), ha="center", va="bottom", fontsize=7)
    for y, style in ((90, "--"), (95, ":")):
        ax.axhline(y, color="k", linestyle=style, linewidth=0.8)
    ax.set_ylim(0, top)
    ax.set_xticks(range(n))
    ax.set_xticklabels([r["case"] for r in results], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% of copy ceiling (min. bytes / time)")
    ax.set_title(f"infiniop-c vs PyTorch on {dev_name} (copy ceiling {ceil_bps / 1e9:.0f} GB/s)", pad=14)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
