#!/usr/bin/env python3
"""PyTorch CPU peers of build/bench/infiniop-bench's CPU cases: eager and
torch.compile (inductor), same shapes, dtypes and minimum-bytes count, so
their GB/s compare with the bench's table.

    python3 bench/cpu_peers.py [--reps N] [--case SUBSTRING] [--no-compile]
                               [--ours BENCH.json] [--json OUT.json]

--ours: the JSON of `infiniop-bench --json` from the same run (the listed
set at the most threads) adds our time and the ratios peer / ours (> 1: we
are faster). bench/cpu_bench.sh runs both. The peers do what a PyTorch user
writes: add_rms_norm is `r = a + b; F.rms_norm(r, ...)` in the activation
dtype (torch rounds r before the norm; ours uses the float32 sum, SPEC);
layer_norm is F.layer_norm (it writes only the output, ours also writes the
standardization and std: the bytes counted are ours, so a peer's GB/s is
conservative); causal_softmax is masked_fill + softmax; silu and sigmoid
are F.silu and torch.sigmoid.
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("cpu_peers.py: torch not installed; no PyTorch peers")

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
ES = {"f16": 2, "bf16": 2, "f32": 4}

# name, op, dtype, shape (as in bench/infiniop_bench.c's g_cases)
CASES = [
    ("add_rms_norm bf16/bf16 4096x4096", "arn", "bf16", (4096, 4096)),
    ("add_rms_norm f32/f32 4096x4096", "arn", "f32", (4096, 4096)),
    ("layer_norm bf16 4096x4096", "ln", "bf16", (4096, 4096)),
    ("layer_norm f32 4096x4096", "ln", "f32", (4096, 4096)),
    ("causal_softmax f32 8x1024x1024", "cs", "f32", (8, 1024, 1024)),
    ("causal_softmax bf16 8x1024x1024", "cs", "bf16", (8, 1024, 1024)),
    ("silu f32 4096x4096", "silu", "f32", (4096, 4096)),
    ("silu bf16 4096x4096", "silu", "bf16", (4096, 4096)),
    ("sigmoid f16 4096x4096", "sigmoid", "f16", (4096, 4096)),
    ("add_rms_norm bf16/bf16 65536x128", "arn", "bf16", (65536, 128)),
]


def setup(op, dt, shape):
    """(function, args, minimum bytes as the bench counts them)."""
    t, es = DT[dt], ES[dt]
    n = 1
    for s in shape:
        n *= s
    D = shape[-1]
    if op == "arn":
        a, b = torch.randn(shape, dtype=t), torch.randn(shape, dtype=t)
        w = torch.rand(D, dtype=t) + 0.5

        def f(a, b, w):
            r = a + b
            return F.rms_norm(r, (D,), w, 1e-6), r

        return f, (a, b, w), 4 * n * es + D * es
    if op == "ln":
        x = torch.randn(shape, dtype=t)
        w, bb = torch.randn(D, dtype=t), torch.randn(D, dtype=t)
        return (lambda x, w, bb: F.layer_norm(x, (D,), w, bb, 1e-5)), (x, w, bb), 3 * n * es + (n // D) * es + 2 * D * es
    if op == "cs":
        B, S, T = shape
        x = torch.randn(shape, dtype=t)
        mask = torch.ones(S, T, dtype=torch.bool).triu(T - S + 1)
        visible = sum(i + T - S + 1 for i in range(S))
        return (lambda x, m: x.masked_fill(m, float("-inf")).softmax(-1)), (x, mask), B * visible * es + n * es
    x = torch.randn(shape, dtype=t) * 4
    return (F.silu if op == "silu" else torch.sigmoid), (x,), 2 * n * es


def median_time(f, args, reps):
    for _ in range(3):
        f(*args)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*args)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--case")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--ours")
    ap.add_argument("--json")
    a = ap.parse_args()
    ours = {}
    if a.ours:
        rows = json.load(open(a.ours))
        top = max((r["threads"] for r in rows), default=0)
        ours = {r["case"]: r for r in rows if r["set"] == "listed" and r["threads"] == top}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; median of {a.reps} runs\n")
    print("| case | ours | torch eager | torch.compile | eager/ours | compile/ours | oneDNN/ours |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    out = []
    for name, op, dt, shape in CASES:
        if a.case and a.case not in name:
            continue
        f, args, nbytes = setup(op, dt, shape)
        with torch.no_grad():
            te = median_time(f, args, a.reps)
            tc = None
            if not a.no_compile:
                try:
                    tc = median_time(torch.compile(f, dynamic=False), args, a.reps)
                except Exception as e:  # inductor needs a C++ compiler
                    print(f"  torch.compile failed for {name}: {type(e).__name__}", file=sys.stderr)
        o = ours.get(name)
        to = o["time_s"] if o else None
        tdn = o.get("onednn_time_s") if o else None

        def ms(t):
            return f"{t * 1e3:.3f} ms ({nbytes / t * 1e-9:.1f} GB/s)" if t else "-"

        def ratio(t):
            return f"{t / to:.2f}x" if t and to else "-"

        print(f"| {name} | {ms(to)} | {ms(te)} | {ms(tc)} | {ratio(te)} | {ratio(tc)} | {ratio(tdn)} |", flush=True)
        out.append({"case": name, "bytes": nbytes, "ours_s": to, "eager_s": te, "compile_s": tc, "onednn_s": tdn})
        del f, args
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
