"""Finding and loading libinfinirt.so / libinfiniop.so, and their C signatures.

Discovery order (the first that exists wins):

1. a path given to :func:`load_library` (a directory or the libinfiniop file);
2. the environment variable ``INFINIOP_LIBRARY_PATH`` (same forms);
3. the package's own ``infiniop/lib`` directory (wheels that bundle the
   libraries);
4. the ``build/`` directory of a source checkout (``python/../build``), for
   running straight from the repository;
5. the system loader (``ldconfig`` cache, ``LD_LIBRARY_PATH``).

``libinfinirt`` is always loaded first, from the same directory as
``libinfiniop``, so that both share one runtime (libinfiniop's dependency on
it resolves to the copy already loaded, by its soname). Both are opened
``RTLD_LOCAL`` (see ``_mode``).
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import POINTER, c_char_p, c_float, c_int, c_size_t, c_ssize_t, c_void_p
from pathlib import Path

ENV_VAR = "INFINIOP_LIBRARY_PATH"

_PKG_DIR = Path(__file__).resolve().parent
_PKG_LIB_DIR = _PKG_DIR / "lib"
# python/infiniop/_lib.py -> python/ -> repository root -> build/
_REPO_BUILD_DIR = _PKG_DIR.parent.parent / "build"

_OP_NAMES = ("libinfiniop.so", "libinfiniop.so.0", "libinfiniop.dylib", "infiniop.dll")
_RT_NAMES = ("libinfinirt.so", "libinfinirt.so.0", "libinfinirt.dylib", "infinirt.dll")
# Sub-directories of a candidate directory that may hold the libraries
# (a CMake build tree puts them at its top; an install prefix under lib/).
_SUBDIRS = ("", "lib", "lib64", "src")


class LibraryNotFoundError(OSError):
    """The shared libraries could not be found or loaded."""


class _Lib:
    """The two loaded libraries, with their C signatures declared."""

    def __init__(self, rt: ctypes.CDLL, op: ctypes.CDLL, origin: str):
        self.rt = rt
        self.op = op
        self.origin = origin  # where they came from, for messages
        _declare(rt, op)


_lock = threading.RLock()
_lib: _Lib | None = None


def _find_in_dir(d: Path):
    """(infiniop path, infinirt path) inside directory d, or None."""
    for sub in _SUBDIRS:
        base = d / sub if sub else d
        for name in _OP_NAMES:
            p = base / name
            if p.is_file():
                rt = None
                for rname in _RT_NAMES:
                    rp = base / rname
                    if rp.is_file():
                        rt = rp
                        break
                return p, rt
    return None


def _mode() -> int:
    """RTLD_LOCAL: the libraries' symbols stay out of the process's global
    scope. A build that links the C++ runtime statically exports it (seen on
    the GPU machine: ~4,200 libstdc++ symbols, __cxa_throw, operator new,
    typeinfos); made global with RTLD_GLOBAL it interposed on every C++
    extension bound later, and torch.compile's Triton compiler failed with
    "SystemError: ... returned NULL without setting an exception"."""
    return getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 0)


def _open(op_path, rt_path) -> tuple[ctypes.CDLL, ctypes.CDLL]:
    mode = _mode()
    if rt_path is None:
        raise OSError(f"libinfinirt was not found beside {op_path}")
    rt = ctypes.CDLL(str(rt_path), mode=mode)
    op = ctypes.CDLL(str(op_path), mode=mode)
    return rt, op


def _resolve_explicit(path) -> tuple:
    p = Path(os.fspath(path)).expanduser()
    if p.is_dir():
        found = _find_in_dir(p)
        if found is None:
            raise OSError(f"no libinfiniop shared library in directory {p}")
        return found
    if p.is_file():
        for rname in _RT_NAMES:
            rp = p.parent / rname
            if rp.is_file():
                return p, rp
        return p, None
    raise OSError(f"{p} does not exist")


def _not_found_message(tried: list[str]) -> str:
    lines = ["infiniop: could not load the shared libraries libinfiniop.so and libinfinirt.so."]
    lines.append("Tried, in order:")
    lines.extend(f"  - {t}" for t in tried)
    lines.append("To fix it, build the C library and point the package at it:")
    lines.append("    cmake -B build -S . && cmake --build build -j")
    lines.append(f"    export {ENV_VAR}=$PWD/build      # the directory, or the libinfiniop.so file")
    lines.append("or call infiniop.load_library('/path/to/build') before the first operator, or")
    lines.append("install the libraries (cmake --install build) where the system loader finds them.")
    return "\n".join(lines)


def load_library(path=None) -> _Lib:
    """Load (or reload) the C libraries.

    ``path`` may be a directory holding ``libinfiniop.so`` and
    ``libinfinirt.so`` (a CMake build directory or an install prefix), or
    the ``libinfiniop.so`` file itself. Without a path the discovery order of
    this module is followed. Returns the loaded library object; raises
    :class:`LibraryNotFoundError` saying what was tried and how to fix it.
    """
    global _lib
    with _lock:
        tried: list[str] = []
        if path is not None:
            try:
                op_p, rt_p = _resolve_explicit(path)
                rt, op = _open(op_p, rt_p)
            except OSError as e:
                tried.append(f"load_library({str(path)!r}): {e}")
                raise LibraryNotFoundError(_not_found_message(tried)) from None
            _reset_caches()
            _lib = _Lib(rt, op, str(op_p))
            return _lib

        env = os.environ.get(ENV_VAR)
        if env:
            try:
                op_p, rt_p = _resolve_explicit(env)
                rt, op = _open(op_p, rt_p)
                _lib = _Lib(rt, op, str(op_p))
                return _lib
            except OSError as e:
                # An explicit setting that does not work is an error, not a
                # reason to silently pick another copy.
                tried.append(f"${ENV_VAR}={env}: {e}")
                raise LibraryNotFoundError(_not_found_message(tried)) from None
        else:
            tried.append(f"${ENV_VAR}: not set")

        for label, d in (("package directory", _PKG_LIB_DIR), ("source checkout build directory", _REPO_BUILD_DIR)):
            found = _find_in_dir(d) if d.is_dir() else None
            if found is None:
                tried.append(f"{label} {d}: no libinfiniop there")
                continue
            try:
                rt, op = _open(*found)
            except OSError as e:
                tried.append(f"{label} {d}: {e}")
                continue
            _lib = _Lib(rt, op, str(found[0]))
            return _lib

        # The system loader: ldconfig cache, LD_LIBRARY_PATH, rpath.
        errors = []
        for rname, oname in (("libinfinirt.so", "libinfiniop.so"), ("libinfinirt.so.0", "libinfiniop.so.0")):
            try:
                mode = _mode()
                rt = ctypes.CDLL(rname, mode=mode)
                op = ctypes.CDLL(oname, mode=mode)
            except OSError as e:
                errors.append(str(e))
                continue
            _lib = _Lib(rt, op, f"system loader ({oname})")
            return _lib
        tried.append("system loader (ldconfig, LD_LIBRARY_PATH): " + "; ".join(errors))
        raise LibraryNotFoundError(_not_found_message(tried))


def get_lib() -> _Lib:
    lib = _lib
    if lib is None:
        lib = load_library()
    return lib


def library_path() -> str:
    """Where the loaded libinfiniop came from (loading it if needed)."""
    return get_lib().origin


def _query(name: str) -> str:
    lib = get_lib()
    f = getattr(lib.op, name, None)
    if f is None:
        raise NotImplementedError(f"infiniop: the loaded library ({lib.origin}) has no {name}; rebuild it")
    return f().decode()


def library_version() -> str:
    return _query("infiniopGetVersion")


def cpu_isa() -> str:
    return _query("infiniopGetCpuIsa")


_reset_hooks: list = []


def _reset_caches():
    for hook in _reset_hooks:
        hook()


def _declare(rt: ctypes.CDLL, op: ctypes.CDLL) -> None:
    st = c_int  # infiniStatus_t
    P = POINTER
    vp = c_void_p

    def sig(lib, name, res, *args):
        try:
            f = getattr(lib, name)
        except AttributeError:
            # A partial build: the operator raises a clear error when used.
            return
        f.restype = res
        f.argtypes = list(args)

    # runtime
    sig(rt, "infinirtInit", st)
    sig(rt, "infinirtGetDeviceCount", st, c_int, P(c_int))
    sig(rt, "infinirtSetDevice", st, c_int, c_int)
    sig(rt, "infinirtGetDevice", st, P(c_int), P(c_int))
    sig(rt, "infinirtDeviceSynchronize", st)

    # core
    sig(op, "infiniopGetVersion", c_char_p)
    sig(op, "infiniopGetCpuIsa", c_char_p)
    sig(op, "infiniopGetLastErrorMessage", c_char_p)
    sig(op, "infiniopGetStatusString", c_char_p, c_int)
    sig(op, "infiniopCreateHandle", st, P(vp))
    sig(op, "infiniopDestroyHandle", st, vp)
    sig(op, "infiniopCreateTensorDescriptor", st, P(vp), c_size_t, P(c_size_t), P(c_ssize_t), c_int)
    sig(op, "infiniopDestroyTensorDescriptor", st, vp)
    sig(op, "infiniopGetDescriptorDeviceType", st, vp, P(c_int))
    sig(op, "infiniopGetDescriptorDeviceId", st, vp, P(c_int))

    # operators
    sig(op, "infiniopCreateAddRMSNormDescriptor", st, vp, P(vp), vp, vp, vp, vp, vp, c_float)
    sig(op, "infiniopGetAddRMSNormWorkspaceSize", st, vp, P(c_size_t))
    sig(op, "infiniopAddRMSNorm", st, vp, vp, c_size_t, vp, vp, vp, vp, vp, vp)
    sig(op, "infiniopDestroyAddRMSNormDescriptor", st, vp)

    sig(op, "infiniopCreateCausalSoftmaxDescriptor", st, vp, P(vp), vp, vp)
    sig(op, "infiniopGetCausalSoftmaxWorkspaceSize", st, vp, P(c_size_t))
    sig(op, "infiniopCausalSoftmax", st, vp, vp, c_size_t, vp, vp, vp)
    sig(op, "infiniopDestroyCausalSoftmaxDescriptor", st, vp)

    sig(op, "infiniopCreateLayerNormDescriptor", st, vp, P(vp), vp, vp, vp, vp, vp, vp, c_float)
    sig(op, "infiniopGetLayerNormWorkspaceSize", st, vp, P(c_size_t))
    sig(op, "infiniopLayerNorm", st, vp, vp, c_size_t, vp, vp, vp, vp, vp, vp, vp)
    sig(op, "infiniopDestroyLayerNormDescriptor", st, vp)

    for name in ("Silu", "Sigmoid"):
        sig(op, f"infiniopCreate{name}Descriptor", st, vp, P(vp), vp, vp)
        sig(op, f"infiniopGet{name}WorkspaceSize", st, vp, P(c_size_t))
        sig(op, f"infiniop{name}", st, vp, vp, c_size_t, vp, vp, vp)
        sig(op, f"infiniopDestroy{name}Descriptor", st, vp)
