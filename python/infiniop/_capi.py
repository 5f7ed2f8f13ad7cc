"""The library's C API through ctypes: one function per operator (_c_*).

This is the path for numpy arrays, CUDA array-interface objects and DLPack,
for PyTorch tensors with an explicit ``stream=``, and for the PyTorch
operators when the native binding (libinfiniop_torch) is not built. Each call
describes its tensors, looks up (or creates and caches) the
operator descriptor for their (shape, strides, dtype) and the device's handle,
allocates missing outputs, and runs the operator on the inputs' device:
for CUDA tensors on PyTorch's current stream (or the ``stream=`` given).
"""

from __future__ import annotations

import collections
import sys
import threading
from ctypes import byref, c_int, c_size_t, c_ssize_t, c_void_p

import numpy as np

from . import _lib as _libmod
from ._errors import Device, InfiniopError, raise_for_status
from ._tensor import Arg, as_arg, empty_like_arg, is_torch_tensor


# ------------------------------------------------------------------ handles


class _Handle:
    """An infiniopHandle_t for one (device kind, id); destroyed with the object."""

    __slots__ = ("lib", "ptr", "device")

    def __init__(self, lib, device):
        self.lib = lib
        self.device = device
        self.ptr = None
        rt, op = lib.rt, lib.op
        prev_kind, prev_id = c_int(0), c_int(0)
        have_prev = rt.infinirtGetDevice(byref(prev_kind), byref(prev_id)) == 0
        kind, idx = device
        st = rt.infinirtSetDevice(int(kind), int(idx))
        if st != 0:
            _raise_rt(lib, st, f"infinirtSetDevice({Device(kind).name}, {idx})")
        try:
            h = c_void_p()
            raise_for_status(lib, op.infiniopCreateHandle(byref(h)), "infiniopCreateHandle")
            self.ptr = h.value
        finally:
            if have_prev and (prev_kind.value, prev_id.value) != (int(kind), int(idx)):
                rt.infinirtSetDevice(prev_kind.value, prev_id.value)

    def __del__(self):
        if self.ptr is not None:
            try:
                self.lib.op.infiniopDestroyHandle(self.ptr)
            except Exception:
                pass
            self.ptr = None


def _raise_rt(lib, status, what):
    from ._errors import InfiniopError, Status

    try:
        name = lib.op.infiniopGetStatusString(status).decode()
    except Exception:
        name = "INFINI_STATUS_" + (Status(status).name if status in Status._value2member_map_ else "UNKNOWN")
    hint = ""
    if status in (5, 6):
        hint = " (is the library built with its CUDA backend, and is a GPU visible?)"
    raise InfiniopError(status, name, f"{what} failed{hint}", what)


# ------------------------------------------------------------- descriptors


class _OpDesc:
    """A cached operator descriptor; destroyed when the last reference goes."""

    __slots__ = ("handle", "ptr", "ws_size", "destroy", "run")

    def __init__(self, handle, ptr, ws_size, destroy, run):
        self.handle = handle  # keeps the handle alive while the descriptor is
        self.ptr = ptr
        self.ws_size = ws_size
        self.destroy = destroy
        self.run = run

    def __del__(self):
        if self.ptr is not None:
            try:
                self.destroy(self.ptr)
            except Exception:
                pass
            self.ptr = None


_CACHE_MAX = 1024
_lock = threading.Lock()
_handles: dict = {}
_descs: "collections.OrderedDict" = collections.OrderedDict()
_stats = {"hits": 0, "misses": 0}


def device_count(device=Device.NVIDIA) -> int:
    """Devices of a kind the library can use (0 when its backend is not built)."""
    lib = _libmod.get_lib()
    n = c_int(0)
    st = lib.rt.infinirtGetDeviceCount(int(device), byref(n))
    return n.value if st == 0 else 0


def clear_cache() -> None:
    """Destroy every cached operator descriptor and handle."""
    with _lock:
        _descs.clear()
        _handles.clear()
        _stats["hits"] = _stats["misses"] = 0


def cache_info() -> dict:
    """Cached descriptors and handles, and descriptor hits and misses."""
    with _lock:
        return {"descriptors": len(_descs), "handles": len(_handles), **_stats}


