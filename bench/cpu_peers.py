#!/usr/bin/env python3
"""PyTorch CPU peers of infiniop-bench's CPU cases: eager and torch.compile
(inductor), same shapes, dtypes and minimum-bytes count, so their GB/s
compare with the bench's table.

    python3 bench/cpu_peers.py [--case SUBSTRING] [--no-compile] [--lib BUILD_DIR]
                               [--time-cap S] [--min-rounds N] [--ours BENCH.json] [--json OUT.json]

Paired rounds, as infiniop-bench's: each case runs in rounds that alternate
ours (the library through this tree's Python package on the same torch
tensors, outputs given, when `import infiniop` finds the library: --lib
build-cpu), the peers and a torch copy of the same bytes (min_bytes / 2
read and written), 3 samples of each in a row (so that each side's fastest
follows a call of its own, not another side's cache footprint). A round
keeps the fastest of each and its
ratios: copy time / contender time ("of copy") and peer time / our time
(> 1: we are faster). Reported: median [interquartile range] over the
rounds, which go on until every range is within +-5% or --time-cap seconds
(a wider one is named in the note). Without the library, --ours (the JSON
of `infiniop-bench --json`) gives our time and oneDNN's ratio, unpaired
(marked *). A row where more than a quarter of the rounds kept a sample
during which a thread was preempted (getrusage ru_nivcsw) is marked
"preempted (busy machine)". bench/cpu_bench.sh runs both.

The peers do what a PyTorch user writes: add_rms_norm is `r = a + b;
F.rms_norm(r, ...)` in the activation dtype (torch rounds r before the
norm; ours uses the float32 sum, SPEC); layer_norm is F.layer_norm (it
writes only the output, ours also writes the standardization and std: the
bytes counted are ours, so a peer's GB/s is conservative); causal_softmax
is masked_fill + softmax; silu and sigmoid are F.silu and torch.sigmoid.
"""
import argparse
import json
import os
import resource
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


def ours_fn(op, args):
    """Our operator on the same tensors, outputs allocated once, or None."""
    try:
        import infiniop

        infiniop.cpu_isa()
    except Exception as e:  # no package or no library: unpaired (--ours)
        print(f"(infiniop not importable: {type(e).__name__}: {e}; ours unpaired, from --ours)", file=sys.stderr)
        return None
    if op == "arn":
        a, b, w = args
        out = (torch.empty_like(a), torch.empty_like(a))
        return lambda: infiniop.add_rms_norm(a, b, w, 1e-6, out=out)
    if op == "ln":
        x, w, bb = args
        out = (torch.empty_like(x), torch.empty_like(x), torch.empty(x.shape[:-1], dtype=x.dtype))
        return lambda: infiniop.layer_norm(x, w, bb, 1e-5, out=out)
    x = args[0]
    y = torch.empty_like(x)
    f = {"cs": infiniop.causal_softmax, "silu": infiniop.silu, "sigmoid": infiniop.sigmoid}[op]
    return lambda: f(x, out=y)


PER_ROUND = 3
SPREAD = 0.05


def calls_for(f):
    """Calls per sample so that one lasts about 200 us; warms f up."""
    for _ in range(3):
        f()
    t0 = time.perf_counter()
    f()
    t = time.perf_counter() - t0
    return max(1, min(20000, int(200e-6 / t) + 1)) if t > 0 else 1


