#!/usr/bin/env python3
"""A small Llama-style decoder stack in plain PyTorch, run with PyTorch's own
operators and again with infiniop's operators swapped in.

Each layer: fused residual add + RMS norm, attention (q, k, v projections,
per-head causal softmax over a KV cache), fused residual add + RMS norm, and
a SiLU-gated MLP; a final add + RMS norm. Random weights, fixed seed. The
prompt is run once (prefill), then tokens are decoded one at a time against
the KV cache (the causal softmax of a 1 x T slice, T growing), as in
generation; the inputs of every position are fixed random embeddings, so the
two runs see the same inputs.

Printed: the largest difference between the two runs' final hidden states
(asserted within a stated tolerance), and the time per decoded token of each,
eager and under torch.compile (fullgraph=True: the infiniop operators are
torch.library operators, no graph break), and on the GPU also under
torch.compile(mode="reduce-overhead") (CUDA graphs: one graph per KV-cache
length, recorded in the warm-up and replayed in the timed runs). On the CPU,
and on the GPU where there is one (and the library has its CUDA backend).
With the package's native binding (libinfiniop_torch) the infiniop operators
are compiled PyTorch operators; without it, Python ones (the header line
says which).

CPU timings of so small a model are mostly per-call overhead, and on a busy
machine OpenMP's spinning idle threads distort them by up to 100x (compiled
code most): the script sets OMP_WAIT_POLICY=passive unless it is set.

Usage: python examples/decoder.py [--quick] [--device cpu|cuda|all]
       [--layers N] [--dim D] [--heads H] [--ffn F] [--tokens N]
       [--no-compile] [--no-cudagraphs] [--profile]
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
import math
import sys
import time

import torch
import torch.nn.functional as F

import infiniop
import infiniop.torch_ops  # noqa: F401  (registers torch.ops.infiniop.*)


# ---------------------------------------------------------------- operators


class TorchOps:
    """The reference: PyTorch's own operators, computed in float32."""

    name = "pytorch"

    @staticmethod
    def add_rms_norm(x, residual, w, eps):
        r = x.float() + residual.float()
        y = r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + eps) * w.float()
        return y.to(x.dtype), r.to(x.dtype)

    @staticmethod
    def causal_softmax(scores):
        S, T = scores.shape[-2:]
        i = torch.arange(S, device=scores.device)[:, None]
        j = torch.arange(T, device=scores.device)[None, :]
        masked = scores.float().masked_fill(j > i + (T - S), float("-inf"))
        return torch.softmax(masked, dim=-1).to(scores.dtype)

    @staticmethod
    def silu(x):
        return F.silu(x)


class InfiniopOps:
    """The same three operators from infiniop (torch.ops.infiniop.*)."""

    name = "infiniop"

    @staticmethod
    def add_rms_norm(x, residual, w, eps):
        return torch.ops.infiniop.add_rms_norm(x, residual, w, eps)

    @staticmethod
    def causal_softmax(scores):
        return torch.ops.infiniop.causal_softmax(scores)

    @staticmethod
    def silu(x):
        return torch.ops.infiniop.silu(x)


# -------------------------------------------------------------------- model


def make_weights(layers, dim, heads, ffn, device, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)

    def lin(n_out, n_in):
        return (torch.randn(n_out, n_in, generator=g) / math.sqrt(n_in)).to(device, dtype)

    def norm_w(n):
        return (1.0 + 0.1 * torch.randn(n, generator=g)).to(device, dtype)

    blocks = []
    for _ in range(layers):
        blocks.append({
            "attn_norm": norm_w(dim), "wqkv": lin(3 * dim, dim), "wo": lin(dim, dim),
            "mlp_norm": norm_w(dim), "w_gate": lin(ffn, dim), "w_up": lin(ffn, dim), "w_down": lin(dim, ffn),
        })
    return {"blocks": blocks, "final_norm": norm_w(dim), "heads": heads}


