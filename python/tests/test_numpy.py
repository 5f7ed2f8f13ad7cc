"""The operators on numpy arrays (CPU) against float64 references."""

import threading

import numpy as np
import pytest
from helpers import (
    BF16,
    F16,
    F32,
    F64,
    add_rms_norm_ref,
    assert_close,
    causal_softmax_ref,
    f64,
    layer_norm_ref,
    rand,
    sigmoid_ref,
    silu_ref,
)

import infiniop
from infiniop import InfiniopError, Status

HALF_AND_F32 = [F16, BF16, F32]
ALL_FLOAT = [F16, BF16, F32, F64]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def ids(dt):
    return np.dtype(dt).name


# ------------------------------------------------------------- silu/sigmoid

UNARY = [
    (infiniop.silu, silu_ref, infiniop.silu_),
    (infiniop.sigmoid, sigmoid_ref, infiniop.sigmoid_),
]
UNARY_IDS = ["silu", "sigmoid"]


@pytest.mark.parametrize("op,ref,op_", UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("dtype", ALL_FLOAT, ids=ids)
@pytest.mark.parametrize("shape", [(), (7,), (3, 5, 17), (2, 1000)])
def test_unary(op, ref, op_, dtype, shape, rng):
    x = rand(shape, dtype, rng, scale=4.0)
    y = op(x)
    assert isinstance(y, np.ndarray) and y.dtype == dtype and y.shape == x.shape
    assert_close(y, ref(x), dtype)


@pytest.mark.parametrize("op,ref,op_", UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("dtype", ALL_FLOAT, ids=ids)
def test_unary_extremes(op, ref, op_, dtype):
    big = float(np.finfo(np.float16).max) if dtype == F16 else 1e30
    x = np.array([-big, -1000, -100, -30, -1e-3, 0, 1e-3, 30, 100, 1000, big], dtype=np.float64).astype(dtype)
    y = op(x)
    assert not np.isnan(f64(y)).any()
    assert_close(y, ref(x), dtype, scale=1.0)
    if op is infiniop.sigmoid:
        assert f64(y).min() >= 0.0 and f64(y).max() <= 1.0


@pytest.mark.parametrize("op,ref,op_", UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("dtype", ALL_FLOAT, ids=ids)
def test_unary_strided(op, ref, op_, dtype, rng):
    base = rand((8, 30), dtype, rng, scale=3.0)
    x = base[::2, 1::3]  # non-contiguous view
    assert not x.flags.c_contiguous
    assert_close(op(x), ref(x), dtype)
    xr = base[::-1, ::-2]  # negative strides
    assert_close(op(xr), ref(xr), dtype)
    xt = base.T  # transposed
    assert_close(op(xt), ref(xt), dtype)
    # strided output, written in place inside a larger buffer
    outbuf = np.full((8, 30), 7, dtype=dtype)
    out = outbuf[1::2, ::3]
    r = op(x, out=out)
    assert r is out
    assert_close(out, ref(x), dtype)
    assert (f64(outbuf[0::2]) == 7).all() and (f64(outbuf[1::2, 1::3]) == 7).all()


@pytest.mark.parametrize("op,ref,op_", UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("dtype", [F32, BF16], ids=ids)
def test_unary_broadcast(op, ref, op_, dtype, rng):
    x = rand((1, 5), dtype, rng)
    out = np.empty((4, 5), dtype=dtype)
    op(x, out=out)
    assert_close(out, np.broadcast_to(ref(x), (4, 5)), dtype)
    xb = np.broadcast_to(rand((5,), dtype, rng), (3, 5))  # stride 0, read-only
    assert xb.strides[0] == 0
    assert_close(op(xb), ref(xb), dtype)


@pytest.mark.parametrize("op,ref,op_", UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("dtype", ALL_FLOAT, ids=ids)
def test_unary_inplace(op, ref, op_, dtype, rng):
    x = rand((6, 33), dtype, rng, scale=3.0)
    expected = ref(x)
    r = op_(x)
    assert r is x
    assert_close(x, expected, dtype)
    x = rand((6, 33), dtype, rng, scale=3.0)
    expected = ref(x)
    assert op(x, out=x) is x
    assert_close(x, expected, dtype)
    # in place on a strided view
    base = rand((6, 34), dtype, rng)
    v = base[:, ::2]
    expected = ref(v)
    op_(v)
    assert_close(base[:, ::2], expected, dtype)


# --------------------------------------------------------------- add_rms_norm

RMS_PAIRS = [(F16, F16), (F16, BF16), (F16, F32), (BF16, BF16), (BF16, F16), (BF16, F32), (F32, F32)]


@pytest.mark.parametrize("atype,wtype", RMS_PAIRS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(64,), (4, 64), (2, 3, 128), (3, 4097)])
def test_add_rms_norm(atype, wtype, shape, rng):
    a, b = rand(shape, atype, rng), rand(shape, atype, rng)
    w = rand(shape[-1:], wtype, rng, scale=0.5, offset=1.0)
    y, res = infiniop.add_rms_norm(a, b, w, eps=1e-6)
    assert y.dtype == atype and res.dtype == atype and y.shape == shape and res.shape == shape
    ey, er = add_rms_norm_ref(a, b, w, 1e-6)
    assert_close(res, er, atype, scale=2.0)
    assert_close(y, ey, atype, scale=2.0)


@pytest.mark.parametrize("atype", HALF_AND_F32, ids=ids)
def test_add_rms_norm_strided(atype, rng):
    D = 96
    abuf = rand((6, 2 * D), atype, rng)
    bbuf = rand((3, 4, D), atype, rng)
    a = abuf[::2, :D]  # row stride 2*2D, last contiguous
    b = bbuf[:, 1, :]
    wbuf = rand((2 * D,), F32 if atype == F32 else atype, rng, offset=1.0)
    w = wbuf[::2]  # weight may have any stride
    ybuf = np.zeros((3, 2, D), dtype=atype)
    y = ybuf[:, 1, :]
    rbuf = np.zeros((3, D + 5), dtype=atype)
    r = rbuf[:, 5:]
    ry, rr = infiniop.add_rms_norm(a, b, w, 1e-5, out=(y, r))
    assert ry is y and rr is r
    ey, er = add_rms_norm_ref(a, b, w, 1e-5)
    assert_close(y, ey, atype, scale=2.0)
    assert_close(r, er, atype, scale=2.0)
    assert (f64(ybuf[:, 0, :]) == 0).all() and (f64(rbuf[:, :5]) == 0).all()


@pytest.mark.parametrize("atype", HALF_AND_F32, ids=ids)
def test_add_rms_norm_inplace(atype, rng):
    shape = (5, 80)
    a, b = rand(shape, atype, rng), rand(shape, atype, rng)
    w = rand((80,), atype, rng, offset=1.0)
    ey, er = add_rms_norm_ref(a, b, w, 1e-6)
    # y over b, residual over a: the transformer-block pattern
    y, r = infiniop.add_rms_norm(a, b, w, out=(b, a))
    assert y is b and r is a
    assert_close(b, ey, atype, scale=2.0)
    assert_close(a, er, atype, scale=2.0)
    a, b = rand(shape, atype, rng), rand(shape, atype, rng)
    ey, er = add_rms_norm_ref(a, b, w, 1e-6)
    y, r = infiniop.add_rms_norm(a, b, w, out=(a, None))
    assert y is a
    assert_close(a, ey, atype, scale=2.0)
    assert_close(r, er, atype, scale=2.0)


# ----------------------------------------------------------------- layer_norm


@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=ids)
@pytest.mark.parametrize("shape", [(16,), (5, 32), (2, 3, 40), (2, 3000)])
@pytest.mark.parametrize("with_bias", [True, False], ids=["bias", "nobias"])
def test_layer_norm(dtype, shape, with_bias, rng):
    x = rand(shape, dtype, rng, scale=2.0, offset=0.5)
    w = rand(shape[-1:], dtype, rng, scale=0.5, offset=1.0)
    b = rand(shape[-1:], dtype, rng) if with_bias else None
    out, xhat, std = infiniop.layer_norm(x, w, b, eps=1e-5)
    assert out.shape == shape and xhat.shape == shape and std.shape == shape[:-1]
    assert out.dtype == dtype and xhat.dtype == dtype and std.dtype == dtype
    eo, ex, es = layer_norm_ref(x, w, b, 1e-5)
    assert_close(std, es, dtype, scale=2.0)
    assert_close(xhat, ex, dtype, scale=4.0)
    assert_close(out, eo, dtype, scale=4.0)


def test_layer_norm_large_offset(rng):
    # The variance is computed stably: a large mean does not cancel it away.
    x = (1000.0 + rng.standard_normal((4, 256))).astype(np.float32)
    w = np.ones(256, np.float32)
    out, xhat, std = infiniop.layer_norm(x, w, eps=1e-5)
    eo, ex, es = layer_norm_ref(x, w, None, 1e-5)
    np.testing.assert_allclose(f64(std), es, rtol=1e-4)
    np.testing.assert_allclose(f64(xhat), ex, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=ids)
def test_layer_norm_strided(dtype, rng):
    D = 24
    xbuf = rand((D, 10), dtype, rng)
    x = xbuf.T[::2]  # shape (5, D), last dimension not contiguous
    w = rand((3 * D,), dtype, rng, offset=1.0)[::3]
    b = rand((D,), dtype, rng)[::-1]
    out = np.zeros((D, 5), dtype=dtype).T
    xhat = np.zeros((5, 2 * D), dtype=dtype)[:, ::2]
    std = np.zeros((10,), dtype=dtype)[::2]
    r = infiniop.layer_norm(x, w, b, 1e-5, out=(out, xhat, std))
    assert r[0] is out and r[1] is xhat and r[2] is std
    eo, ex, es = layer_norm_ref(x, w, b, 1e-5)
    assert_close(out, eo, dtype, scale=4.0)
    assert_close(xhat, ex, dtype, scale=4.0)
    assert_close(std, es, dtype, scale=2.0)


@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=ids)
def test_layer_norm_inplace(dtype, rng):
    x = rand((4, 48), dtype, rng)
    w = rand((48,), dtype, rng, offset=1.0)
    b = rand((48,), dtype, rng)
    eo, ex, es = layer_norm_ref(x, w, b, 1e-5)
    out, xhat, std = infiniop.layer_norm(x, w, b, out=(x, None, None))
    assert out is x
    assert_close(x, eo, dtype, scale=4.0)
    assert_close(xhat, ex, dtype, scale=4.0)


# ------------------------------------------------------------- causal_softmax


@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=ids)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 7), (2, 3, 5, 9), (2, 2500)])
def test_causal_softmax(dtype, shape, rng):
    x = rand(shape, dtype, rng, scale=3.0)
    y = infiniop.causal_softmax(x)
    assert y.dtype == dtype and y.shape == shape
    expected, mask = causal_softmax_ref(x)
    assert_close(y, expected, dtype)
    assert (f64(y)[..., ~mask] == 0).all(), "masked entries must be exact zeros"


