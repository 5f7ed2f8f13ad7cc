"""infiniop: transformer operators (add_rms_norm, causal_softmax, layer_norm,
silu, sigmoid) of the infiniop-c library, for numpy arrays and PyTorch
tensors on the CPU or NVIDIA GPUs.

Pure Python over the library's C ABI (ctypes). The shared libraries are
found on first use; see :func:`load_library` for where they are looked for.
"""

from ._errors import Device, DType, InfiniopError, Status
from ._lib import ENV_VAR, LibraryNotFoundError, library_path, load_library
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

__version__ = "0.1.0"

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
]