def forward(ops, W, x, residual, caches, eps=1e-6):
    """x: (S, dim) new positions; residual: (S, dim) the residual stream so far
    (zeros at the start); caches: per layer (k, v) of shape (heads, T_past, hd)
    or None. Returns the final hidden states (S, dim) and the new caches."""
    S, dim = x.shape
    H = W["heads"]
    hd = dim // H
    new_caches = []
    h = x
    for blk, cache in zip(W["blocks"], caches):
        # residual add + RMS norm (fused), then attention over the KV cache
        n, residual = ops.add_rms_norm(h, residual, blk["attn_norm"], eps)
        q, k, v = (n @ blk["wqkv"].t()).view(S, 3, H, hd).permute(1, 2, 0, 3)  # each (H, S, hd)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=1)
            v = torch.cat([cache[1], v], dim=1)
        else:  # contiguous like the caches torch.cat makes (one compiled graph for every decode step)
            k, v = k.contiguous(), v.contiguous()
        new_caches.append((k, v))
        scores = (q @ k.transpose(1, 2)) * (1.0 / math.sqrt(hd))  # (H, S, T), T >= S
        p = ops.causal_softmax(scores)
        attn = (p @ v).transpose(0, 1).reshape(S, dim) @ blk["wo"].t()
        # residual add + RMS norm (fused), then the SiLU-gated MLP
        n, residual = ops.add_rms_norm(attn, residual, blk["mlp_norm"], eps)
        h = (ops.silu(n @ blk["w_gate"].t()) * (n @ blk["w_up"].t())) @ blk["w_down"].t()
    out, _ = ops.add_rms_norm(h, residual, W["final_norm"], eps)
    return out, new_caches


def generate(ops, W, embeds, prompt_len, step_fn, keep=lambda t: t):
    """Prefill embeds[:prompt_len], then decode the rest one position at a
    time. Returns the final hidden states of every position and the seconds
    spent decoding. keep: what to hold of each step's output (a copy under
    CUDA graphs, whose outputs a later replay overwrites)."""
    caches = [None] * len(W["blocks"])
    x = embeds[:prompt_len]
    out, caches = step_fn(ops, W, x, torch.zeros_like(x), caches)
    outs = [keep(out)]
    sync(embeds.device)
    t0 = time.perf_counter()
    for t in range(prompt_len, embeds.shape[0]):
        x = embeds[t : t + 1]
        out, caches = step_fn(ops, W, x, torch.zeros_like(x), caches)
        outs.append(keep(out))
    sync(embeds.device)
    return torch.cat(outs), time.perf_counter() - t0


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


# ---------------------------------------------------------------------- run


def run_device(device, args):
    dtype = torch.float32
    tol = 2e-3  # float32 everywhere: only the order of float32 sums differs
    W = make_weights(args.layers, args.dim, args.heads, args.ffn, device, dtype)
    n_new = args.tokens
    g = torch.Generator().manual_seed(1)
    embeds = torch.randn(args.prompt + n_new, args.dim, generator=g).to(device, dtype)

    print(f"\n== {device.type}: {args.layers} layers, dim {args.dim}, {args.heads} heads, MLP {args.ffn}, "
          f"{dtype}; prompt {args.prompt}, then {n_new} tokens decoded one by one")
    results, steps = {}, {}
    modes = ["eager"]
    if not args.no_compile:
        modes.append("compile")
        if device.type == "cuda" and not args.no_cudagraphs:
            modes.append("reduce-overhead")
    with torch.no_grad():
        for mode in modes:
            for ops in (TorchOps, InfiniopOps):
                keep = (lambda t: t.clone()) if mode == "reduce-overhead" else (lambda t: t)
                if mode != "eager":
                    torch._dynamo.reset()
                    kw = {"mode": "reduce-overhead"} if mode == "reduce-overhead" else {}
                    step = torch.compile(forward, fullgraph=True, dynamic=True, **kw)
                    t0 = time.perf_counter()
                    # compile; under CUDA graphs also record a graph per length
                    n_warm = embeds.shape[0] if mode == "reduce-overhead" else args.prompt + 2
                    generate(ops, W, embeds[:n_warm], args.prompt, step, keep)
                    compile_s = time.perf_counter() - t0
                else:
                    step, compile_s = forward, 0.0
                    generate(ops, W, embeds[: args.prompt + 2], args.prompt, step)  # warm up
                best = None
                for _ in range(args.repeats):
                    out, secs = generate(ops, W, embeds, args.prompt, step, keep)
                    best = secs if best is None else min(best, secs)
                results[(mode, ops.name)] = (out.float().cpu(), best / n_new, compile_s)
                steps[(mode, ops.name)] = (step, keep)
                # each line as soon as it is measured (the first is the reference)
                ref = results[("eager", "pytorch")][0]
                if len(results) == 1:
                    print(f"  {'run':26s} {'ms/token':>9s}  {'max |diff| vs PyTorch eager':>28s}")
                diff = (results[(mode, ops.name)][0] - ref).abs().max().item()
                extra = f"  (compiled in {compile_s:.1f} s)" if mode != "eager" else ""
                print(f"  {ops.name + ' ' + mode:26s} {best / n_new * 1e3:9.3f}  {diff:28.3g}{extra}", flush=True)

    ref = results[("eager", "pytorch")][0]
    worst = max((out - ref).abs().max().item() for out, _, _ in results.values())
    print(f"  {'':26s} {'pytorch':>9s} {'infiniop':>9s} {'ratio':>6s}  (ms/token)")
    for mode in modes:
        tp, ti_ = results[(mode, "pytorch")][1], results[(mode, "infiniop")][1]
        print(f"  {mode:26s} {tp * 1e3:9.3f} {ti_ * 1e3:9.3f} {ti_ / tp:6.2f}")
    if args.profile:
        profile(W, embeds, args, steps, device)
    ti = results[("eager", "infiniop")][0]
    d = (ti - ref).abs().max().item()
    print(f"  final hidden states, infiniop vs PyTorch (eager): max |diff| = {d:.3g} "
          f"(tolerance {tol:g}; values of size ~{ref.abs().max().item():.2g})")
    assert worst <= tol, f"infiniop and PyTorch disagree by {worst:.3g} > {tol:g}"
    assert torch.isfinite(ref).all()
    return worst


