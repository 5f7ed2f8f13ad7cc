"""The native PyTorch binding (libinfiniop_torch.so): loaded when built, its
descriptor cache (bounded, shared between threads), every operator form under
torch.library.opcheck on each device, and bench/torch_overhead.py running
(no timing asserted)."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import infiniop  # noqa: E402
import infiniop.torch_ops  # noqa: E402,F401
from infiniop import InfiniopError, Status  # noqa: E402

from helpers import sigmoid_ref, silu_ref, torch_cuda_skip, torch_devices  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ops = torch.ops.infiniop


CUDA_SKIP = torch_cuda_skip(torch)
DEVICES = torch_devices(CUDA_SKIP)

_beside = Path(infiniop.library_path()).parent / "libinfiniop_torch.so"
native = pytest.mark.skipif(
    not infiniop.torch_ops.NATIVE,
    reason=f"the native binding is not loaded: {infiniop._native.info()['why_not']}",
)


def test_native_loaded_when_built():
    info = infiniop._native.info()
    if _beside.is_file():
        assert info["native"] and infiniop.torch_ops.NATIVE, info
        assert Path(info["path"]).resolve() == _beside.resolve()
    else:
        assert not info["native"] and info["why_not"]


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_every_form(device):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 8, 64, generator=g).to(device)
    w = torch.randn(64, generator=g).to(device)
    b = torch.randn(64, generator=g).to(device)
    s = torch.randn(2, 8, 8, generator=g).to(device)
    e = torch.empty_like
    cases = [
        (ops.add_rms_norm.default, (x, x.clone(), w, 1e-6)),
        (ops.add_rms_norm_out.default, (x, x.clone(), w, 1e-6, e(x), e(x))),
        (ops.layer_norm.default, (x, w, b, 1e-5)),
        (ops.layer_norm.default, (x, w, None, 1e-5)),
        (ops.layer_norm_out.default, (x, w, b, 1e-5, e(x), e(x), torch.empty(2, 8, device=device))),
        (ops.causal_softmax.default, (s,)),
        (ops.causal_softmax_.default, (s.clone(),)),
        (ops.causal_softmax_out.default, (s, e(s))),
    ]
    for u in ("silu", "sigmoid"):
        cases += [(getattr(ops, u).default, (x,)), (getattr(ops, u + "_").default, (x.clone(),)),
                  (getattr(ops, u + "_out").default, (x, e(x)))]
    for op, args in cases:
        torch.library.opcheck(op, args)


@native
def test_cache_is_bounded_and_counts():
    infiniop.clear_cache()
    x = torch.randn(3, 40)
    ops.silu(x)
    ops.silu(x)
    info = infiniop.cache_info()
    assert info["misses"] == 1 and info["hits"] == 1 and info["descriptors"] == 1
    # more layouts than the cache holds (1024): it stays bounded, and an
    # evicted layout is simply made again
    for n in range(1, 1100):
        ops.sigmoid(torch.empty(1, n))
    assert infiniop.cache_info()["descriptors"] <= 1024
    np.testing.assert_allclose(ops.silu(x).numpy(), silu_ref(x.double().numpy()), rtol=2e-5, atol=2e-6)
    infiniop.clear_cache()
    assert infiniop.cache_info()["descriptors"] == 0


@native
@pytest.mark.parametrize("device", DEVICES)
def test_threads_share_the_cache(device):
    """Eight threads calling the operators on their own layouts (and one
    clearing the cache meanwhile) all get exact results."""
    errors = []
    stop = threading.Event()

    def work(k):
        try:
            g = torch.Generator().manual_seed(k)
            x = torch.randn(4 + k, 32 + 8 * (k % 3), generator=g, dtype=torch.float64).to(device)
            ref_s, ref_g = silu_ref(x.cpu().numpy()), sigmoid_ref(x.cpu().numpy())
            for _ in range(200):
                np.testing.assert_allclose(ops.silu(x).cpu().numpy(), ref_s, rtol=1e-12, atol=1e-14)
                np.testing.assert_allclose(ops.sigmoid(x).cpu().numpy(), ref_g, rtol=1e-12, atol=1e-14)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def clearer():
        while not stop.is_set():
            infiniop.clear_cache()

    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    c = threading.Thread(target=clearer)
    c.start()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    stop.set()
    c.join()
    assert not errors, errors[0]


@native
def test_native_error_text_parses():
    with pytest.raises(RuntimeError) as ei:
        ops.layer_norm(torch.ones(2, 4), torch.ones(3), None, 1e-5)
    err = InfiniopError.from_exception(ei.value)
    assert type(ei.value) is RuntimeError  # PyTorch's translation of the C++ exception
    assert err.status == Status.BAD_TENSOR_SHAPE and err.function == "infiniopCreateLayerNormDescriptor"
    assert str(ei.value).startswith("infiniop: INFINI_STATUS_BAD_TENSOR_SHAPE (11) from ")


@native
@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
def test_native_refuses_mixed_devices():
    with pytest.raises(RuntimeError, match="another device"):
        ops.silu_out(torch.ones(3, device="cuda"), torch.empty(3))


@pytest.mark.parametrize("device", ["cpu"] + ([] if CUDA_SKIP else ["cuda"]))
def test_overhead_script_runs(device):
    env = dict(os.environ)
    # the package these tests import (a source tree or an installed wheel)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(infiniop.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    env.setdefault("INFINIOP_LIBRARY_PATH", str(Path(infiniop.library_path()).parent))
    p = subprocess.run([sys.executable, str(REPO / "bench" / "torch_overhead.py"), "--quick", "--device", device],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    for name in ("silu", "sigmoid", "add_rms_norm", "layer_norm", "causal_softmax", "numpy arrays"):
        assert name in p.stdout, p.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_scalar_and_empty_tensors(device):
    x = torch.tensor(0.5, dtype=torch.float64, device=device)
    np.testing.assert_allclose(ops.silu(x).cpu().numpy(), silu_ref(np.float64(0.5)), rtol=1e-12)
    assert ops.sigmoid(torch.empty(0, 3, device=device)).shape == (0, 3)
    y, r = ops.add_rms_norm(torch.empty(0, 8, device=device), torch.empty(0, 8, device=device),
                            torch.ones(8, device=device), 1e-6)
    assert y.shape == r.shape == (0, 8)
