"""The operators on PyTorch tensors, on the CPU and on CUDA, against torch's
own implementations (run in float64). Skipped when torch is not installed;
the CUDA cases are skipped when torch sees no GPU or the library was built
without its NVIDIA backend."""

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import infiniop  # noqa: E402
from infiniop import InfiniopError, Status  # noqa: E402

from helpers import torch_cuda_skip, torch_devices, torch_tol  # noqa: E402


CUDA_SKIP = torch_cuda_skip(torch)
DEVICES = torch_devices(CUDA_SKIP)

HALF_AND_F32 = [torch.float16, torch.bfloat16, torch.float32]
ALL_FLOAT = HALF_AND_F32 + [torch.float64]
TOL = torch_tol(torch)


def close(actual, expected, dtype, scale=1.0):
    rtol, atol = TOL[dtype]
    assert actual.dtype == dtype
    torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol * scale)


def dname(d):
    return str(d).replace("torch.", "")


def rand(shape, dtype, device, scale=1.0, offset=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset).to(dtype).to(device)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


# --------------------------------------------------------------- elementwise

UNARY = [(infiniop.silu, infiniop.silu_, F.silu), (infiniop.sigmoid, infiniop.sigmoid_, torch.sigmoid)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,op_,ref", UNARY, ids=["silu", "sigmoid"])
@pytest.mark.parametrize("dtype", ALL_FLOAT, ids=dname)
def test_unary(device, op, op_, ref, dtype):
    x = rand((5, 300), dtype, device, scale=4.0)
    y = op(x)
    assert isinstance(y, torch.Tensor) and y.device == x.device and y.is_contiguous()
    sync(device)
    close(y, ref(x.double()), dtype)
    # strided views, without copies
    v = x.t()[::3]
    close(op(v), ref(v.double()), dtype)
    out = torch.zeros((300, 5), dtype=dtype, device=device).t()
    assert op(x, out=out) is out
    close(out, ref(x.double()), dtype)
    # in place
    expected = ref(x.double())
    assert op_(x) is x
    close(x, expected, dtype)
    # broadcast input
    xb = rand((1, 7), dtype, device)
    outb = torch.empty((3, 7), dtype=dtype, device=device)
    op(xb.expand(3, 7), out=outb)
    close(outb, ref(xb.double()).expand(3, 7), dtype)


# -------------------------------------------------------------- add_rms_norm

PAIRS = [
    (torch.float16, torch.float16),
    (torch.float16, torch.float32),
    (torch.bfloat16, torch.bfloat16),
    (torch.bfloat16, torch.float32),
    (torch.float16, torch.bfloat16),
    (torch.float32, torch.float32),
]


def rms_ref(a, b, w, eps):
    r = a.double() + b.double()
    return r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + eps) * w.double(), r


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("atype,wtype", PAIRS, ids=lambda d: dname(d))
@pytest.mark.parametrize("shape", [(4, 512), (2, 3, 4096)])
def test_add_rms_norm(device, atype, wtype, shape):
    a, b = rand(shape, atype, device, seed=1), rand(shape, atype, device, seed=2)
    w = rand(shape[-1:], wtype, device, scale=0.5, offset=1.0, seed=3)
    y, r = infiniop.add_rms_norm(a, b, w, eps=1e-6)
    assert y.device == a.device and r.shape == a.shape
    ey, er = rms_ref(a, b, w, 1e-6)
    close(r, er, atype, 2.0)
    close(y, ey, atype, 2.0)
    if hasattr(F, "rms_norm"):  # torch's own RMS norm, on the rounded residual
        ty = F.rms_norm(r.double(), shape[-1:], w.double(), eps=1e-6)
        close(y, ty, atype, 4.0)


@pytest.mark.parametrize("device", DEVICES)
def test_add_rms_norm_strided_inplace(device):
    D = 256
    abuf = rand((8, 2 * D), torch.float16, device, seed=4)
    a = abuf[::2, :D]
    b = rand((4, D), torch.float16, device, seed=5)
    w = rand((2 * D,), torch.float32, device, offset=1.0, seed=6)[::2]
    ey, er = rms_ref(a, b, w, 1e-5)
    y, r = infiniop.add_rms_norm(a, b, w, 1e-5, out=(b, a))
    assert y is b and r is a
    close(b, ey, torch.float16, 2.0)
    close(abuf[::2, :D], er, torch.float16, 2.0)


