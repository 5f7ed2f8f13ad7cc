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
    args = p.parse_args()
    import torch
    import infiniop

    dev = torch.device("cuda", torch.cuda.current_device())
    cases = [c for c in gpu_bench.CASES if not args.cases or re.search(args.cases, c.name)]
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
        del built
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
