#!/usr/bin/env python3
"""GPU benchmark: infiniop-c against PyTorch eager and torch.compile on 16
chosen cases, each with a target.

Every case is measured as bench/gpu_harness.py measures (the same as the
shape sweep, bench/gpu_sweep.py): the library's outputs checked against
float64; the library (best of out= and fresh outputs), a copy of the same
byte count and PyTorch eager timed in the same rounds as CUDA-graph replays
of N back-to-back calls (GPU time only; --no-graph times non-decode cases
on the stream); torch.compile (dynamic=False, contiguous outputs, dynamo
reset per case) in a torch-only worker process after a parallel precompile.

Targets: decode cases <= 2.5 us; the others >= their share of the
same-bytes copy (90%, 95% for the largest contiguous cases); every case at
least as fast as the best peer.

Run (from the repository root, after building the CUDA library into
build-gpu/):

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/gpu_bench.py
        [--quick] [--cases REGEX] [--no-compile] [--no-graph] [--out DIR]

Writes the table to stdout and, with $OUT (or --out), bench.txt,
bench.json, bench.md and bench.png there. --dry-run runs the whole program
on the CPU with tiny shapes (no GPU needed) to check its logic.

Exit status: 0 all cases ran and matched; 1 some case failed (mismatch or a
library error); 2 it could not run at all (no torch, no CUDA device).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_harness as H  # noqa: E402
from gpu_harness import EPS_LN, EPS_RMS, ITEMSIZE, Case, fmt_bytes, min_bytes  # noqa: E402,F401

DECODE_TARGET_US = H.SMALL_US
TIE = 0.97  # within 3% of the best peer counts as a tie

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
    Case("silu", "bf16", (8192, 8192), layout="transposed", tiny=(48, 80)),
    Case("sigmoid", "bf16", (16384, 16384), tiny=(64, 64), target_pct=95.0),
    Case("sigmoid", "f64", (4096, 8192), tiny=(32, 64)),
]
for _c in CASES:
    _c.cat = "bench"


def parse_args(argv):
    p = argparse.ArgumentParser(description="infiniop-c GPU benchmark against PyTorch eager and torch.compile")
    p.add_argument("--quick", action="store_true", help="5 timing rounds instead of 15")
    p.add_argument("--cases", metavar="REGEX", help="run only the cases whose name matches (re.search), e.g. 'silu|decode'")
    p.add_argument("--list", action="store_true", help="list the cases and their minimum bytes, and exit")
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--no-graph", action="store_true", help="time non-decode cases on the stream instead of as CUDA graph replays")
    p.add_argument("--reps", type=int, help="timing rounds (default 15, --quick 5)")
    p.add_argument("--budget", type=float, default=3600.0, help="seconds; cases not started by then are not run")
    p.add_argument("--out", help="directory for bench.txt, bench.json, bench.md, bench.png (default: $OUT)")
    p.add_argument("--device", default="cuda", help="CUDA device (default: cuda, i.e. the current one)")
    p.add_argument("--dry-run", action="store_true",
                   help="check the program's logic on the CPU with tiny shapes (timings mean nothing)")
    p.add_argument("--chart", metavar="JSON", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def target(r, case):
    """(goal text, met) of a measured case."""
    li = r["impls"].get("infiniop", {})
    if not li.get("time_us"):
        return None
    if case.decode:
        goal, met = f"<= {DECODE_TARGET_US} us", li["time_us"] <= DECODE_TARGET_US
    else:
        pct = case.target_pct or 90.0
        goal, met = f">= {pct:.0f}% copy", r.get("pct_copy", 0.0) >= pct
    if r.get("ratio"):
        goal += ", >= best peer"
        met = met and r["ratio"] >= TIE
    return goal, met and r["status"] == "ok"


def print_case(r):
    first = True
    for impl in ("copy", "eager", "compile", "infiniop"):
        v = r["impls"].get(impl)
        if v is None:
            continue
        c1 = f"{r['case']:44s} {fmt_bytes(r['bytes']):>9s}" if first else f"{'':44s} {'':>9s}"
        first = False
        if v.get("time_us") is None:
            H.log(f"{c1}  {impl:8s} {'n/a':>10s} {'':>8s} {'':>6s} {'':>7s}  {v.get('error', '')}")
            continue
        pct = 100.0 * r["impls"]["copy"]["time_us"] / v["time_us"] if r["impls"].get("copy", {}).get("time_us") else 0.0
        sp = f"{r['ratio']:.2f}x" if impl == "infiniop" and r.get("ratio") else ""
        notes = [v.get("note", "")]
        if v["timing"] not in ("graph", "cpu", "stream"):
            notes.append(f"timed: {v['timing']}")
        if impl == "infiniop" and r.get("target"):
            notes.append(f"target {r['target']['goal']}: {'met' if r['target']['met'] else 'MISS'}")
        H.log(f"{c1}  {impl:8s} {v['time_us']:10.2f} {v['gbps']:8.1f} {pct:6.1f} {sp:>7s}  {'; '.join(n for n in notes if n)}")
    if r["status"] == "not run" or r["status"] == "failed":
        H.log(f"{r['case']:44s} {r['status'].upper()}: {'; '.join(r['errors'])}")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.chart:
        return H.chart_from_json(args.chart, "bench.png")
    cases = CASES
    if args.cases:
        try:
            rx = re.compile(args.cases)
        except re.error as e:
            print(f"gpu_bench: bad --cases regex {args.cases!r}: {e}", file=sys.stderr)
            return 2
        cases = [c for c in cases if rx.search(c.name)]
        if not cases:
            print(f"gpu_bench: no case matches {args.cases!r}; cases are:\n  " + "\n  ".join(c.name for c in CASES),
                  file=sys.stderr)
            return 2
    if args.list:
        for c in cases:
            print(f"{c.name:44s} {fmt_bytes(c.nbytes()):>10s}")
        return 0
    if args.dry_run:
        cases = [c.with_shape(c.tiny or c.shape) for c in cases]
    by_name = {c.name: c for c in cases}
    reps = args.reps or (3 if args.dry_run else (5 if args.quick else 15))
    env, out_dir = H.start("gpu_bench", "cpu" if args.dry_run else args.device, reps, args.out)
    if env is None:
        return 2
    env.header("infiniop-c GPU benchmark" + (" (DRY RUN on the CPU)" if args.dry_run else ""),
               f"median of {reps} rounds; " + ("decode cases as CUDA-graph replays, the others on the stream"
                                               if args.no_graph else "every case as CUDA-graph replays of N calls"))
    H.log("")
    hdr = f"{'case':44s} {'bytes':>9s}  {'impl':8s} {'time us':>10s} {'GB/s':>8s} {'%copy':>6s} {'speedup':>7s}  note"
    H.log(hdr)
    H.log("-" * len(hdr))

    def report(r):
        t = target(r, by_name[r["case"]])
        if t:
            r["target"] = {"goal": t[0], "met": t[1]}
        print_case(r)

    opts = {"graph_below": 1e6 if args.no_graph else float("inf"), "graph_below_us": 0.0 if args.no_graph else 1e12,
            "compile_off_reason": "skipped (--no-compile)"}
    results, elapsed = H.run(env, cases, budget=args.budget, compile_on=not args.no_compile, opts=opts,
                             print_case=report, seed_of=lambda c: 1234 + zlib.crc32(c.name.encode()) % 100000)
    n_failed = sum(r["status"] != "ok" for r in results)
    n_met = sum(1 for r in results if r.get("target", {}).get("met"))
    H.log("")
    H.log(f"summary (infiniop; {len(results)} cases, {elapsed:.0f} s):")
    H.log(f"  {'case':44s} {'time us':>9s} {'%copy':>6s} {'speedup':>7s}  {'target':34s} status")
    for r in results:
        li = r["impls"].get("infiniop", {})
        tu = f"{li['time_us']:.2f}" if li.get("time_us") else "n/a"
        pc = f"{r['pct_copy']:.1f}" if "pct_copy" in r else ""
        sp = f"{r['ratio']:.2f}x" if r.get("ratio") else ""
        tg = (r["target"]["goal"] + (": met" if r["target"]["met"] else ": MISS")) if "target" in r else ""
        H.log(f"  {r['case']:44s} {tu:>9s} {pc:>6s} {sp:>7s}  {tg:34s} {r['status']}")
    for line in H.summary_lines(H.summarize(results), env.cpu):
        H.log(line)
    H.log(f"targets met: {n_met} of {len(results)}; failed cases: {n_failed}")
    if n_failed:
        H.warn(f"{n_failed} case(s) FAILED (mismatch, library error or not run): see above")
    if out_dir:
        doc = dict(env.doc(), dry_run=args.dry_run, quick=args.quick, elapsed_s=elapsed,
                   summary=H.summarize(results), cases=results)
        files = H.write_outputs(out_dir, "bench", doc, "infiniop-c GPU benchmark", os.path.abspath(__file__))
        with open(os.path.join(out_dir, "bench.txt"), "w") as f:
            f.write("\n".join(H.log.lines) + "\n")
        H.log(f"wrote {', '.join([os.path.join(out_dir, 'bench.txt')] + files)}")
    return 1 if n_failed else 0


if __name__ == "__main__":
    sys.exit(main())
