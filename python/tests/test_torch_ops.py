"""The torch.library operators (torch.ops.infiniop.*): every operator, dtype
and a strided layout against float64 numpy references (every element
checked), the out= and in-place forms, fake/meta tensors, torch.compile with
fullgraph=True, torch.export, descriptor caching, errors, autograd refusal,
and CUDA-graph capture (GPU cases skip without a GPU)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import infiniop  # noqa: E402
import infiniop.torch_ops  # noqa: E402,F401  (registers torch.ops.infiniop.*)
from infiniop import InfiniopError, Status  # noqa: E402

from helpers import (  # noqa: E402
    add_rms_norm_ref,
    causal_softmax_ref,
    layer_norm_ref,
    sigmoid_ref,
    silu_ref,
    torch_cuda_skip,
    torch_devices,
    torch_tol,
)

ops = torch.ops.infiniop


CUDA_SKIP = torch_cuda_skip(torch)
DEVICES = torch_devices(CUDA_SKIP)
HALF_F32 = [torch.float16, torch.bfloat16, torch.float32]
TOL = torch_tol(torch)


def dname(d):
    return str(d).replace("torch.", "")


def rand(shape, dtype, device="cpu", scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype).to(device)


def np64(t):
    return t.detach().cpu().double().numpy()


def check(actual, expected, dtype, scale=1.0):
    """Every element of actual (a tensor of dtype) against a float64 array."""
    assert actual.dtype == dtype
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np64(actual), expected, rtol=rtol, atol=atol * scale)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


# ------------------------------------------------------------ every operator


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF_F32, ids=dname)
@pytest.mark.parametrize("wtype", ["same", "f32"])
def test_add_rms_norm(device, dtype, wtype):
    wdt = torch.float32 if wtype == "f32" else dtype
    a = rand((3, 5, 96), dtype, device, seed=1)
    b = rand((3, 5, 96), dtype, device, seed=2)
    w = rand(96, wdt, device, seed=3)
    y, r = ops.add_rms_norm(a, b, w, 1e-5)
    sync(device)
    ey, er = add_rms_norm_ref(np64(a), np64(b), np64(w), 1e-5)
    check(y, ey, dtype, 4.0)
    check(r, er, dtype)
    # strided rows (the last dimension stays contiguous), out variant, in place
    big = rand((6, 5, 128), dtype, device, seed=4)
    av = big[::2, :, :96]
    y2, r2 = torch.empty_like(a), torch.empty_like(a)
    assert ops.add_rms_norm_out(av, b, w, 1e-5, y2, r2) is None
    sync(device)
    ey, er = add_rms_norm_ref(np64(av), np64(b), np64(w), 1e-5)
    check(y2, ey, dtype, 4.0)
    check(r2, er, dtype)
    h, x = a.clone(), b.clone()
    infiniop.add_rms_norm(h, x, w, 1e-5, out=(x, h))  # normalised into x, residual into h
    sync(device)
    ey, er = add_rms_norm_ref(np64(a), np64(b), np64(w), 1e-5)
    check(x, ey, dtype, 4.0)
    check(h, er, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF_F32, ids=dname)
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm(device, dtype, with_bias):
    x = rand((4, 7, 80), dtype, device, scale=3.0, seed=5)
    w = rand(80, dtype, device, seed=6)
    b = rand(80, dtype, device, seed=7) if with_bias else None
    o, xh, sd = ops.layer_norm(x, w, b, 1e-5)
    sync(device)
    eo, exh, esd = layer_norm_ref(np64(x), np64(w), None if b is None else np64(b), 1e-5)
    check(o, eo, dtype, 4.0)
    check(xh, exh, dtype, 4.0)
    check(sd, esd, dtype)
    assert sd.shape == x.shape[:-1]
    # any strides: a transposed view in, out= tensors that are views too
    xt = rand((80, 7, 4), dtype, device, seed=8).permute(2, 1, 0)
    o2 = torch.empty((80, 7, 4), dtype=dtype, device=device).permute(2, 1, 0)
    xh2, sd2 = torch.empty_like(x), torch.empty(x.shape[:-1], dtype=dtype, device=device)
    res = infiniop.layer_norm(xt, w, b, 1e-5, out=(o2, xh2, sd2))
    assert res[0] is o2 and res[1] is xh2 and res[2] is sd2
    sync(device)
    eo, exh, esd = layer_norm_ref(np64(xt), np64(w), None if b is None else np64(b), 1e-5)
    check(o2, eo, dtype, 4.0)
    check(xh2, exh, dtype, 4.0)
    check(sd2, esd, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", HALF_F32, ids=dname)
def test_causal_softmax(device, dtype):
    x = rand((2, 3, 5, 9), dtype, device, scale=3.0, seed=9)  # S=5 < T=9: a KV-cache step
    y = ops.causal_softmax(x)
    sync(device)
    e, mask = causal_softmax_ref(np64(x))
    check(y, e, dtype)
    assert (y.cpu()[..., ~torch.from_numpy(np.broadcast_to(mask, y.shape[-2:]).copy())] == 0).all()
    xv = rand((9, 5, 3, 2), dtype, device, scale=3.0, seed=10).permute(3, 2, 1, 0)
    out = torch.empty(xv.shape, dtype=dtype, device=device)
    assert ops.causal_softmax_out(xv, out) is None
    e, _ = causal_softmax_ref(np64(xv))
    sync(device)
    check(out, e, dtype)
    xi = x.clone()
    assert ops.causal_softmax_(xi) is None
    sync(device)
    check(xi, causal_softmax_ref(np64(x))[0], dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,ref", [("silu", silu_ref), ("sigmoid", sigmoid_ref)])
@pytest.mark.parametrize("dtype", HALF_F32 + [torch.float64], ids=dname)
def test_unary(device, name, ref, dtype):
    x = rand((6, 33), dtype, device, scale=5.0, seed=11)
    y = getattr(ops, name)(x)
    sync(device)
    check(y, ref(np64(x)), dtype)
    v = x.t()[::2]  # strided view
    check(getattr(ops, name)(v), ref(np64(v)), dtype)
    out = torch.empty((33, 6), dtype=dtype, device=device).t()
    getattr(ops, name + "_out")(x, out)
    sync(device)
    check(out, ref(np64(x)), dtype)
    xi = x.clone()
    getattr(ops, name + "_")(xi)
    sync(device)
    check(xi, ref(np64(x)), dtype)
    # broadcast input (stride 0) into a full output
    row = rand((1, 33), dtype, device, seed=12)
    out = torch.empty((4, 33), dtype=dtype, device=device)
    getattr(ops, name + "_out")(row.expand(4, 33), out)
    sync(device)
    check(out, ref(np.broadcast_to(np64(row), (4, 33))), dtype)
    # the functional API routes torch tensors through the same operators
    check(getattr(infiniop, name)(x), ref(np64(x)), dtype)


# --------------------------------------------------- fake tensors, compile


def _all_ops(x, w, bias):
    """Every functional operator once, on a (B, S, D) input."""
    h = infiniop.silu(x) + infiniop.sigmoid(x)
    y, r = infiniop.add_rms_norm(h, x, w, 1e-6)
    o, xh, sd = infiniop.layer_norm(y, w, bias, 1e-5)
    s = infiniop.causal_softmax(o[..., : o.shape[1]] * 0.5)
    return o, r, s, sd


def _inputs(device="cpu", dtype=torch.float32):
    return rand((2, 8, 64), dtype, device, seed=13), rand(64, dtype, device, seed=14), rand(64, dtype, device, seed=15)


def test_meta_and_fake_tensors():
    x, w, b = (t.to("meta") for t in _inputs())
    o, r, s, sd = _all_ops(x, w, b)
    assert (o.shape, r.shape, s.shape, sd.shape) == ((2, 8, 64), (2, 8, 64), (2, 8, 8), (2, 8))
    assert all(t.device.type == "meta" for t in (o, r, s, sd))
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        fx, fw, fb = (mode.from_tensor(t) for t in _inputs())
        o, r, s, sd = _all_ops(fx, fw, fb)
        assert o.shape == (2, 8, 64) and o.dtype == torch.float32 and sd.shape == (2, 8)
        y = torch.empty(2, 8, 64)
        ops.silu_out(fx, y)  # out variant under fake tensors: no data touched


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_fullgraph(backend):
    torch._dynamo.reset()
    x, w, b = _inputs()
    expected = [t.clone() for t in _all_ops(x, w, b)]
    compiled = torch.compile(_all_ops, fullgraph=True, backend=backend)  # a graph break would raise
    got = compiled(x, w, b)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, rtol=0, atol=0)
    # mutating forms inside a compiled graph
    def mutate(x, w):
        y = torch.empty_like(x)
        infiniop.silu(x, out=y)
        z = x.clone()
        infiniop.sigmoid_(z)
        h, t = x.clone(), z.clone()
        infiniop.add_rms_norm(h, t, w, 1e-6, out=(t, h))
        return y, z, h, t

    ref = mutate(x, w)
    got = torch.compile(mutate, fullgraph=True, backend=backend)(x, w)
    for g, e in zip(got, ref):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_no_graph_break_counted():
    torch._dynamo.reset()
    from torch._dynamo.testing import CompileCounter

    cnt = CompileCounter()
    x, w, b = _inputs()
    torch.compile(_all_ops, backend=cnt)(x, w, b)
    assert cnt.frame_count == 1
    assert cnt.op_count >= 5


def test_export():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(64), requires_grad=False)

        def forward(self, x, res):
            y, r = torch.ops.infiniop.add_rms_norm(x, res, self.w, 1e-6)
            return torch.ops.infiniop.silu(y), r

    x, res = _inputs()[0], rand((2, 8, 64), torch.float32, seed=16)
    m = Block()
    ep = torch.export.export(m, (x, res))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "infiniop.add_rms_norm.default" in targets and "infiniop.silu.default" in targets, targets
    got = ep.module()(x, res)
    exp = m(x, res)
    for g, e in zip(got, exp):
        torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_opcheck():
    x, w, b = _inputs()
    torch.library.opcheck(ops.silu.default, (x,))
    torch.library.opcheck(ops.add_rms_norm.default, (x, x.clone(), w, 1e-6))
    torch.library.opcheck(ops.layer_norm.default, (x, w, b, 1e-5))
    torch.library.opcheck(ops.layer_norm.default, (x, w, None, 1e-5))
    torch.library.opcheck(ops.causal_softmax.default, (x[..., :8].contiguous(),))
    torch.library.opcheck(ops.sigmoid_out.default, (x, torch.empty_like(x)))
    torch.library.opcheck(ops.silu_.default, (x.clone(),))


# -------------------------------------------------- caching, errors, grad


def test_descriptor_cache_no_creation_after_first_call():
    x = rand((3, 40), torch.float32, seed=17)
    ops.sigmoid(x)
    before = infiniop.cache_info()
    for _ in range(5):
        ops.sigmoid(x)
        ops.sigmoid(x.clone())
    after = infiniop.cache_info()
    assert after["misses"] == before["misses"]
    assert after["hits"] >= before["hits"] + 10
    ops.sigmoid(x.t())  # another layout: one new descriptor
    assert infiniop.cache_info()["misses"] == after["misses"] + 1


def _raised(call):
    """The InfiniopError a failing call carries: raised as such by the
    infiniop.* functions, as a RuntimeError with the library's text by a native
    operator called through torch.ops, or by torch.compile while tracing."""
    with pytest.raises(RuntimeError) as ei:
        call()
    err = InfiniopError.from_exception(ei.value)
    assert err is not None, ei.value
    return ei.value, err


def test_errors_carry_the_library_message():
    for call in (
        lambda: ops.add_rms_norm(torch.ones(2, 4), torch.ones(2, 3), torch.ones(4), 1e-6),
        lambda: infiniop.add_rms_norm(torch.ones(2, 4), torch.ones(2, 3), torch.ones(4), 1e-6),
    ):
        exc, err = _raised(call)
        assert err.status == Status.BAD_TENSOR_SHAPE and err.status_name == "INFINI_STATUS_BAD_TENSOR_SHAPE"
        assert "b" in err.message and "shape" in err.message
        assert err.function == "infiniopCreateAddRMSNormDescriptor"
    # the infiniop.* functions raise InfiniopError itself
    with pytest.raises(InfiniopError) as ei:
        infiniop.causal_softmax(torch.ones(5, 3))  # T < S
    assert ei.value.status == Status.BAD_TENSOR_SHAPE and ei.value.message
    _, err = _raised(lambda: ops.causal_softmax(torch.ones(5, 3)))
    assert err.status == Status.BAD_TENSOR_SHAPE and err.message
    _, err = _raised(lambda: ops.silu(torch.ones(3, dtype=torch.int32)))
    assert err.status == Status.BAD_TENSOR_DTYPE
    _, err = _raised(lambda: ops.add_rms_norm(torch.ones(2, 4), torch.ones(2, 4), torch.ones(4), float("nan")))
    assert "eps" in err.message.lower() or "epsilon" in err.message.lower()
    # the weight-length message names both lengths
    _, err = _raised(lambda: infiniop.add_rms_norm(torch.ones(2, 4), torch.ones(2, 4), torch.ones(3)))
    assert "[4]" in err.message and "[3]" in err.message, err.message
    # the same error from a compiled graph: found while tracing (the fake
    # implementation checks the layout through the library), raised by
    # torch.compile as a RuntimeError carrying the library's text
    torch._dynamo.reset()
    f = torch.compile(lambda a, b, w: infiniop.add_rms_norm(a, b, w), fullgraph=True, backend="aot_eager")
    exc, err = _raised(lambda: f(torch.ones(2, 4), torch.ones(2, 4), torch.ones(3)))
    assert err.status == Status.BAD_TENSOR_SHAPE and "[3]" in err.message, exc
    # and for a layout that only the library knows to refuse (T < S)
    torch._dynamo.reset()
    g = torch.compile(lambda x: ops.causal_softmax(x) * 2, fullgraph=True, backend="aot_eager")
    exc, err = _raised(lambda: g(torch.ones(5, 3)))
    assert err.status == Status.BAD_TENSOR_SHAPE, exc
    assert InfiniopError.from_exception(ValueError("unrelated")) is None


def test_requires_grad_is_refused():
    x = torch.randn(3, 8, requires_grad=True)
    w = torch.ones(8)
    for call in (
        lambda: infiniop.silu(x),
        lambda: infiniop.sigmoid(x),
        lambda: infiniop.causal_softmax(x),
        lambda: infiniop.add_rms_norm(x, x, w),
        lambda: infiniop.layer_norm(x, w),
        lambda: infiniop.silu(x, out=torch.empty(3, 8)),
        lambda: infiniop.add_rms_norm(x.detach(), x.detach(), w.requires_grad_(True), out=(None, None)),
    ):
        with pytest.raises(RuntimeError, match="no backward"):
            call()
        w.requires_grad_(False)
    if infiniop.torch_ops.NATIVE:
        # The native operators called directly through torch.ops get PyTorch's
        # fallback for operators without a derivative (no Python per call, so
        # no refusal): no gradient flows through them.
        with torch.no_grad():
            torch.testing.assert_close(ops.silu(x), torch.nn.functional.silu(x))
        return
    # the operators called directly: refused as well
    y = x * 1  # a non-leaf that requires grad
    for call in (
        lambda: ops.silu(x),
        lambda: ops.silu_(y),
        lambda: ops.sigmoid_out(x, torch.empty(3, 8)),
        lambda: ops.causal_softmax_(y),
        lambda: ops.add_rms_norm_out(x, x, w, 1e-6, torch.empty(3, 8), torch.empty(3, 8)),
        lambda: ops.layer_norm_out(x, w, None, 1e-5, torch.empty(3, 8), torch.empty(3, 8), torch.empty(3)),
    ):
        with pytest.raises(RuntimeError, match="no backward"):
            call()
    with torch.no_grad():
        ops.silu_(y)  # grad mode off: fine
    # no grad mode / detached inputs are fine
    with torch.no_grad():
        torch.testing.assert_close(ops.silu(x), torch.nn.functional.silu(x))
    with torch.inference_mode():
        torch.testing.assert_close(infiniop.sigmoid(x), torch.sigmoid(x))
    torch.testing.assert_close(ops.silu(x.detach()), torch.nn.functional.silu(x.detach()))


# ---------------------------------------------------------------- CUDA graph


@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=dname)
def test_cuda_graph_capture(dtype):
    x, w, b = _inputs("cuda", dtype)
    static_x = x.clone()
    _all_ops(static_x, w, b)  # warm: descriptors created outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = _all_ops(static_x, w, b)
    for seed in (20, 21):
        new = rand(x.shape, dtype, "cuda", seed=seed)
        static_x.copy_(new)
        g.replay()
        torch.cuda.synchronize()
        for got, exp in zip(outs, _all_ops(new, w, b)):
            torch.testing.assert_close(got, exp, rtol=0, atol=0)


@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
def test_cuda_compile_with_cudagraphs():
    torch._dynamo.reset()
    x, w, b = _inputs("cuda")
    exp = _all_ops(x, w, b)
    f = torch.compile(_all_ops, fullgraph=True, mode="reduce-overhead")
    for _ in range(3):
        got = f(x, w, b)
    for g_, e in zip(got, exp):
        torch.testing.assert_close(g_, e, rtol=0, atol=0)


@pytest.mark.skipif(CUDA_SKIP is not None, reason=str(CUDA_SKIP))
def test_cuda_current_stream():
    x = rand((64, 512), torch.float32, "cuda", seed=22)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = ops.silu(x)
        z = y * 2
    s.synchronize()
    check(z, 2 * silu_ref(np64(x)), torch.float32)