_libmod._reset_hooks.append(clear_cache)


def _get_handle(lib, device) -> _Handle:
    h = _handles.get(device)
    if h is None or h.lib is not lib:
        h = _Handle(lib, device)
        _handles[device] = h
    return h


def _tensor_desc(lib, arg: Arg | None, name: str):
    if arg is None:
        return None
    n = len(arg.shape)
    shape = (c_size_t * n)(*arg.shape)
    strides = (c_ssize_t * n)(*arg.strides)
    d = c_void_p()
    st = lib.op.infiniopCreateTensorDescriptor(byref(d), n, shape, strides, int(arg.dtype))
    raise_for_status(lib, st, f"infiniopCreateTensorDescriptor({name})")
    return d.value


def _require_symbols(lib, cname):
    for sym in (f"infiniopCreate{cname}Descriptor", f"infiniopGet{cname}WorkspaceSize",
                f"infiniop{cname}", f"infiniopDestroy{cname}Descriptor"):
        if not hasattr(lib.op, sym):
            raise NotImplementedError(f"infiniop: the loaded library ({lib.origin}) has no {sym}; rebuild it")


def _get_desc(cname: str, device, args, names, scalar=None) -> _OpDesc:
    lib = _libmod.get_lib()
    key = (cname, device, tuple(None if a is None else a.key for a in args), scalar)
    with _lock:
        e = _descs.get(key)
        if e is not None and e.handle.lib is lib:
            _stats["hits"] += 1
            return e
        _stats["misses"] += 1
        _require_symbols(lib, cname)
        handle = _get_handle(lib, device)
    op = lib.op
    tds = []
    try:
        for a, n in zip(args, names):
            tds.append(_tensor_desc(lib, a, n))
        d = c_void_p()
        create = getattr(op, f"infiniopCreate{cname}Descriptor")
        cargs = [handle.ptr, byref(d), *tds]
        if scalar is not None:
            cargs.append(scalar)
        raise_for_status(lib, create(*cargs), f"infiniopCreate{cname}Descriptor")
    finally:
        for t in tds:
            if t is not None:
                op.infiniopDestroyTensorDescriptor(t)
    destroy = getattr(op, f"infiniopDestroy{cname}Descriptor")
    entry = _OpDesc(handle, d.value, 0, destroy, getattr(op, f"infiniop{cname}"))
    ws = c_size_t(0)
    raise_for_status(lib, getattr(op, f"infiniopGet{cname}WorkspaceSize")(entry.ptr, byref(ws)), f"infiniopGet{cname}WorkspaceSize")
    entry.ws_size = ws.value
    with _lock:
        _descs[key] = entry
        while len(_descs) > _CACHE_MAX:
            _descs.popitem(last=False)  # destroyed once no call still holds it
    return entry


# ------------------------------------------------------------------- calls


def _stream_ptr(stream, args) -> int:
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr", "handle"):
            v = getattr(stream, attr, None)
            if isinstance(v, int):
                return v
        raise TypeError(f"infiniop: cannot get a CUDA stream pointer from {type(stream).__name__}")
    first = args[0]
    if first.device[0] != Device.NVIDIA:
        return 0
    if first.kind == "torch":
        import torch

        return torch.cuda.current_stream(first.device[1]).cuda_stream
    if first.kind == "cai":
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            return cupy.cuda.get_current_stream().ptr
    return 0


def _workspace(entry: _OpDesc, tmpl: Arg):
    n = entry.ws_size
    if n == 0:
        return None, 0
    if tmpl.device[0] == Device.CPU:
        buf = np.empty(n, dtype=np.uint8)
        return buf, buf.ctypes.data
    if tmpl.kind == "torch":
        import torch

        buf = torch.empty(n, dtype=torch.uint8, device=tmpl.obj.device)
        return buf, buf.data_ptr()
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        buf = cupy.empty(n, dtype=cupy.uint8)
        return buf, buf.data.ptr
    raise RuntimeError("infiniop: the operator needs a device workspace and no allocator is available")


