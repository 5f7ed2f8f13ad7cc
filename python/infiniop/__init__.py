"""infiniop: transformer operators (add_rms_norm, causal_softmax, layer_norm,
silu, sigmoid) of the infiniop-c library, for numpy arrays and PyTorch
tensors on the CPU or NVIDIA GPUs.

numpy arrays and the rest go through the library's C ABI with ctypes; torch
tensors through ``torch.ops.infiniop.*``, native operators of the bundled
PyTorch binding (libinfiniop_torch, see infiniop.torch_ops). The shared
libraries are found on first use; see :func:`load_library` for where they
are looked for.
"""

from ._errors import Device, DType, InfiniopError, Status
import sys as _sys

from ._lib import ENV_VAR, LibraryNotFoundError, library_path, load_library
from ._lib import cpu_isa as _lib_cpu_isa, library_version as _lib_version
from . import _ops
from ._ops import (
    add_rms_norm,
    cache_info,
    causal_softmax,
    causal_softmax_,
    clear_cache,
    device_count,
    layer_norm,
    sigmoid,
    sigmoid_,
    silu,
    silu_,
)

__version__ = "0.1.0"  # the C library's infiniopGetVersion(): library_version()


def library_version() -> str:
    """Version of the loaded C library (``infiniopGetVersion()``), e.g. "0.1.0"."""
    return _lib_version()


def cpu_isa() -> str:
    """Instruction set the library's CPU kernels run with (``infiniopGetCpuIsa()``):
    "avx512bf16", "avx512", "avx2" or "generic". The environment variable
    INFINIOP_CPU_ISA (generic|avx2|avx512|avx512bf16), read when the library
    first chooses, caps it."""
    return _lib_cpu_isa()


# PyTorch already imported: register torch.ops.infiniop.* now (otherwise the
# first call with a torch tensor does, or `import infiniop.torch_ops`).
if "torch" in _sys.modules:
    from . import torch_ops  # noqa: F401

# the operators and cache helpers (_ops.__all__), then the rest of the API
__all__ = _ops.__all__ + [
    "InfiniopError",
    "LibraryNotFoundError",
    "Status",
    "Device",
    "DType",
    "load_library",
    "library_path",
    "ENV_VAR",
    "library_version",
    "cpu_isa",
]
