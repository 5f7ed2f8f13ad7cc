"""The functional API: one Python function per operator.

PyTorch tensors (without ``stream=``) go through the torch.library operators
(infiniop.torch_ops: torch.ops.infiniop.*), which torch.compile, export and
CUDA graphs see as single operators; everything else (numpy arrays, CUDA
array-interface objects, DLPack, an explicit stream) calls the library
through ctypes (infiniop._capi). torch_ops imports _capi, never this module,
so the two import in one direction only.
"""

from __future__ import annotations

import sys

from . import _capi, _native
from ._capi import (  # noqa: F401  (the ctypes entry points, for tests and tools)
    _c_add_rms_norm,
    _c_causal_softmax,
    _c_causal_softmax_,
    _c_layer_norm,
    _c_sigmoid,
    _c_sigmoid_,
    _c_silu,
    _c_silu_,
    device_count,
)
from ._names import OPERATORS
from ._tensor import is_torch_tensor

__all__ = OPERATORS + [
    "clear_cache",
    "cache_info",
    "device_count",
]


def clear_cache() -> None:
    """Destroy every cached operator descriptor and handle (the ctypes path's
    and the native PyTorch operators' descriptors)."""
    _capi.clear_cache()
    _native.clear_cache()


def cache_info() -> dict:
    """Cached descriptors and handles, and descriptor hits and misses, summed
    over the ctypes path and the native PyTorch operators."""
    info = _capi.cache_info()
    nat = _native.cache_info()
    if nat is not None:
        info["descriptors"] += nat[0]
        info["hits"] += nat[1]
        info["misses"] += nat[2]
    return info


_torch_ops = None  # infiniop.torch_ops once imported


def _torch_route(*objs):
    """infiniop.torch_ops when every non-None obj is a torch.Tensor."""
    global _torch_ops
    tops = _torch_ops
    if tops is None:
        if "torch" not in sys.modules or not is_torch_tensor(objs[0]):
            return None
        from . import torch_ops as tops

        _torch_ops = tops
    T = tops.torch.Tensor
    for o in objs:
        if o is not None and not isinstance(o, T):
            return None
    return tops


def _outs(out, n):
    if out is None:
        return ()
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def add_rms_norm(a, b, weight, eps: float = 1e-6, *, out=None, stream=None):
    tops = _torch_route(a, b, weight, *_outs(out, 2)) if stream is None else None
    if tops is not None:
        return tops.add_rms_norm(a, b, weight, eps, out=out)
    return _c_add_rms_norm(a, b, weight, eps, out=out, stream=stream)


def layer_norm(x, weight, bias=None, eps: float = 1e-5, *, out=None, stream=None):
    tops = _torch_route(x, weight, bias, *_outs(out, 3)) if stream is None else None
    if tops is not None:
        return tops.layer_norm(x, weight, bias, eps, out=out)
    return _c_layer_norm(x, weight, bias, eps, out=out, stream=stream)


def causal_softmax(x, *, out=None, stream=None):
    tops = _torch_route(x, out) if stream is None else None
    if tops is not None:
        return tops.causal_softmax(x, out=out)
    return _c_causal_softmax(x, out=out, stream=stream)


def causal_softmax_(x, *, stream=None):
    tops = _torch_route(x) if stream is None else None
    if tops is not None:
        return tops.causal_softmax_(x)
    return _c_causal_softmax_(x, stream=stream)


def silu(x, *, out=None, stream=None):
    tops = _torch_route(x, out) if stream is None else None
    if tops is not None:
        return tops.silu(x, out=out)
    return _c_silu(x, out=out, stream=stream)


def silu_(x, *, stream=None):
    tops = _torch_route(x) if stream is None else None
    if tops is not None:
        return tops.silu_(x)
    return _c_silu_(x, stream=stream)


def sigmoid(x, *, out=None, stream=None):
    tops = _torch_route(x, out) if stream is None else None
    if tops is not None:
        return tops.sigmoid(x, out=out)
    return _c_sigmoid(x, out=out, stream=stream)


def sigmoid_(x, *, stream=None):
    tops = _torch_route(x) if stream is None else None
    if tops is not None:
        return tops.sigmoid_(x)
    return _c_sigmoid_(x, stream=stream)


for _pub, _c in ((add_rms_norm, _c_add_rms_norm), (layer_norm, _c_layer_norm), (causal_softmax, _c_causal_softmax),
                 (causal_softmax_, _c_causal_softmax_), (silu, _c_silu), (silu_, _c_silu_), (sigmoid, _c_sigmoid),
                 (sigmoid_, _c_sigmoid_)):
    _pub.__doc__ = _c.__doc__
del _pub, _c