# ---------------------------------------------------------------- layer_norm


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=dname)
@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "nobias"])
def test_layer_norm(device, dtype, with_bias):
    shape = (3, 5, 768)
    x = rand(shape, dtype, device, scale=2.0, offset=0.3, seed=7)
    w = rand((768,), dtype, device, offset=1.0, seed=8)
    b = rand((768,), dtype, device, seed=9) if with_bias else None
    out, xhat, std = infiniop.layer_norm(x, w, b, eps=1e-5)
    assert std.shape == shape[:-1] and std.device == x.device
    eo = F.layer_norm(x.double(), (768,), w.double(), None if b is None else b.double(), eps=1e-5)
    var, mean = torch.var_mean(x.double(), dim=-1, unbiased=False)
    es = torch.sqrt(var + 1e-5)
    close(out, eo, dtype, 4.0)
    close(xhat, (x.double() - mean[..., None]) / es[..., None], dtype, 4.0)
    close(std, es, dtype, 2.0)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_strided(device):
    x = rand((64, 10), torch.bfloat16, device, seed=10).t()  # (10, 64), last dim stride 10
    w = rand((64,), torch.bfloat16, device, offset=1.0, seed=11)
    out, xhat, std = infiniop.layer_norm(x, w, None)
    close(out, F.layer_norm(x.double(), (64,), w.double(), eps=1e-5), torch.bfloat16, 4.0)


# ------------------------------------------------------------ causal_softmax


def softmax_ref(x):
    S, T = x.shape[-2:]
    mask = torch.ones(S, T, dtype=torch.bool, device=x.device).tril(T - S)
    return torch.softmax(x.double().masked_fill(~mask, float("-inf")), dim=-1), mask


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=dname)
@pytest.mark.parametrize("shape", [(1, 1), (7, 7), (2, 4, 5, 33), (3, 5000)])
def test_causal_softmax(device, dtype, shape):
    x = rand(shape, dtype, device, scale=3.0, seed=12)
    y = infiniop.causal_softmax(x)
    expected, mask = softmax_ref(x)
    close(y, expected, dtype)
    assert (y[..., ~mask] == 0).all()
    v = rand((2, 40, 16), dtype, device, seed=13).transpose(1, 2)[:, :, ::2]  # (2, 16, 20)
    expected, _ = softmax_ref(v)
    assert infiniop.causal_softmax_(v) is v
    close(v, expected, dtype)


# -------------------------------------------------------- devices and streams


@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
def test_cuda_current_stream_and_explicit_stream():
    x = rand((256, 1024), torch.float32, "cuda", seed=14)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = infiniop.silu(x)  # enqueued on s, PyTorch's current stream here
        z = y * 2  # ordered after it on the same stream
    s.synchronize()
    close(z, 2 * F.silu(x.double()), torch.float32)
    s2 = torch.cuda.Stream()
    s2.wait_stream(torch.cuda.current_stream())
    out = torch.empty_like(x)
    infiniop.sigmoid(x, out=out, stream=s2)
    s2.synchronize()
    close(out, torch.sigmoid(x.double()), torch.float32)


@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
def test_cuda_mixed_devices_and_errors():
    x = rand((2, 8), torch.float32, "cuda")
    with pytest.raises(ValueError, match="one device"):
        infiniop.layer_norm(x, torch.ones(8))
    with pytest.raises(InfiniopError) as ei:
        infiniop.silu(torch.ones(4, dtype=torch.int32, device="cuda"))
    assert ei.value.status == Status.BAD_TENSOR_DTYPE and ei.value.message
    with pytest.raises(InfiniopError) as ei:
        infiniop.causal_softmax(torch.ones(5, 3, device="cuda"))
    assert ei.value.status_name == "INFINI_STATUS_BAD_TENSOR_SHAPE"


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_and_torch_outputs_match(device):
    import numpy as np

    x = rand((3, 50), torch.float32, device, seed=15)
    yt = infiniop.silu(x)
    yn = infiniop.silu(x.cpu().numpy())
    np.testing.assert_allclose(yt.cpu().numpy(), yn, rtol=1e-6, atol=1e-7)


def test_cpu_errors():
    with pytest.raises(InfiniopError) as ei:
        infiniop.add_rms_norm(torch.ones(2, 4), torch.ones(2, 3), torch.ones(4))
    assert ei.value.status == Status.BAD_TENSOR_SHAPE
    # meta tensors take the operators' fake implementations (shapes only)
    m = infiniop.silu(torch.ones(2, 3, device="meta"))
    assert m.device.type == "meta" and m.shape == (2, 3)
    # other devices reach the library's path and are refused there
    with pytest.raises(ValueError, match="one device|only cpu and cuda"):
        infiniop._ops._c_silu(torch.ones(2, device="meta"))
