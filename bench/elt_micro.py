"""Time the CUDA elementwise plan's variants (silu) at small and view
shapes against PyTorch eager and a same-bytes copy, in CUDA graphs.

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/elt_micro.py

Needs a library built with -DINFINIOP_CUDA_EXPERIMENTS=ON (the variants are
the knobs of bench/experiments/cuda_elt_knobs.c, set in the environment
before each descriptor is created; infiniop.clear_cache() in between) and
torch. Each case's implementations are captured as graphs of N calls on one
buffer set and replayed in turn, round after round (the copy and eager in
the same rounds); the table gives the median time a call in us. The plan
line of each variant (INFINIOP_VERBOSE) is printed before the table."""
import os
import statistics
import sys

os.environ["INFINIOP_VERBOSE"] = "1"  # read once: every descriptor prints its plan

import torch  # noqa: E402

import infiniop  # noqa: E402

KNOBS = ("INFINIOP_CUDA_UNARY_ONCE", "INFINIOP_CUDA_UNARY_VIEW", "INFINIOP_CUDA_UNARY")
CONTIG = [("rule", {}), ("evict-first", {"INFINIOP_CUDA_UNARY_ONCE": "1"}),
          ("t128", {"INFINIOP_CUDA_UNARY": "128,1"})]
VIEW = [("rule", {}), ("vec", {"INFINIOP_CUDA_UNARY_VIEW": "vec"}), ("tile", {"INFINIOP_CUDA_UNARY_VIEW": "tile"}),
        ("strided", {"INFINIOP_CUDA_UNARY_VIEW": "strided"})]


def cases(d):
    b, h, f, f64 = torch.bfloat16, torch.float16, torch.float32, torch.float64

    def T(r, c, dt):  # transposed: r x c view of a c x r tensor
        return torch.randn(c, r, dtype=dt, device=d).t()

    return [
        ("bf16 1", torch.randn(1, dtype=b, device=d), CONTIG),
        ("f32 7", torch.randn(7, dtype=f, device=d), CONTIG),
        ("bf16 1x4096", torch.randn(1, 4096, dtype=b, device=d), CONTIG),
        ("f16 4095", torch.randn(4095, dtype=h, device=d), CONTIG),
        ("bf16 8x4096", torch.randn(8, 4096, dtype=b, device=d), CONTIG),
        ("f16 65536", torch.randn(65536, dtype=h, device=d), CONTIG),
        ("bf16 32x11008", torch.randn(32, 11008, dtype=b, device=d), CONTIG),
        ("f32 3x100003", torch.randn(3, 100003, dtype=f, device=d), CONTIG),
        ("bf16 4096x4096", torch.randn(4096, 4096, dtype=b, device=d), CONTIG),
        ("f16 65x33 T", T(65, 33, h), VIEW),
        ("bf16 16x4096 T", T(16, 4096, b), VIEW),
        ("f32 64x128x33 perm", torch.randn(33, 64, 128, dtype=f, device=d).permute(1, 2, 0), VIEW),
        ("bf16 1000x1000 T", T(1000, 1000, b), VIEW),
        ("bf16 4099x1031 T", T(4099, 1031, b), VIEW),
        ("f64 2048x1023 T", T(2048, 1023, f64), VIEW),
        ("bf16 2048x2048 T", T(2048, 2048, b), VIEW),
        ("bf16 2x197x12x64 perm", torch.randn(2, 197, 12, 64, dtype=b, device=d).permute(0, 2, 1, 3), [CONTIG[0]]),
        ("bf16 4096x3584 sliced", torch.randn(4097, 3585, dtype=b, device=d)[1:, 1:], [CONTIG[0]]),
    ]


def set_knobs(env):
    for k in KNOBS:
        os.environ.pop(k, None)
    os.environ.update(env)
    infiniop.clear_cache()


def main():
    d = torch.device("cuda")
    torch.manual_seed(0)
    rows = []
    for name, x, variants in cases(d):
        y = torch.empty(x.shape, dtype=x.dtype, device=d)
        xc = x.contiguous()
        yc = torch.empty_like(xc)
        big = x.numel() * x.element_size() >= 8e6
        n = 20 if big else 200
        ref = torch.nn.functional.silu(x.double())
        impls = {"copy": lambda: yc.copy_(xc), "eager": lambda: torch.ops.aten.silu.out(x, out=y)}
        graphs = {}
        for vname, env in variants:
            set_knobs(env)
            y.fill_(float("nan"))
            infiniop.silu(x, out=y)
            torch.cuda.synchronize()
            err = ((y.double() - ref).norm() / ref.norm()).item()
            if not err < 1e-2:
                print(f"{name} {vname}: WRONG rel err {err}", flush=True)
            g = torch.cuda.CUDAGraph()
            for _ in range(3):
                infiniop.silu(x, out=y)
            torch.cuda.synchronize()
            with torch.cuda.graph(g):
                for _ in range(n):
                    infiniop.silu(x, out=y)
            graphs[vname] = g
        set_knobs({})
        for k in ("copy", "eager"):
            for _ in range(3):
                impls[k]()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(n):
                    impls[k]()
            graphs[k] = g
        ts = {k: [] for k in graphs}
        for _ in range(15):
            for k, g in graphs.items():
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                g.replay()
                e.record()
                ts[k].append((s, e))
        torch.cuda.synchronize()
        med = {k: statistics.median(s.elapsed_time(e) for s, e in v) * 1e3 / n for k, v in ts.items()}
        rows.append((name, x.numel() * x.element_size() * 2, med))
        del graphs
    print()
    print("| case | bytes | copy | eager | variants (us) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, nb, med in rows:
        var = ", ".join(f"{k} {v:.2f}" for k, v in med.items() if k not in ("copy", "eager"))
        print(f"| {name} | {nb} | {med['copy']:.2f} | {med['eager']:.2f} | {var} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