@pytest.mark.parametrize("dtype", HALF_AND_F32, ids=ids)
def test_causal_softmax_strided_inplace(dtype, rng):
    base = rand((3, 12, 8), dtype, rng, scale=2.0)
    x = base.transpose(0, 2, 1)[:, :, ::2]  # (3, 8, 6), arbitrary strides
    x = x[:, :4, :]  # (3, 4, 6): S=4 <= T=6
    expected, mask = causal_softmax_ref(x)
    assert_close(infiniop.causal_softmax(x), expected, dtype)
    out = np.zeros((3, 6, 4), dtype=dtype).transpose(0, 2, 1)
    infiniop.causal_softmax(x, out=out)
    assert_close(out, expected, dtype)
    r = infiniop.causal_softmax_(x)
    assert r is x
    assert_close(base.transpose(0, 2, 1)[:, :4, ::2], expected, dtype)


def test_causal_softmax_nan_row():
    x = np.zeros((3, 3), np.float32)
    x[1, 0] = np.nan
    y = infiniop.causal_softmax(x)
    assert np.isnan(y[1, :2]).all()
    np.testing.assert_allclose(y[0], [1, 0, 0])


# ------------------------------------------------------------------- edge cases


def test_empty_tensors(rng):
    x = np.empty((0, 5), np.float32)
    assert infiniop.silu(x).shape == (0, 5)
    a = np.empty((0, 8), np.float32)
    w = np.ones(8, np.float32)
    y, r = infiniop.add_rms_norm(a, a.copy(), w)
    assert y.shape == (0, 8)
    out, xhat, std = infiniop.layer_norm(np.empty((0, 8), np.float32), w)
    assert std.shape == (0,)


