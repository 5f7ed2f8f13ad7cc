"""The native PyTorch operators: libinfiniop_torch.so (python/infiniop/csrc/ops.cpp).

Built with the package when PyTorch is importable at build time and shipped
beside libinfiniop (``infiniop/lib/``, or a CMake build tree). Loading it
(``torch.ops.load_library``) defines the ``infiniop`` operator schemas and
their CPU and CUDA kernels, which call the C library directly with
descriptors cached in C++: a call runs no Python.
"""

from __future__ import annotations

import ctypes
import threading
import warnings
from pathlib import Path

from . import _lib as _libmod

NAME = "libinfiniop_torch.so"

_lock = threading.Lock()
_state: dict = {}  # "lib": the ctypes handle once loaded, "path", "why" when absent


def _locate():
    try:
        lib = _libmod.get_lib()
    except _libmod.LibraryNotFoundError as e:
        return None, f"libinfiniop was not found ({str(e).splitlines()[0]})"
    p = Path(lib.origin)
    if not p.is_file():
        return None, f"libinfiniop came from the {lib.origin}; the binding is looked for beside a libinfiniop file"
    cand = p.parent / NAME
    if not cand.is_file():
        return None, f"no {NAME} beside {p} (built without PyTorch at build time)"
    return cand, None


def load() -> bool:
    """Load the binding once (registering torch.ops.infiniop.*); False when absent."""
    with _lock:
        if "loaded" in _state:
            return _state["loaded"]
        path, why = _locate()
        if path is None:
            _state.update(loaded=False, why=why)
            return False
        import torch

        try:
            torch.ops.load_library(str(path))
            cdll = ctypes.CDLL(str(path))
        except (OSError, RuntimeError) as e:
            # A binding that does not load here (a PyTorch older than the
            # stable ABI it was built for, a damaged file): say so and serve
            # torch tensors through the Python operators instead.
            why = f"{path} did not load: {e}"
            warnings.warn(f"infiniop: {why}; torch.ops.infiniop.* fall back to the Python operators", RuntimeWarning)
            _state.update(loaded=False, why=why)
            return False
        cdll.infiniop_torch_cache_info.argtypes = [ctypes.POINTER(ctypes.c_int64)]
        cdll.infiniop_torch_cache_info.restype = None
        cdll.infiniop_torch_clear_cache.argtypes = []
        cdll.infiniop_torch_clear_cache.restype = None
        _state.update(loaded=True, lib=cdll, path=str(path))
        return True


def info() -> dict:
    """Where the binding came from, or why it is not used."""
    return {"native": bool(_state.get("loaded")), "path": _state.get("path"), "why_not": _state.get("why")}


def cache_info():
    """(descriptors, hits, misses) of the binding's cache, or None."""
    lib = _state.get("lib")
    if lib is None:
        return None
    out = (ctypes.c_int64 * 3)()
    lib.infiniop_torch_cache_info(out)
    return tuple(out)


def clear_cache() -> None:
    lib = _state.get("lib")
    if lib is not None:
        lib.infiniop_torch_clear_cache()
