"""Turning numpy arrays, PyTorch tensors and other array objects into what
the C ABI needs: a data pointer, shape, element strides, dtype and device.

No copies are made for anything the C API can describe (any element-aligned
strides, negative and zero included). Inputs it cannot describe (byte
strides that are not a multiple of the item size, misaligned data, non-native
byte order) are copied; outputs of that kind are computed into a temporary
and copied back.
"""

from __future__ import annotations

import sys

import numpy as np

from ._errors import Device, DType

try:  # bfloat16 for numpy users
    import ml_dtypes as _ml_dtypes

    _NP_BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml_dtypes = None
    _NP_BF16 = None

_NP_BY_KIND = {
    ("f", 2): DType.F16,
    ("f", 4): DType.F32,
    ("f", 8): DType.F64,
    ("i", 1): DType.I8,
    ("i", 2): DType.I16,
    ("i", 4): DType.I32,
    ("i", 8): DType.I64,
    ("u", 1): DType.U8,
    ("u", 2): DType.U16,
    ("u", 4): DType.U32,
    ("u", 8): DType.U64,
    ("b", 1): DType.BOOL,
    ("c", 8): DType.C64,
    ("c", 16): DType.C128,
}


def numpy_dtype_to_infini(dt: np.dtype) -> DType:
    if _NP_BF16 is not None and dt == _NP_BF16:
        return DType.BF16
    r = _NP_BY_KIND.get((dt.kind, dt.itemsize))
    if r is None:
        raise TypeError(
            f"infiniop: numpy dtype {dt} has no InfiniOP equivalent "
            "(the operators take float16, bfloat16 (ml_dtypes), float32 and float64)"
        )
    return r


_TORCH_DTYPES = None


def _torch_dtypes(torch):
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        m = {
            torch.float16: DType.F16,
            torch.bfloat16: DType.BF16,
            torch.float32: DType.F32,
            torch.float64: DType.F64,
            torch.int8: DType.I8,
            torch.int16: DType.I16,
            torch.int32: DType.I32,
            torch.int64: DType.I64,
            torch.uint8: DType.U8,
            torch.bool: DType.BOOL,
            torch.complex64: DType.C64,
            torch.complex128: DType.C128,
        }
        _TORCH_DTYPES = m
    return _TORCH_DTYPES


def is_torch_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


class Arg:
    """One tensor argument as the C API sees it.

    kind: "numpy", "torch" or "cai" (__cuda_array_interface__ objects).
    obj: the object whose memory is used (possibly a temporary copy).
    writeback: for outputs computed into a temporary, the user's array.
    """

    __slots__ = ("obj", "kind", "ptr", "shape", "strides", "dtype", "device", "writeback", "np_dtype", "sequence")

    def __init__(self, obj, kind, ptr, shape, strides, dtype, device, np_dtype=None):
        if 0 in shape:
            # An empty tensor's strides mean nothing (numpy 2 reports zeros):
            # describe it as contiguous so no layout check trips on them.
            strides = _contiguous_strides(shape)
        self.obj = obj
        self.kind = kind
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device  # (Device, id)
        self.writeback = None
        self.np_dtype = np_dtype
        self.sequence = None  # the Python type (list, tuple, ...) it was made from

    @property
    def key(self):
        return (self.shape, self.strides, int(self.dtype))

    def finish(self):
        """Copy a temporary output back into the user's array."""
        if self.writeback is not None:
            np.copyto(self.writeback, self.obj, casting="no")


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _describable(a: np.ndarray) -> bool:
    isz = a.dtype.itemsize
    if not a.dtype.isnative:
        return False
    if a.size == 0:
        return True
    if not a.flags.aligned:
        return False
    return all(s % isz == 0 for s in a.strides)


_NP_CACHE: dict = {}
_CPU = (Device.CPU, 0)


