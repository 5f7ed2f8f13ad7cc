#!/usr/bin/env python3
"""Run each benchmark case's library call a few times, the last inside an
NVTX range named "prof", for a profiler to pick up (one kernel per case):

    ncu --clock-control none --nvtx --nvtx-include "prof/" \\
        --section SpeedOfLight ... python3 bench/gpu_profile.py [--cases REGEX]

The cases are those of bench/gpu_bench.py, built by bench/gpu_harness.py
(the inputs the bench times). The order of the kernels in the profiler's
report is the order printed here.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench  # noqa: E402
import gpu_harness  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cases", help="regex over the case names")
    p.add_argument("--peers", action="store_true", help="also profile the first eager variant of each case (after the library's kernel)")
    p.add_argument("--sweep", action="store_true", help="the cases of bench/gpu_sweep.py (--cases selects among them) "
                   "rather than those of bench/gpu_bench.py")
    p.add_argument("--compile", action="store_true", help="also profile the kernels of the case's torch.compile peer "
                   "(static shapes, compiled before the profiled call)")
    args = p.parse_args()
    import torch
    import infiniop

    dev = torch.device("cuda", torch.cuda.current_device())
    if args.sweep:
        import gpu_sweep
        pool = gpu_sweep.cases()
    else:
        pool = gpu_bench.CASES
    cases = [c for c in pool if not args.cases or re.search(args.cases, c.name)]
    for c in cases:
        built = gpu_harness.build(torch, c, dev, 1, infiniop)
        for _ in range(3):
            built.lib(0)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("prof")
        built.lib(0)
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        print(f"profiled: {c.name}", flush=True)
        if args.peers:
            f = next(iter(built.eager.values()))
            for _ in range(3):
                f(0)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("prof")
            f(0)
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
            print(f"profiled: {c.name} (eager)", flush=True)
        if args.compile:
            torch._dynamo.reset()
            cf = torch.compile(built.natural, dynamic=False)
            for _ in range(3):
                cf(*built.args(0))
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("prof")
            cf(*built.args(0))
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
            print(f"profiled: {c.name} (compile)", flush=True)
        del built
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