def test_python_sequence_input():
    y = infiniop.sigmoid([0.0, 1.0])
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, sigmoid_ref([0.0, 1.0]), rtol=1e-12)


def test_unaligned_strides_are_copied(rng):
    # float32 elements 6 bytes apart: not describable in element strides.
    buf = np.zeros(64, np.uint8)
    x = np.ndarray((5,), dtype=np.float32, buffer=buf, offset=0, strides=(6,))
    x[...] = np.arange(5, dtype=np.float32) - 2
    y = infiniop.silu(x)
    assert_close(y, silu_ref(x), F32)
    out = np.ndarray((5,), dtype=np.float32, buffer=np.zeros(64, np.uint8), offset=2, strides=(6,))
    r = infiniop.silu(x, out=out)
    assert r is out
    assert_close(out, silu_ref(x), F32)
    # non-native byte order
    xs = (np.arange(4, dtype=np.float32) - 1).astype(">f4")
    assert_close(infiniop.sigmoid(xs), sigmoid_ref(xs), F32)


def test_descriptor_cache(rng):
    x = rand((3, 17), F32, rng)
    infiniop.silu(x)
    before = infiniop.cache_info()
    for _ in range(20):
        infiniop.silu(rand((3, 17), F32, rng))
    after = infiniop.cache_info()
    assert after["misses"] == before["misses"]
    assert after["hits"] >= before["hits"] + 20
    infiniop.silu(x.T)  # new strides: a new descriptor
    assert infiniop.cache_info()["misses"] == after["misses"] + 1
    infiniop.clear_cache()
    assert infiniop.cache_info()["descriptors"] == 0
    assert_close(infiniop.silu(x), silu_ref(x), F32)


