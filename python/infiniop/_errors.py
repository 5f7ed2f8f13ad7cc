"""Status codes, device kinds, dtypes, and the exception raised for failures."""

from __future__ import annotations

import enum
import re


class Status(enum.IntEnum):
    SUCCESS = 0
    INTERNAL_ERROR = 1
    NOT_IMPLEMENTED = 2
    BAD_PARAM = 3
    NULL_POINTER = 4
    DEVICE_TYPE_NOT_SUPPORTED = 5
    DEVICE_NOT_FOUND = 6
    DEVICE_NOT_INITIALIZED = 7
    DEVICE_ARCHITECTURE_NOT_SUPPORTED = 8
    BAD_TENSOR_DTYPE = 10
    BAD_TENSOR_SHAPE = 11
    BAD_TENSOR_STRIDES = 12
    INSUFFICIENT_WORKSPACE = 13


class Device(enum.IntEnum):
    CPU = 0
    NVIDIA = 1
    CAMBRICON = 2
    ASCEND = 3
    METAX = 4
    MOORE = 5
    ILUVATAR = 6
    KUNLUN = 7
    HYGON = 8
    QY = 9
    ALI = 10


class DType(enum.IntEnum):
    INVALID = 0
    BYTE = 1
    BOOL = 2
    I8 = 3
    I16 = 4
    I32 = 5
    I64 = 6
    U8 = 7
    U16 = 8
    U32 = 9
    U64 = 10
    F8 = 11
    F16 = 12
    F32 = 13
    F64 = 14
    C16 = 15
    C32 = 16
    C64 = 17
    C128 = 18
    BF16 = 19


# "infiniop: INFINI_STATUS_<NAME> (<code>) from <function>: <message>": the
# text of every error from a library call, raised by the ctypes path and by
# the native PyTorch kernels (python/infiniop/csrc/ops.cpp) alike.
_TEXT = re.compile(r"infiniop: (INFINI_STATUS_[A-Z_]+) \((-?\d+)\)(?: from ([^\s:]+))?(?:: ([^\n]*))?")


class InfiniopError(RuntimeError):
    """A library call returned a status other than INFINI_STATUS_SUCCESS.

    A RuntimeError, as PyTorch raises for errors of its compiled operators:
    ``except RuntimeError`` catches a failing library call on every path
    (see python/README.md, Errors).

    Attributes:
        status: the integer status code (see :class:`Status`).
        status_name: the library's name for it, e.g.
            ``"INFINI_STATUS_BAD_TENSOR_SHAPE"``.
        message: the library's message for the calling thread
            (``infiniopGetLastErrorMessage()``), naming the tensor and
            dimension at fault.
        function: the C function that failed.
    """

    def __init__(self, status: int, status_name: str, message: str, function: str = ""):
        self.status = int(status)
        self.status_name = status_name
        self.message = message
        self.function = function
        text = f"infiniop: {status_name} ({self.status})"
        if function:
            text += f" from {function}"
        if message:
            text += f": {message}"
        super().__init__(text)

    def __reduce__(self):
        return (type(self), (self.status, self.status_name, self.message, self.function))

    @classmethod
    def from_exception(cls, exc: BaseException):
        """The InfiniopError an exception carries: exc itself, or one parsed
        from the text of a RuntimeError raised by a native operator
        (``torch.ops.infiniop.*`` called directly) or by torch.compile while
        tracing (torch._dynamo.exc.TorchRuntimeError); None for other errors."""
        if isinstance(exc, cls):
            return exc
        m = _TEXT.search(str(exc))
        if m is None:
            return None
        return cls(int(m.group(2)), m.group(1), m.group(4) or "", m.group(3) or "")


def _decode(b) -> str:
    if b is None:
        return ""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b)


def raise_for_status(lib, status: int, function: str) -> None:
    """Raise InfiniopError for a non-zero status of ``function``."""
    if status == 0:
        return
    op = lib.op
    try:
        name = _decode(op.infiniopGetStatusString(status))
    except Exception:  # pragma: no cover - a library without the extension
        name = ""
    if not name:
        try:
            name = "INFINI_STATUS_" + Status(status).name
        except ValueError:
            name = "INFINI_STATUS_UNKNOWN"
    try:
        message = _decode(op.infiniopGetLastErrorMessage())
    except Exception:  # pragma: no cover
        message = ""
    raise InfiniopError(status, name, message, function)
