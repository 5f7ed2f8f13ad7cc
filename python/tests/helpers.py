"""float64 references and tolerances shared by the tests."""

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)

# (rtol, atol) for results rounded once to the dtype, against float64.
TOL = {
    F16: (2e-3, 2e-3),
    BF16: (1.6e-2, 1.6e-2),
    F32: (2e-5, 2e-6),
    F64: (1e-12, 1e-14),
}


def torch_tol(torch):
    """TOL keyed by the torch dtypes."""
    return {torch.float16: TOL[F16], torch.bfloat16: TOL[BF16], torch.float32: TOL[F32], torch.float64: TOL[F64]}


def torch_cuda_skip(torch):
    """Why the torch tests' CUDA cases skip, or None where they run."""
    import infiniop

    if not torch.cuda.is_available():
        return "no GPU: torch sees no CUDA device"
    if infiniop.device_count(infiniop.Device.NVIDIA) == 0:
        return "libinfiniop was built without the NVIDIA backend (or sees no GPU)"
    return None


def torch_devices(cuda_skip):
    """The device parameters of a torch test: cpu, and cuda skipped for cuda_skip."""
    import pytest

    return ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(cuda_skip is not None, reason=str(cuda_skip)))]


def rand(shape, dtype, rng, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(dtype)


def f64(x):
    return np.asarray(x).astype(np.float64)


def assert_close(actual, expected, dtype, scale=1.0):
    rtol, atol = TOL[np.dtype(dtype)]
    a = f64(actual)
    assert a.shape == np.shape(expected), (a.shape, np.shape(expected))
    np.testing.assert_allclose(a, expected, rtol=rtol, atol=atol * scale)


def sigmoid_ref(x):
    x = f64(x)
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def silu_ref(x):
    return f64(x) * sigmoid_ref(x)


def add_rms_norm_ref(a, b, w, eps):
    r = f64(a) + f64(b)
    rms = np.sqrt(np.mean(r * r, axis=-1, keepdims=True) + eps)
    return r / rms * f64(w), r


def layer_norm_ref(x, w, b, eps):
    x = f64(x)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    std = np.sqrt(var + eps)
    xhat = (x - mean) / std
    out = xhat * f64(w) + (f64(b) if b is not None else 0.0)
    return out, xhat, std[..., 0]


def causal_softmax_ref(x):
    x = f64(x)
    S, T = x.shape[-2:]
    mask = np.arange(T)[None, :] <= np.arange(S)[:, None] + (T - S)
    z = np.where(mask, x, -np.inf)
    m = z.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(z - m), 0.0)
    return e / e.sum(axis=-1, keepdims=True), mask