def test_threads(rng):
    xs = [rand((16, 64), F32, rng) for _ in range(8)]
    results = [None] * len(xs)
    errors = []

    def work(i):
        try:
            for _ in range(20):
                results[i] = infiniop.layer_norm(xs[i], np.ones(64, np.float32))[0]
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    for x, r in zip(xs, results):
        assert_close(r, layer_norm_ref(x, np.ones(64), None, 1e-5)[0], F32, scale=4.0)


# ----------------------------------------------------------------------- errors


def expect(status, fn, *args, **kw):
    with pytest.raises(InfiniopError) as ei:
        fn(*args, **kw)
    e = ei.value
    assert e.status == status, str(e)
    assert e.status_name == "INFINI_STATUS_" + Status(status).name
    assert isinstance(e.message, str) and e.message, "the library should say what is wrong"
    assert e.status_name in str(e)
    return e


def test_error_bad_dtype():
    e = expect(Status.BAD_TENSOR_DTYPE, infiniop.silu, np.ones(4, np.int32))
    assert "Silu" in e.function
    expect(Status.BAD_TENSOR_DTYPE, infiniop.layer_norm, np.ones((2, 4)), np.ones(4))  # float64
    expect(Status.BAD_TENSOR_DTYPE, infiniop.sigmoid, np.ones(4, np.float32), out=np.empty(4, np.float16))
    # float32 weights with float32 activations only; f16 weights with f32 activations are not allowed
    expect(
        Status.BAD_TENSOR_DTYPE,
        infiniop.add_rms_norm,
        np.ones((2, 4), np.float32),
        np.ones((2, 4), np.float32),
        np.ones(4, np.float16),
    )