def _check_devices(args, names):
    dev = None
    for a, n in zip(args, names):
        if a is None:
            continue
        if dev is None:
            dev, first = a.device, n
        elif a.device != dev:
            raise ValueError(
                f"infiniop: '{n}' is on {Device(a.device[0]).name.lower()}:{a.device[1]} but "
                f"'{first}' is on {Device(dev[0]).name.lower()}:{dev[1]}; all tensors must be on one device"
            )
    return dev


def _call(cname, outs, ins, out_names, in_names, scalar=None, stream=None):
    """Run operator cname with output and input Args (None: absent)."""
    args = list(outs) + list(ins)
    names = list(out_names) + list(in_names)
    device = _check_devices(args, names)
    try:
        entry = _get_desc(cname, device, args, names, scalar)
    except InfiniopError as e:
        _sequence_hint(e, args, names)
        raise
    lib = entry.handle.lib
    if device[0] == Device.NVIDIA:
        st = lib.rt.infinirtSetDevice(int(Device.NVIDIA), int(device[1]))
        if st != 0:
            _raise_rt(lib, st, f"infinirtSetDevice(NVIDIA, {device[1]})")
    s = _stream_ptr(stream, [a for a in args if a is not None])
    ws_obj, ws_ptr = _workspace(entry, args[0])
    st = entry.run(entry.ptr, ws_ptr, entry.ws_size, *[None if a is None else a.ptr for a in args], s)
    raise_for_status(lib, st, f"infiniop{cname}")
    del ws_obj
    for a in outs:
        if a is not None:
            a.finish()


def _sequence_hint(e, args, names):
    """A dtype refused for an input that numpy made from a Python list or
    scalar (float64 or int64): say what to pass instead."""
    if e.status != 10:  # INFINI_STATUS_BAD_TENSOR_DTYPE
        return
    for a, n in zip(args, names):
        if a is not None and a.sequence is not None:
            hint = (f" ('{n}' was a Python {a.sequence}, which numpy turns into {a.obj.dtype}; pass an array of "
                    f"a dtype the operator takes, e.g. np.asarray(..., dtype=np.float32) or a torch tensor)")
            e.message += hint
            e.args = (e.args[0] + hint,)
            return


def _eps(value, name) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"infiniop: {name} must be a number, not {type(value).__name__}") from None


def _split_out(out, n, opname):
    if out is None:
        return (None,) * n
    if isinstance(out, (tuple, list)):
        if len(out) != n:
            raise ValueError(f"infiniop: {opname}: out= takes {n} tensors (use None for any to allocate), got {len(out)}")
        return tuple(out)
    return (out,) + (None,) * (n - 1)


def _user(arg: Arg):
    """The object to hand back to the caller for an output Arg."""
    return arg.writeback if arg.writeback is not None else arg.obj


def _c_add_rms_norm(a, b, weight, eps: float = 1e-6, *, out=None, stream=None):
    """Fused residual add and RMS norm over the last dimension.

    ``r = a + b`` (in float32); returns ``(y, residual_out)`` with
    ``residual_out = r`` and ``y = r / sqrt(mean(r**2) + eps) * weight``.

    a, b: same shape ``[..., D]`` and dtype (float16, bfloat16 or float32),
    last dimension contiguous; weight: ``[D]`` (float32 weights are accepted
    with half activations). ``out=(y, residual_out)`` writes into given
    tensors (either may be None); y or residual_out may be ``a`` or ``b``
    itself (in-place), e.g. ``add_rms_norm(h, x, w, out=(x, h))``.
    """
    eps = _eps(eps, "eps")
    A, B, W = as_arg(a, "a"), as_arg(b, "b"), as_arg(weight, "weight")
    y, r = _split_out(out, 2, "add_rms_norm")
    Y = as_arg(y, "y", True) if y is not None else empty_like_arg(A, A.shape, "y")
    R = as_arg(r, "residual_out", True) if r is not None else empty_like_arg(A, A.shape, "residual_out")
    _call("AddRMSNorm", (Y, R), (A, B, W), ("y", "residual_out"), ("a", "b", "weight"), eps, stream)
    return _user(Y), _user(R)