def profile(W, embeds, args, steps, device):
    """torch.profiler over one decode run of each mode: the operators that
    take the time, by self time on the host (and on the GPU)."""
    from torch.profiler import ProfilerActivity, profile as tprofile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    n_new = embeds.shape[0] - args.prompt
    for (mode, name), (step, keep) in steps.items():
        ops = TorchOps if name == "pytorch" else InfiniopOps
        with torch.no_grad(), tprofile(activities=acts) as prof:
            generate(ops, W, embeds, args.prompt, step, keep)
        print(f"\n-- profile: {name} {mode} (prefill + {n_new} tokens; sorted by {key})")
        print(prof.key_averages().table(sort_by=key, row_limit=args.profile_rows, max_name_column_width=48))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="all", choices=["cpu", "cuda", "all"])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dim", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ffn", type=int, default=1408)
    p.add_argument("--prompt", type=int, default=32)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--no-cudagraphs", action="store_true", help="on the GPU, skip mode=\"reduce-overhead\"")
    p.add_argument("--profile", action="store_true", help="after the timings, a torch.profiler table of each run")
    p.add_argument("--profile-rows", type=int, default=12)
    p.add_argument("--quick", action="store_true", help="a small model and few tokens (the test suite's run)")
    args = p.parse_args(argv)
    if args.quick:
        args.layers, args.dim, args.heads, args.ffn, args.prompt, args.tokens, args.repeats = 2, 128, 4, 352, 8, 8, 1
    torch.manual_seed(0)
    native = "native" if infiniop.torch_ops.NATIVE else "Python (no native binding built)"
    print(f"infiniop {infiniop.library_version()} ({infiniop.library_path()}), CPU kernels: {infiniop.cpu_isa()}; "
          f"torch {torch.__version__}; torch.ops.infiniop: {native}; torch threads {torch.get_num_threads()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    devices = []
    if args.device in ("cpu", "all"):
        devices.append(torch.device("cpu"))
    if args.device in ("cuda", "all"):
        if torch.cuda.is_available() and infiniop.device_count(infiniop.Device.NVIDIA) > 0:
            devices.append(torch.device("cuda"))
        elif args.device == "cuda":
            print("no usable GPU (torch sees none, or the library has no CUDA backend)")
            return 1
        else:
            print("(no GPU here, or the library has no CUDA backend: CPU only)")
    for d in devices:
        run_device(d, args)
    print("\nok: infiniop's operators agree with PyTorch's within the stated tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