def _from_numpy(a: np.ndarray, name: str, output: bool) -> Arg:
    dtype = a.dtype
    dt = _NP_CACHE.get(dtype)
    if dt is None:
        dt = _NP_CACHE[dtype] = numpy_dtype_to_infini(dtype)
    flags = a.flags
    if output and not flags.writeable:
        raise ValueError(f"infiniop: output '{name}' is a read-only array")
    writeback = None
    if not ((flags.c_contiguous and flags.aligned and dtype.isnative) or _describable(a)):
        if output:
            writeback = a
            a = np.empty(a.shape, dtype=dtype.newbyteorder("="))
        else:
            a = np.array(a, dtype=dtype.newbyteorder("="), order="C", copy=True)
        dtype = a.dtype
    isz = dtype.itemsize
    arg = Arg(a, "numpy", a.ctypes.data, a.shape, tuple([s // isz for s in a.strides]), dt, _CPU, dtype)
    arg.writeback = writeback
    return arg


def _from_torch(t, name: str, output: bool) -> Arg:
    import torch

    dt = _torch_dtypes(torch).get(t.dtype)
    if dt is None:
        raise TypeError(f"infiniop: torch dtype {t.dtype} of '{name}' has no InfiniOP equivalent")
    if not output and (t.is_neg() or t.is_conj()):
        t = t.resolve_neg().resolve_conj()
    dev = t.device
    if dev.type == "cpu":
        device = (Device.CPU, 0)
    elif dev.type == "cuda":
        if getattr(torch.version, "hip", None):
            raise ValueError("infiniop: ROCm tensors are not supported (NVIDIA CUDA and CPU only)")
        idx = dev.index if dev.index is not None else torch.cuda.current_device()
        device = (Device.NVIDIA, idx)
    else:
        raise ValueError(f"infiniop: '{name}' is on device {dev}; only cpu and cuda tensors are supported")
    return Arg(t, "torch", t.data_ptr(), tuple(t.shape), tuple(t.stride()), dt, device)


def _from_torch_meta(t, name: str):
    """An Arg with no data for a fake or meta tensor (its layout only); None
    when a size or stride is symbolic."""
    import torch

    dt = _torch_dtypes(torch).get(t.dtype)
    if dt is None:
        raise TypeError(f"infiniop: torch dtype {t.dtype} of '{name}' has no InfiniOP equivalent")
    shape, strides = tuple(t.shape), tuple(t.stride())
    if not all(type(v) is int for v in shape + strides):
        return None
    return Arg(None, "torch", 0, shape, strides, dt, (Device.CPU, 0))


def _current_nvidia_device() -> int:
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return torch.cuda.current_device()
        except Exception:
            pass
    return 0


def _from_cai(obj, name: str, output: bool) -> Arg:
    cai = obj.__cuda_array_interface__
    dt_np = np.dtype(cai["typestr"])
    dt = numpy_dtype_to_infini(dt_np) if cai["typestr"][1:] != "V2" else DType.BF16
    ptr, readonly = cai["data"]
    if output and readonly:
        raise ValueError(f"infiniop: output '{name}' is read-only")
    shape = tuple(cai["shape"])
    isz = dt_np.itemsize
    bstrides = cai.get("strides")
    if bstrides is None:
        strides = _contiguous_strides(shape)
    else:
        if any(s % isz for s in bstrides) or (ptr % isz):
            raise ValueError(f"infiniop: '{name}' has strides or a data address that are not element-aligned")
        strides = tuple(s // isz for s in bstrides)
    dev = getattr(obj, "device", None)
    dev_id = getattr(dev, "id", None)
    if dev_id is None:
        dev_id = _current_nvidia_device()
    return Arg(obj, "cai", ptr or 0, shape, strides, dt, (Device.NVIDIA, int(dev_id)))


def as_arg(obj, name: str, output: bool = False) -> Arg:
    """Describe obj for the C API (without copying when possible)."""
    if isinstance(obj, np.ndarray):
        return _from_numpy(obj, name, output)
    if is_torch_tensor(obj):
        return _from_torch(obj, name, output)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cai(obj, name, output)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        dev_type = obj.__dlpack_device__()[0]
        if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
            return _from_numpy(np.from_dlpack(obj), name, output)
        if dev_type == 2:  # kDLCUDA: view it through torch, zero-copy
            try:
                import torch
            except ImportError:
                raise TypeError(
                    f"infiniop: '{name}' is a CUDA DLPack object; viewing it needs PyTorch "
                    "(or pass an object with __cuda_array_interface__)"
                ) from None
            return _from_torch(torch.from_dlpack(obj), name, output)
        raise ValueError(f"infiniop: '{name}' is on DLPack device type {dev_type}; only CPU and CUDA are supported")
    if output:
        raise TypeError(f"infiniop: output '{name}' must be a numpy array, a torch tensor or a CUDA array, not {type(obj).__name__}")
    arg = _from_numpy(np.asarray(obj), name, output)
    arg.sequence = type(obj).__name__  # for the hint when the library refuses its dtype
    return arg


def empty_like_arg(tmpl: Arg, shape, name: str) -> Arg:
    """A new contiguous output of tmpl's array library, dtype and device."""
    shape = tuple(shape)
    if tmpl.kind == "numpy":
        dt = tmpl.np_dtype if tmpl.np_dtype is not None else tmpl.obj.dtype
        return _from_numpy(np.empty(shape, dtype=dt), name, True)
    if tmpl.kind == "torch":
        import torch

        t = tmpl.obj
        return _from_torch(torch.empty(shape, dtype=t.dtype, device=t.device), name, True)
    # __cuda_array_interface__ producers: use cupy when that is what it is.
    mod = type(tmpl.obj).__module__.split(".")[0]
    if mod == "cupy":
        import cupy

        with cupy.cuda.Device(tmpl.device[1]):
            return _from_cai(cupy.empty(shape, dtype=tmpl.obj.dtype), name, True)
    raise TypeError(f"infiniop: cannot allocate '{name}' for a {type(tmpl.obj).__name__}; pass it with out=")