def test_error_bad_shape():
    a = np.ones((2, 8), np.float32)
    e = expect(Status.BAD_TENSOR_SHAPE, infiniop.add_rms_norm, a, np.ones((2, 4), np.float32), np.ones(8, np.float32))
    assert e.message
    expect(Status.BAD_TENSOR_SHAPE, infiniop.add_rms_norm, a, a, np.ones(4, np.float32))
    expect(Status.BAD_TENSOR_SHAPE, infiniop.causal_softmax, np.ones((5, 3), np.float32))  # T < S
    expect(Status.BAD_TENSOR_SHAPE, infiniop.causal_softmax, np.ones(5, np.float32))  # ndim 1
    expect(Status.BAD_TENSOR_SHAPE, infiniop.layer_norm, np.ones((3, 0), np.float32), np.ones(0, np.float32))
    expect(Status.BAD_TENSOR_SHAPE, infiniop.silu, np.ones((3, 4), np.float32), out=np.empty((3, 5), np.float32))
    expect(
        Status.BAD_TENSOR_SHAPE,
        infiniop.layer_norm,
        np.ones((3, 4), np.float32),
        np.ones(4, np.float32),
        out=(None, None, np.empty(4, np.float32)),
    )


def test_error_bad_strides():
    # add_rms_norm needs a contiguous last dimension
    a = np.ones((4, 8), np.float32).T
    expect(Status.BAD_TENSOR_STRIDES, infiniop.add_rms_norm, a, a.copy(), np.ones(4, np.float32))
    # an output whose elements overlap (stride 0)
    out = np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), shape=(3, 4), strides=(0, 4))
    expect(Status.BAD_TENSOR_STRIDES, infiniop.silu, np.ones((3, 4), np.float32), out=out)


def test_error_bad_eps():
    x = np.ones((2, 4), np.float32)
    w = np.ones(4, np.float32)
    expect(Status.BAD_PARAM, infiniop.layer_norm, x, w, eps=-1.0)
    expect(Status.BAD_PARAM, infiniop.add_rms_norm, x, x, w, eps=float("nan"))
    with pytest.raises(TypeError):
        infiniop.layer_norm(x, w, eps="small")


def test_error_partial_overlap():
    buf = np.arange(10, dtype=np.float32)
    # out shares memory with x but with another layout: not in-place
    expect(Status.BAD_PARAM, infiniop.sigmoid, buf[:8], out=buf[2:10])


def test_python_side_errors():
    with pytest.raises(TypeError, match="no InfiniOP equivalent"):
        infiniop.silu(np.array(["a"], dtype=object))
    ro = np.ones(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        infiniop.silu(np.ones(4, np.float32), out=ro)
    with pytest.raises(ValueError, match="out= takes 2"):
        infiniop.add_rms_norm(np.ones((1, 4), np.float32), np.ones((1, 4), np.float32), np.ones(4, np.float32), out=(1, 2, 3))
    with pytest.raises(TypeError):
        infiniop.silu(np.ones(4, np.float32), out=[0.0] * 4)


def test_error_is_exception_with_fields():
    e = InfiniopError(11, "INFINI_STATUS_BAD_TENSOR_SHAPE", "add_rms_norm: b: shape[1]", "infiniopX")
    assert isinstance(e, Exception)
    assert (e.status, e.status_name, e.message) == (11, "INFINI_STATUS_BAD_TENSOR_SHAPE", "add_rms_norm: b: shape[1]")
    assert "BAD_TENSOR_SHAPE" in str(e) and "shape[1]" in str(e)


def test_python_list_refused_dtype_says_what_to_pass():
    # a list becomes float64, which add_rms_norm does not take: the error says so
    with pytest.raises(infiniop.InfiniopError) as ei:
        infiniop.add_rms_norm([[1.0, 2.0]], [[1.0, 2.0]], np.ones(2, np.float32))
    assert ei.value.status == infiniop.Status.BAD_TENSOR_DTYPE
    assert "Python list" in ei.value.message and "float64" in ei.value.message and "np.asarray" in str(ei.value)
