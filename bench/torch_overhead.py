#!/usr/bin/env python3
"""Per-call cost of infiniop's PyTorch operators against PyTorch's own, on a
1 x 4096 float32 tensor (so small that the call, not the arithmetic, is
measured).

Columns, microseconds per call (the best of --repeats loops of --calls calls):
  torch        the matching PyTorch call: F.silu, torch.sigmoid,
               F.rms_norm(a + b), F.layer_norm, torch.softmax of a causally
               masked input (masked_fill with a precomputed mask)
  torch.ops    torch.ops.infiniop.<op>(...)  (the operator, as a compiled
               graph or a model calls it)
  infiniop.*   infiniop.<op>(...)  (the Python function: argument handling,
               out=, the no-grad check, then the operator)
  ratio        torch.ops / torch (the target: <= 1.5)
On CUDA the times are host time per call with no synchronisation (the GPU
work of one call is shorter than its launch, so the queue does not fill).
Then the numpy path: infiniop.<op>(numpy array) through ctypes, beside a
numpy expression of the same operator for scale.

Usage: python bench/torch_overhead.py [--device cpu|cuda|all] [--calls N]
       [--repeats N] [--quick]
Timings go to docs/PERFORMANCE.md ("PyTorch operators"); nothing here is
asserted (python/tests/test_scripts.py only runs it).
"""

from __future__ import annotations

import argparse
import os

# OpenMP threads that spin while idle (the default) steal the cores from the
# next operator when the machine is shared (two runtimes' pools, or other
# processes): timings then swing by 100x. Passive waiting, set before torch
# loads its OpenMP runtime, steadies them for both sides of the comparison
# (an OMP_WAIT_POLICY already set is kept).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import infiniop
import infiniop.torch_ops  # noqa: F401  (registers torch.ops.infiniop.*)

D = 4096
EPS = 1e-6


def per_call_us(fn, calls, repeats, device):
    for _ in range(max(calls // 10, 10)):  # warm: descriptors, allocator, caches
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t = time.perf_counter() - t0  # host time only: no synchronisation
        best = min(best, t)
        if device == "cuda":
            torch.cuda.synchronize()
    return best / calls * 1e6


def torch_cases(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, D, generator=g).to(device)
    r = torch.randn(1, D, generator=g).to(device)
    w = torch.randn(D, generator=g).to(device)
    b = torch.randn(D, generator=g).to(device)
    s = torch.randn(1, D, generator=g).to(device)  # a 1 x T row of scores (S = 1)
    S, T = s.shape
    mask = torch.arange(T, device=device)[None, :] > torch.arange(S, device=device)[:, None] + (T - S)
    ops = torch.ops.infiniop
    return [
        ("silu", lambda: F.silu(x), lambda: ops.silu(x), lambda: infiniop.silu(x)),
        ("sigmoid", lambda: torch.sigmoid(x), lambda: ops.sigmoid(x), lambda: infiniop.sigmoid(x)),
        ("add_rms_norm", lambda: F.rms_norm(x + r, (D,), w, EPS), lambda: ops.add_rms_norm(x, r, w, EPS),
         lambda: infiniop.add_rms_norm(x, r, w, EPS)),
        ("layer_norm", lambda: F.layer_norm(x, (D,), w, b, EPS), lambda: ops.layer_norm(x, w, b, EPS),
         lambda: infiniop.layer_norm(x, w, b, EPS)),
        ("causal_softmax", lambda: torch.softmax(s.masked_fill(mask, float("-inf")), -1),
         lambda: ops.causal_softmax(s), lambda: infiniop.causal_softmax(s)),
    ]


def numpy_cases():
    rng = np.random.default_rng(0)
    x, r, w, b = (rng.standard_normal((1, D), dtype=np.float32) for _ in range(4))
    w, b = w[0], b[0]

    def rms(a, c):
        h = a + c
        return h / np.sqrt(np.mean(h * h, -1, keepdims=True) + EPS) * w, h

    def ln(a):
        m = a.mean(-1, keepdims=True)
        sd = np.sqrt(a.var(-1, keepdims=True) + EPS)
        return (a - m) / sd * w + b

    def softmax(a):
        e = np.exp(a - a.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    return [
        ("silu", lambda: x / (1 + np.exp(-x)), lambda: infiniop.silu(x)),
        ("sigmoid", lambda: 1 / (1 + np.exp(-x)), lambda: infiniop.sigmoid(x)),
        ("add_rms_norm", lambda: rms(x, r), lambda: infiniop.add_rms_norm(x, r, w, EPS)),
        ("layer_norm", lambda: ln(x), lambda: infiniop.layer_norm(x, w, b, EPS)),
        ("causal_softmax", lambda: softmax(x), lambda: infiniop.causal_softmax(x)),
    ]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="all", choices=["cpu", "cuda", "all"])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="few calls (the test suite's run)")
    args = p.parse_args(argv)
    if args.quick:
        args.calls, args.repeats = 20, 1
    native = infiniop.torch_ops.NATIVE
    print(f"infiniop {infiniop.library_version()} ({infiniop.library_path()}), torch {torch.__version__}, "
          f"torch.ops.infiniop: {'native (libinfiniop_torch)' if native else 'Python (torch.library.custom_op; no binding built)'}; "
          f"torch threads {torch.get_num_threads()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    devices = []
    if args.device in ("cpu", "all"):
        devices.append("cpu")
    if args.device in ("cuda", "all"):
        if torch.cuda.is_available() and infiniop.device_count(infiniop.Device.NVIDIA) > 0:
            devices.append("cuda")
        elif args.device == "cuda":
            print("no usable GPU (torch sees none, or the library has no CUDA backend)")
            return 1
    with torch.inference_mode(False), torch.no_grad():
        for dev in devices:
            what = "host time per call, no synchronisation" if dev == "cuda" else "time per call"
            print(f"\n{dev}, 1 x {D} float32, {what} (us; best of {args.repeats} x {args.calls} calls)")
            print(f"  {'operator':16s} {'torch':>8s} {'torch.ops':>10s} {'infiniop.*':>11s} {'ratio':>6s}")
            for name, t_fn, o_fn, p_fn in torch_cases(dev):
                tt = per_call_us(t_fn, args.calls, args.repeats, dev)
                to = per_call_us(o_fn, args.calls, args.repeats, dev)
                tp = per_call_us(p_fn, args.calls, args.repeats, dev)
                print(f"  {name:16s} {tt:8.2f} {to:10.2f} {tp:11.2f} {to / tt:6.2f}")
    print(f"\nnumpy arrays (ctypes path), 1 x {D} float32 (us per call)")
    print(f"  {'operator':16s} {'numpy expr':>10s} {'infiniop.*':>11s}")
    for name, n_fn, i_fn in numpy_cases():
        tn = per_call_us(n_fn, args.calls, args.repeats, "cpu")
        ti = per_call_us(i_fn, args.calls, args.repeats, "cpu")
        print(f"  {name:16s} {tn:10.2f} {ti:11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