def _c_layer_norm(x, weight, bias=None, eps: float = 1e-5, *, out=None, stream=None):
    """Layer normalisation over the last dimension, with its statistics.

    Returns ``(output, input_standardization, input_std_deviation)``:
    ``std = sqrt(var(x) + eps)`` (population variance; shape ``x.shape[:-1]``),
    ``xhat = (x - mean) / std`` and ``output = xhat * weight + bias``.
    One dtype for all tensors (float16, bfloat16 or float32); any strides.
    ``out=(output, xhat, std)`` writes into given tensors (any may be None);
    output may be x itself (in-place).
    """
    eps = _eps(eps, "eps")
    X, W = as_arg(x, "input"), as_arg(weight, "weight")
    Bi = as_arg(bias, "bias") if bias is not None else None
    o, xh, sd = _split_out(out, 3, "layer_norm")
    O = as_arg(o, "output", True) if o is not None else empty_like_arg(X, X.shape, "output")
    XH = as_arg(xh, "input_standardization", True) if xh is not None else empty_like_arg(X, X.shape, "input_standardization")
    SD = as_arg(sd, "input_std_deviation", True) if sd is not None else empty_like_arg(X, X.shape[:-1], "input_std_deviation")
    _call(
        "LayerNorm",
        (O, XH, SD),
        (X, W, Bi),
        ("output", "input_standardization", "input_std_deviation"),
        ("input", "weight", "bias"),
        eps,
        stream,
    )
    return _user(O), _user(XH), _user(SD)


def _unary(cname, pyname, x, out, stream, xname="x", yname="y"):
    X = as_arg(x, xname)
    Y = as_arg(out, yname, True) if out is not None else empty_like_arg(X, X.shape, yname)
    _call(cname, (Y,), (X,), (yname,), (xname,), None, stream)
    return _user(Y)


def _c_causal_softmax(x, *, out=None, stream=None):
    """Softmax over the last dimension under a causal mask.

    x: ``[..., S, T]`` with ``T >= S``; row i of each S x T slice sees
    columns ``j <= i + T - S``; masked entries are exact zeros. float16,
    bfloat16 or float32, any strides. ``out=x`` works in place.
    """
    return _unary("CausalSoftmax", "causal_softmax", x, out, stream)


def _c_causal_softmax_(x, *, stream=None):
    """In-place :func:`causal_softmax`; returns x."""
    return _unary("CausalSoftmax", "causal_softmax", x, x, stream)


def _c_silu(x, *, out=None, stream=None):
    """``x * sigmoid(x)`` elementwise (float16, bfloat16, float32, float64).

    With ``out=``, x may have a shape broadcastable to out's. ``out=x`` works
    in place.
    """
    return _unary("Silu", "silu", x, out, stream, "input", "output")


def _c_silu_(x, *, stream=None):
    """In-place :func:`silu`; returns x."""
    return _unary("Silu", "silu", x, x, stream, "input", "output")


def _c_sigmoid(x, *, out=None, stream=None):
    """``1 / (1 + exp(-x))`` elementwise, without overflow for any input.

    float16, bfloat16, float32, float64. With ``out=``, x may have a shape
    broadcastable to out's. ``out=x`` works in place.
    """
    return _unary("Sigmoid", "sigmoid", x, out, stream)


def _c_sigmoid_(x, *, stream=None):
    """In-place :func:`sigmoid`; returns x."""
    return _unary("Sigmoid", "sigmoid", x, x, stream)




def validate(cname, tensors, names, scalar=None) -> None:
    """Check a call's tensors (torch fake or meta tensors: shapes, strides and
    dtypes only) through the library, as its descriptor creation does, and
    raise the library's InfiniopError for a layout it refuses.

    The fake implementations of the PyTorch operators call this, so a bad
    layout fails while a graph is traced, with the library's message. Layouts
    with symbolic sizes are left to the call itself. The check uses the CPU
    backend (the layout rules are the same on every device) and the
    descriptor cache, so a layout is checked once."""
    from ._tensor import _from_torch_meta

    args = []
    for t, n in zip(tensors, names):
        if t is None:
            args.append(None)
            continue
        a = _from_torch_meta(t, n)
        if a is None:
            return
        args.append(a)
    _get_desc(cname, (Device.CPU, 0), args, names, scalar)