def preemptions():
    """Involuntary context switches of the process (every thread) so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw


def sample(f, n):
    """(seconds per call, whether a thread was preempted meanwhile)."""
    p0 = preemptions()
    t0 = time.perf_counter()
    for _ in range(n):
        f()
    t = (time.perf_counter() - t0) / n
    return t, preemptions() != p0


def quart(xs):
    """median, first and third quartile (linear interpolation)."""
    s = sorted(xs)

    def q(p):
        pos = p * (len(s) - 1)
        i = int(pos)
        return s[i] + (pos - i) * (s[i + 1] - s[i]) if i + 1 < len(s) else s[-1]

    return q(0.5), q(0.25), q(0.75)


def is_wide(m, q1, q3):
    return q1 < (1 - SPREAD) * m or q3 > (1 + SPREAD) * m


def ratios(times):
    """Per round: copy time / contender time ("of copy"), and peer time /
    our time for every peer when ours runs in the rounds."""
    r = {}
    for k, ts in times.items():
        if k != "copy":
            r[k + " of copy"] = [c / t for c, t in zip(times["copy"], ts)]
    if "ours" in times:
        for k, ts in times.items():
            if k not in ("copy", "ours"):
                r[k + "/ours"] = [t / o for t, o in zip(ts, times["ours"])]
    return r


def busy(preempted, rounds):
    """More than a quarter of the rounds kept a preempted sample: the
    scheduler, not the code, set those times."""
    return 4 * preempted > rounds


def paired(fns, min_rounds, cap):
    """fns: name -> callable, "copy" among them. Interference only adds
    time, so a round keeps the fastest of its samples of each; rounds go on
    until every ratio's range is within +-SPREAD, or cap seconds.
    Returns (per-round times by name, rounds with a preempted kept sample)."""
    calls = {k: calls_for(f) for k, f in fns.items()}
    times = {k: [] for k in fns}
    preempted = 0
    t0 = time.perf_counter()
    while True:
        got = {k: [] for k in fns}
        for k, f in fns.items():  # each side's samples in a row (infiniop-bench's measure())
            for _ in range(PER_ROUND):
                got[k].append(sample(f, calls[k]))
        pre = False
        for k in fns:
            t, p = min(got[k])
            times[k].append(t)
            pre |= p
        preempted += pre
        n = len(times["copy"])
        if n < min_rounds:
            continue
        settled = not any(is_wide(*quart(r)) for r in ratios(times).values()) and not busy(preempted, n)
        if settled or time.perf_counter() - t0 > cap or n >= 201:
            return times, preempted


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--lib", help="build folder (or library) of infiniop: ours runs in the same rounds")
    ap.add_argument("--time-cap", type=float, default=3.0, help="seconds of rounds per case")
    ap.add_argument("--min-rounds", type=int, default=7)
    ap.add_argument("--ours", help="infiniop-bench --json file: our time when the library is not importable")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.lib:
        os.environ["INFINIOP_LIBRARY_PATH"] = os.path.abspath(a.lib)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "python"))  # the package of this tree, when not installed
    ours_json = {}
    if a.ours:
        rows = json.load(open(a.ours))
        top = max((r["threads"] for r in rows), default=0)
        ours_json = {r["case"]: r for r in rows if r["set"] == "listed" and r["threads"] == top}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; paired rounds with a torch copy of the same "
          f"bytes: median [IQR] of per-round ratios, until +-{SPREAD:.0%} or {a.time_cap:g} s\n")
    print("| case | ours | torch eager | torch.compile | ours of copy | eager of copy | compile of copy "
          "| eager/ours | compile/ours | oneDNN/ours | rounds | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    out = []
    for name, op, dt, shape in CASES:
        if a.case and a.case not in name:
            continue
        f, args, nbytes = setup(op, dt, shape)
        src = torch.ones(nbytes // 2, dtype=torch.uint8)
        dst = torch.empty_like(src)
        fns = {"copy": lambda: dst.copy_(src)}
        with torch.no_grad():
            ours = ours_fn(op, args)
            if ours:
                fns["ours"] = ours
            fns["eager"] = lambda: f(*args)
            if not a.no_compile:
                try:
                    fc = torch.compile(f, dynamic=False)
                    fc(*args)
                    fns["compile"] = lambda: fc(*args)
                except Exception as e:  # inductor needs a C++ compiler
                    print(f"  torch.compile failed for {name}: {type(e).__name__}", file=sys.stderr)
            times, preempted = paired(fns, a.min_rounds, a.time_cap)
        R = {k: quart(v) for k, v in ratios(times).items()}
        T = {k: quart(v)[0] for k, v in times.items()}
        o = ours_json.get(name)
        if "ours" not in T and o:  # unpaired: the bench's own run
            T["ours"] = o["time_s"]
            R["ours of copy"] = (o["of_copy"], o.get("of_copy_q1", o["of_copy"]), o.get("of_copy_q3", o["of_copy"]))
            for k in ("eager", "compile"):
                if k in T:
                    R[k + "/ours*"] = (T[k] / T["ours"],) * 3
        dn = (o or {}).get("onednn_ratio")
        wide_rows = [k for k, q in R.items() if is_wide(*q)]

        def ms(k):
            t = T.get(k)
            return f"{t * 1e3:.3f} ms ({nbytes / t * 1e-9:.1f} GB/s)" if t else "-"

        def rq(k, pct=False):
            for kk in (k, k + "*"):
                if kk in R:
                    m, q1, q3 = R[kk]
                    star = "*" if kk.endswith("*") else ""
                    if pct:
                        return f"{100 * m:.1f}% [{100 * q1:.1f}-{100 * q3:.1f}]{star}"
                    return f"{m:.2f}x [{q1:.2f}-{q3:.2f}]{star}"
            return "-"

        note = "wide: " + ", ".join(wide_rows) if wide_rows else ""
        if busy(preempted, len(times["copy"])):
            note += ("; " if note else "") + f"preempted in {preempted} of {len(times['copy'])} rounds (busy machine)"
        print(f"| {name} | {ms('ours')} | {ms('eager')} | {ms('compile')} | {rq('ours of copy', 1)} "
              f"| {rq('eager of copy', 1)} | {rq('compile of copy', 1)} | {rq('eager/ours')} | {rq('compile/ours')} "
              f"| {f'{dn:.2f}x*' if dn else '-'} | {len(times['copy'])} | {note} |", flush=True)
        out.append({"case": name, "bytes": nbytes, "rounds": len(times["copy"]), "ours_s": T.get("ours"),
                    "eager_s": T.get("eager"), "compile_s": T.get("compile"), "copy_s": T["copy"],
                    "ratios": {k: {"median": q[0], "q1": q[1], "q3": q[2]} for k, q in R.items()},
                    "wide": wide_rows, "preempted_rounds": preempted, "onednn_ratio": dn})
        del f, args, fns, src, dst
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
