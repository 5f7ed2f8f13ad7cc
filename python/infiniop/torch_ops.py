"""The operators as PyTorch custom operators (torch.library), namespace
``infiniop``:

=====================================================  =====================================
``torch.ops.infiniop.add_rms_norm(a, b, w, eps)``      -> (y, residual_out)
``torch.ops.infiniop.add_rms_norm_out(a, b, w, eps, y, residual_out)``  writes y, residual_out
``torch.ops.infiniop.layer_norm(x, w, bias, eps)``     -> (output, xhat, std); bias may be None
``torch.ops.infiniop.layer_norm_out(x, w, bias, eps, output, xhat, std)``
``torch.ops.infiniop.causal_softmax(x)``               -> y
``torch.ops.infiniop.causal_softmax_(x)``              in place
``torch.ops.infiniop.causal_softmax_out(x, out)``
``torch.ops.infiniop.silu(x)`` / ``silu_`` / ``silu_out``
``torch.ops.infiniop.sigmoid(x)`` / ``sigmoid_`` / ``sigmoid_out``
=====================================================  =====================================

Two implementations, one set of schemas:

* **native** (``NATIVE`` is True): libinfiniop_torch.so, built with the
  package when PyTorch is importable at build time (python/CMakeLists.txt),
  registers the schemas and compiled CPU and CUDA kernels through PyTorch's
  stable C ABI. A call goes from torch's dispatcher straight to the C library,
  with the descriptor cached in C++: no Python per call.
* **Python** (without the binding): ``torch.library.custom_op`` operators
  whose kernels call the library through ctypes (infiniop._capi).

Each has a fake (meta) implementation here, so torch.compile(fullgraph=True),
torch.export and FakeTensor / meta tensors see one operator with known output
shapes and dtypes (outputs are new contiguous tensors), and no graph break.
The fake implementation checks the layout through the library (once per
layout), so a layout the library refuses fails while tracing, with the
library's message. The real implementation runs the C library on the
tensors' device (CPU, or CUDA on PyTorch's current stream, capturable into a
CUDA graph), with any dtype and strides the library accepts and no copy.

Errors: the Python functions below (and infiniop.silu etc.) raise
infiniop.InfiniopError (a RuntimeError). A direct torch.ops call of a native
operator raises RuntimeError with the text "infiniop: INFINI_STATUS_<NAME>
(<code>) from <function>: <message>" (PyTorch turns C++ exceptions into
RuntimeError; ``InfiniopError.from_exception(e)`` parses it). Under
torch.compile a layout error surfaces while tracing as
torch._dynamo.exc.TorchRuntimeError (a RuntimeError) with the same text.

Autograd: the operators have no backward. The Python functions below refuse
an input that requires grad while grad mode is on (RuntimeError, "no
backward"). The Python implementation's operators refuse it too when called
through torch.ops; the native ones, called directly through torch.ops, get
PyTorch's fallback for operators without a derivative (a warning when
backward runs, and no gradient through them): an autograd kernel would put
Python back on every call. Use ``torch.no_grad()`` /
``torch.inference_mode()``, or ``.detach()`` the inputs.

Importing this module (``import infiniop`` does when torch is already
imported, and any first call with a torch tensor does) registers the
operators. The Python functions below (also reached as ``infiniop.silu`` etc.
for torch tensors) add ``out=`` handling on top of the ops.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import _capi, _native
from ._errors import InfiniopError
from ._names import OPERATORS

__all__ = OPERATORS + ["NATIVE"]

NAMESPACE = "infiniop"

# The compiled operators when libinfiniop_torch.so is there (it defines the
# schemas itself); otherwise the Python ones below.
NATIVE = _native.load()

_UNARY = (("causal_softmax", "CausalSoftmax", ("y", "x")), ("silu", "Silu", ("output", "input")),
          ("sigmoid", "Sigmoid", ("y", "x")))


def _empty(x: Tensor, shape=None) -> Tensor:
    return torch.empty(x.shape if shape is None else shape, dtype=x.dtype, device=x.device)


def _check_same(name, ref: Tensor, t: Tensor, what: str):
    torch._check(t.shape == ref.shape, lambda: f"infiniop::{name}: {what} has shape {tuple(t.shape)}, expected {tuple(ref.shape)}")


# ------------------------------------------------------------ fake kernels
# Shapes and dtypes of the outputs, and the library's own layout check.


def _fake_add_rms_norm_out(a, b, weight, eps, y, residual_out):
    _capi.validate("AddRMSNorm", (y, residual_out, a, b, weight), ("y", "residual_out", "a", "b", "weight"), float(eps))


def _fake_add_rms_norm(a, b, weight, eps):
    y, r = _empty(a), _empty(a)
    _fake_add_rms_norm_out(a, b, weight, eps, y, r)
    return y, r


def _fake_layer_norm_out(x, weight, bias, eps, output, input_standardization, input_std_deviation):
    _capi.validate(
        "LayerNorm",
        (output, input_standardization, input_std_deviation, x, weight, bias),
        ("output", "input_standardization", "input_std_deviation", "input", "weight", "bias"),
        float(eps),
    )


def _fake_layer_norm(x, weight, bias, eps):
    torch._check(x.dim() >= 1, lambda: "infiniop::layer_norm: input must have at least one dimension")
    o, xh, sd = _empty(x), _empty(x), _empty(x, x.shape[:-1])
    _fake_layer_norm_out(x, weight, bias, eps, o, xh, sd)
    return o, xh, sd


def _fake_unary(cname, names):
    def out_variant(x, out):
        _capi.validate(cname, (out, x), names)

    def functional(x):
        y = _empty(x)
        out_variant(x, y)
        return y

    def inplace(x):
        out_variant(x, x)

    return functional, inplace, out_variant


_FAKES = {
    "add_rms_norm": _fake_add_rms_norm,
    "add_rms_norm_out": _fake_add_rms_norm_out,
    "layer_norm": _fake_layer_norm,
    "layer_norm_out": _fake_layer_norm_out,
}
for _name, _cname, _names in _UNARY:
    _FAKES[_name], _FAKES[_name + "_"], _FAKES[_name + "_out"] = _fake_unary(_cname, _names)


def _no_grad_error(opname):
    def setup_context(ctx, inputs, output):
        names = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
        raise RuntimeError(
            f"infiniop::{opname} has no backward, but input(s) {names} require grad. Run it under "
            "torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors."
        )

    def backward(ctx, *grads):  # pragma: no cover - setup_context refuses first
        raise RuntimeError(f"infiniop::{opname} has no backward")

    return backward, setup_context


if NATIVE:
    for _name, _fake in _FAKES.items():
        torch.library.register_fake(f"{NAMESPACE}::{_name}")(_fake)
else:
    # ------------------------------------------------ the Python operators

    @torch.library.custom_op(f"{NAMESPACE}::add_rms_norm", mutates_args=())
    def _add_rms_norm(a: Tensor, b: Tensor, weight: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
        y, r = _empty(a), _empty(a)
        _capi._c_add_rms_norm(a, b, weight, eps, out=(y, r))
        return y, r

    @torch.library.custom_op(f"{NAMESPACE}::add_rms_norm_out", mutates_args=("y", "residual_out"))
    def _add_rms_norm_out(a: Tensor, b: Tensor, weight: Tensor, eps: float, y: Tensor, residual_out: Tensor) -> None:
        _capi._c_add_rms_norm(a, b, weight, eps, out=(y, residual_out))

    @torch.library.custom_op(f"{NAMESPACE}::layer_norm", mutates_args=())
    def _layer_norm(x: Tensor, weight: Tensor, bias: Optional[Tensor], eps: float) -> Tuple[Tensor, Tensor, Tensor]:
        o, xh, sd = _empty(x), _empty(x), _empty(x, x.shape[:-1])
        _capi._c_layer_norm(x, weight, bias, eps, out=(o, xh, sd))
        return o, xh, sd

    @torch.library.custom_op(
        f"{NAMESPACE}::layer_norm_out", mutates_args=("output", "input_standardization", "input_std_deviation")
    )
    def _layer_norm_out(
        x: Tensor,
        weight: Tensor,
        bias: Optional[Tensor],
        eps: float,
        output: Tensor,
        input_standardization: Tensor,
        input_std_deviation: Tensor,
    ) -> None:
        _capi._c_layer_norm(x, weight, bias, eps, out=(output, input_standardization, input_std_deviation))

    _PY_OPS = {"add_rms_norm": _add_rms_norm, "add_rms_norm_out": _add_rms_norm_out, "layer_norm": _layer_norm,
               "layer_norm_out": _layer_norm_out}

    def _unary_ops(name, c_fn):
        @torch.library.custom_op(f"{NAMESPACE}::{name}", mutates_args=())
        def functional(x: Tensor) -> Tensor:
            y = _empty(x)
            c_fn(x, out=y)
            return y

        @torch.library.custom_op(f"{NAMESPACE}::{name}_", mutates_args=("x",))
        def inplace(x: Tensor) -> None:
            c_fn(x, out=x)

        @torch.library.custom_op(f"{NAMESPACE}::{name}_out", mutates_args=("out",))
        def out_variant(x: Tensor, out: Tensor) -> None:
            c_fn(x, out=out)

        _PY_OPS[name], _PY_OPS[name + "_"], _PY_OPS[name + "_out"] = functional, inplace, out_variant

    _unary_ops("causal_softmax", _capi._c_causal_softmax)
    _unary_ops("silu", _capi._c_silu)
    _unary_ops("sigmoid", _capi._c_sigmoid)

    for _name, _op in _PY_OPS.items():
        _op.register_fake(_FAKES[_name])
        _b, _s = _no_grad_error(_name)
        if not _name.endswith(("_", "_out")):
            _op.register_autograd(_b, setup_context=_s)
        elif hasattr(_op, "_setup_context_fn"):
            # The mutating forms cannot take an autograd formula; without one a
            # call with an input that requires grad would leave the gradient
            # silently wrong. torch.library calls a custom op's setup_context
            # hook when grad mode is on and an input requires grad: set it (a
            # private attribute of CustomOpDef, so only where it exists) to
            # refuse, after the kernel ran.
            _op._setup_context_fn = _s
    del _op, _b, _s

# ------------------------------------------------------- Python-level API

# The OpOverloads themselves (a call through torch.ops.infiniop.<name> looks
# the overload up each time).
_OP = {
    name: getattr(torch.ops.infiniop, name).default
    for name in ("add_rms_norm", "add_rms_norm_out", "layer_norm", "layer_norm_out")
    + tuple(f"{u}{sfx}" for u in ("causal_softmax", "silu", "sigmoid") for sfx in ("", "_", "_out"))
}


def _requires_grad_error(opname, tensors):
    # Autograd cannot route through these operators (no backward): refuse
    # loudly rather than return a silently detached result.
    if torch.is_grad_enabled():
        for t in tensors:
            if t is not None and t.requires_grad:
                raise RuntimeError(
                    f"infiniop.{opname} has no backward, but an input requires grad. Run it under "
                    "torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors."
                )


def _reraise(e: RuntimeError):
    """A native kernel's RuntimeError as the infiniop.* functions raise it:
    InfiniopError for a refused library call, ValueError for tensors on
    different devices (as the ctypes path); anything else unchanged."""
    err = InfiniopError.from_exception(e)
    if err is not None:
        raise err.with_traceback(e.__traceback__) from None
    text = str(e)
    if text.startswith("infiniop: ") and "must be on one device" in text:
        raise ValueError(text).with_traceback(e.__traceback__) from None
    raise e


def _split(out, n, opname) -> List[Optional[Tensor]]:
    if out is None:
        return [None] * n
    if isinstance(out, (tuple, list)):
        if len(out) != n:
            raise ValueError(f"infiniop: {opname}: out= takes {n} tensors (use None for any to allocate), got {len(out)}")
        return list(out)
    return [out] + [None] * (n - 1)


def add_rms_norm(a: Tensor, b: Tensor, weight: Tensor, eps: float = 1e-6, *, out=None):
    """torch.ops.infiniop.add_rms_norm (out= given: add_rms_norm_out)."""
    try:
        if out is None:
            _requires_grad_error("add_rms_norm", (a, b, weight))
            return _OP["add_rms_norm"](a, b, weight, float(eps))
        y, r = _split(out, 2, "add_rms_norm")
        y = _empty(a) if y is None else y
        r = _empty(a) if r is None else r
        _requires_grad_error("add_rms_norm", (a, b, weight, y, r))
        _OP["add_rms_norm_out"](a, b, weight, float(eps), y, r)
        return y, r
    except InfiniopError:
        raise
    except RuntimeError as e:
        _reraise(e)


def layer_norm(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, eps: float = 1e-5, *, out=None):
    """torch.ops.infiniop.layer_norm (out= given: layer_norm_out)."""
    try:
        if out is None:
            _requires_grad_error("layer_norm", (x, weight, bias))
            return _OP["layer_norm"](x, weight, bias, float(eps))
        o, xh, sd = _split(out, 3, "layer_norm")
        o = _empty(x) if o is None else o
        xh = _empty(x) if xh is None else xh
        sd = _empty(x, x.shape[:-1]) if sd is None else sd
        _requires_grad_error("layer_norm", (x, weight, bias, o, xh, sd))
        _OP["layer_norm_out"](x, weight, bias, float(eps), o, xh, sd)
        return o, xh, sd
    except InfiniopError:
        raise
    except RuntimeError as e:
        _reraise(e)


def _unary(name, x, out):
    try:
        if out is None:
            _requires_grad_error(name, (x,))
            return _OP[name](x)
        _requires_grad_error(name, (x, out))
        if out is x:
            _OP[name + "_"](x)
        else:
            _OP[name + "_out"](x, out)
        return out
    except InfiniopError:
        raise
    except RuntimeError as e:
        _reraise(e)


def _unary_inplace(name, x):
    try:
        _requires_grad_error(name + "_", (x,))
        _OP[name + "_"](x)
        return x
    except InfiniopError:
        raise
    except RuntimeError as e:
        _reraise(e)


def causal_softmax(x: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """torch.ops.infiniop.causal_softmax (out=x: causal_softmax_; out=: causal_softmax_out)."""
    return _unary("causal_softmax", x, out)


def causal_softmax_(x: Tensor) -> Tensor:
    """torch.ops.infiniop.causal_softmax_; returns x."""
    return _unary_inplace("causal_softmax", x)


def silu(x: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """torch.ops.infiniop.silu (out=x: silu_; out=: silu_out)."""
    return _unary("silu", x, out)


def silu_(x: Tensor) -> Tensor:
    """torch.ops.infiniop.silu_; returns x."""
    return _unary_inplace("silu", x)


def sigmoid(x: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """torch.ops.infiniop.sigmoid (out=x: sigmoid_; out=: sigmoid_out)."""
    return _unary("sigmoid", x, out)


def sigmoid_(x: Tensor) -> Tensor:
    """torch.ops.infiniop.sigmoid_; returns x."""
    return _unary_inplace("sigmoid", x)
