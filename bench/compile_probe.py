#!/usr/bin/env python3
"""Which state of a process breaks torch.compile beside the library?

The repo's bench, sweep and pytest processes saw torch.compile fail on many
cases with a Triton/pybind11 ``SystemError ... returned NULL without setting
an exception``, while a fresh process that loads the library compiled the
same functions. This probe runs the same compilations in fresh processes
that differ in one step each, all at once (each with its own empty inductor
and Triton caches, so every compile is cold):

  torch      torch only
  import     + import infiniop (registers torch.ops.infiniop.*), no library
  load       + load the library (as the bench: version, CPU ISA, devices)
  ops        + run library ops on the GPU and capture one in a CUDA graph
  global     as ops, the library loaded RTLD_GLOBAL (the package's mode before
             the fix; it now loads RTLD_LOCAL)
  ctypes     torch + the two .so files through ctypes (RTLD_GLOBAL), no package
  lazy       import infiniop before torch, load the library, no torch op

The compilations: the bench's add_rms_norm bf16 16384x8192 and causal_softmax
bf16 32x2048x2048 natural functions (two of the cases that failed), and, where the
package is there, the pytest case (the ops through torch.ops.infiniop,
mode="reduce-overhead"). Prints one line per variant and compilation, and
the traceback's tail of each failure.

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/compile_probe.py [--out DIR]
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

VARIANTS = ("torch", "import", "load", "ops", "global", "ctypes", "lazy")
DEV = os.environ.get("PROBE_DEVICE", "cuda")  # cpu: a smoke test of this script (small shapes, no graphs)


def child(variant):
    t0 = time.monotonic()
    steps = []
    if variant == "lazy":
        import infiniop
        infiniop.load_library(os.environ.get("INFINIOP_LIBRARY_PATH"))
        infiniop.device_count()
    import torch
    if variant in ("import", "load", "ops", "global"):
        if variant == "global":
            os.RTLD_LOCAL = os.RTLD_GLOBAL  # the package reads it when it opens the library
        import infiniop
        if variant != "import":
            infiniop.load_library(os.environ.get("INFINIOP_LIBRARY_PATH"))
            steps.append(f"{infiniop.library_path()} {infiniop.library_version()} {infiniop.cpu_isa()} "
                         f"devices {infiniop.device_count()}")
        if variant in ("ops", "global") and DEV == "cuda":
            x = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
            w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
            y = torch.empty_like(x)
            infiniop.silu(x, out=y)
            infiniop.add_rms_norm(x, x, w, 1e-6)
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                infiniop.silu(x, out=y)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                infiniop.silu(x, out=y)
            g.replay()
            torch.cuda.synchronize()
            steps.append("library ops and a graph capture ran")
    if variant == "ctypes":
        import ctypes
        d = os.environ["INFINIOP_LIBRARY_PATH"]
        rt = ctypes.CDLL(os.path.join(d, "libinfinirt.so"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        ctypes.CDLL(os.path.join(d, "libinfiniop.so"), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        n = ctypes.c_int(0)
        rt.infinirtGetDeviceCount(1, ctypes.byref(n))
        steps.append(f"ctypes: {n.value} devices")

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_harness as H
    results = []
    cases = (H.Case("add_rms_norm", "bf16", (16384, 8192)), H.Case("causal_softmax", "bf16", (32, 2048, 2048)))
    if DEV == "cpu":
        cases = (H.Case("add_rms_norm", "bf16", (16, 64)), H.Case("silu", "f16", (655,)))
    for case in cases:
        r = H.compile_peer(torch, case.spec(), DEV, {"n_sets": 1, "n_calls": 2, "graph": True, "reps": 3,
                                                        "seed": 1}, time_it=False)
        results.append({"what": case.name, "ok": r["ok"], "error": r.get("error"), "traceback": r.get("traceback"),
                        "compile_s": r.get("compile_s")})
    if variant in ("load", "ops", "global", "lazy") and DEV == "cuda":
        import infiniop
        try:
            torch._dynamo.reset()

            def all_ops(x, w, b):
                h = infiniop.silu(x) + infiniop.sigmoid(x)
                y, r = infiniop.add_rms_norm(h, x, w, 1e-6)
                o, xh, sd = infiniop.layer_norm(y, w, b, 1e-5)
                s = infiniop.causal_softmax(o[..., : o.shape[1]] * 0.5)
                return o, r, s, sd
            g = torch.Generator(device="cuda")
            g.manual_seed(13)
            x = torch.randn((2, 8, 64), device="cuda", generator=g)
            w, b = torch.randn(64, device="cuda", generator=g), torch.randn(64, device="cuda", generator=g)
            exp = all_ops(x, w, b)
            f = torch.compile(all_ops, fullgraph=True, mode="reduce-overhead")
            for _ in range(3):
                got = f(x, w, b)
            for a, e in zip(got, exp):
                torch.testing.assert_close(a, e, rtol=0, atol=0)
            results.append({"what": "pytest test_cuda_compile_with_cudagraphs body", "ok": True})
        except Exception as e:
            results.append({"what": "pytest test_cuda_compile_with_cudagraphs body", "ok": False,
                            "error": H.short(e, 300), "traceback": traceback.format_exc()[-4000:]})
    print("PROBE-RESULT " + json.dumps({"variant": variant, "steps": steps, "results": results,
                                         "seconds": time.monotonic() - t0}), flush=True)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    out = None
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
    out = out or os.environ.get("OUT") or "."
    procs = {}
    for v in VARIANTS:
        env = dict(os.environ)
        tmp = tempfile.mkdtemp(prefix=f"probe-{v}-")
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        procs[v] = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", v], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, log = [], []
    deadline = time.monotonic() + float(os.environ.get("PROBE_TIMEOUT", "400"))
    for v, p in procs.items():
        try:
            text, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            text, _ = p.communicate()
            text = (text or "") + "\n(timeout)"
        log.append(f"===== {v} (exit {p.returncode})\n{text}")
        doc = None
        for ln in text.splitlines():
            if ln.startswith("PROBE-RESULT "):
                doc = json.loads(ln[len("PROBE-RESULT "):])
        if doc is None:
            lines.append(f"{v:7s} no result (exit {p.returncode}): {text.strip().splitlines()[-1:] }")
            continue
        for r in doc["results"]:
            lines.append(f"{v:7s} {r['what']:52s} {'ok' if r['ok'] else 'FAIL: ' + str(r.get('error'))[:150]}")
            if not r["ok"] and r.get("traceback"):
                log.append(f"--- {v}: {r['what']}\n{r['traceback']}")
    with open(os.path.join(out, "compile_probe.log"), "w") as f:
        f.write("\n".join(log) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
