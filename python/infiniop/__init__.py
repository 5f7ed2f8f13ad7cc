"""infiniop: transformer operators (add_rms_norm, causal_softmax, layer_norm,
silu, sigmoid) of the infiniop-c library, for numpy arrays and PyTorch
tensors on the CPU or NVIDIA GPUs.

Pure Python over the library's C ABI (ctypes). The shared libraries are
found on first use; see :func:`load_library` for where they are looked for.
"""

from ._errors import Device, DType, InfiniopError, Status
from ._lib import ENV_VAR, LibraryNotFoundError, library_path, load_library
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

__version__ = "0.1.0"

__all__ = [
    "add_rms_norm",
    "layer_norm",
    "causal_softmax",
    "causal_softmax_",
    "silu",
    "silu_",
    "sigmoid",
    "sigmoid_",
    "InfiniopError",
    "LibraryNotFoundError",
    "Status",
    "Device",
    "DType",
    "load_library",
    "library_path",
    "clear_cache",
    "cache_info",
    "device_count",
    "ENV_VAR",
]
