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

Each has a fake (meta) implementation, so torch.compile(fullgraph=True),
torch.export and FakeTensor / meta tensors see one operator with known output
shapes and dtypes (outputs are new contiguous tensors), and no graph break.
The real implementation runs the C library on the tensors' device (CPU, or
CUDA on PyTorch's current stream, capturable into a CUDA graph), with any
dtype and strides the library accepts and no copy. Operator descriptors are
cached per (shape, strides, dtype, device, eps): after the first call of a
layout a call creates none (``infiniop.cache_info()``).

Autograd: the operators have no backward. Calling one with an input that
requires grad while grad mode is on raises RuntimeError (instead of returning
a silently detached result): the functional operators and the Python
functions below before running, the mutating operators called directly
through torch.ops after their kernel ran. Use ``torch.no_grad()`` /
``torch.inference_mode()``, or ``.detach()`` the inputs.

Importing this module (``import infiniop`` does when torch is already
imported, and any first call with a torch tensor does) registers the
operators. The Python functions below (also reached as ``infiniop.silu`` etc.
for torch tensors) add ``out=`` handling on top of the ops.
"""

from __future__ import annotations

import sys
from typing import List, Optional, Tuple

import torch
from torch import Tensor

from . import _ops

__all__ = [
    "add_rms_norm",
    "layer_norm",
    "causal_softmax",
    "causal_softmax_",
    "silu",
    "silu_",
    "sigmoid",
    "sigmoid_",
]

NAMESPACE = "infiniop"


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


def _empty(x: Tensor, shape=None) -> Tensor:
    return torch.empty(x.shape if shape is None else shape, dtype=x.dtype, device=x.device)


def _check_same(name, ref: Tensor, t: Tensor, what: str):
    torch._check(t.shape == ref.shape, lambda: f"infiniop::{name}: {what} has shape {tuple(t.shape)}, expected {tuple(ref.shape)}")


# ------------------------------------------------------------- add_rms_norm


@torch.library.custom_op(f"{NAMESPACE}::add_rms_norm", mutates_args=())
def _add_rms_norm(a: Tensor, b: Tensor, weight: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    y, r = _empty(a), _empty(a)
    _ops._c_add_rms_norm(a, b, weight, eps, out=(y, r))
    return y, r


@_add_rms_norm.register_fake
def _(a, b, weight, eps):
    _check_same("add_rms_norm", a, b, "b")
    return _empty(a), _empty(a)


@torch.library.custom_op(f"{NAMESPACE}::add_rms_norm_out", mutates_args=("y", "residual_out"))
def _add_rms_norm_out(a: Tensor, b: Tensor, weight: Tensor, eps: float, y: Tensor, residual_out: Tensor) -> None:
    _ops._c_add_rms_norm(a, b, weight, eps, out=(y, residual_out))


@_add_rms_norm_out.register_fake
def _(a, b, weight, eps, y, residual_out):
    _check_same("add_rms_norm_out", a, y, "y")
    _check_same("add_rms_norm_out", a, residual_out, "residual_out")


# --------------------------------------------------------------- layer_norm


@torch.library.custom_op(f"{NAMESPACE}::layer_norm", mutates_args=())
def _layer_norm(x: Tensor, weight: Tensor, bias: Optional[Tensor], eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    o, xh, sd = _empty(x), _empty(x), _empty(x, x.shape[:-1])
    _ops._c_layer_norm(x, weight, bias, eps, out=(o, xh, sd))
    return o, xh, sd


@_layer_norm.register_fake
def _(x, weight, bias, eps):
    torch._check(x.dim() >= 1, lambda: "infiniop::layer_norm: input must have at least one dimension")
    return _empty(x), _empty(x), _empty(x, x.shape[:-1])


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
    _ops._c_layer_norm(x, weight, bias, eps, out=(output, input_standardization, input_std_deviation))


@_layer_norm_out.register_fake
def _(x, weight, bias, eps, output, input_standardization, input_std_deviation):
    _check_same("layer_norm_out", x, output, "output")


# ------------------------------------------------------------ unary operators


def _unary_ops(name, c_fn):
    @torch.library.custom_op(f"{NAMESPACE}::{name}", mutates_args=())
    def functional(x: Tensor) -> Tensor:
        y = _empty(x)
        c_fn(x, out=y)
        return y

    @functional.register_fake
    def _(x):
        return _empty(x)

    @torch.library.custom_op(f"{NAMESPACE}::{name}_", mutates_args=("x",))
    def inplace(x: Tensor) -> None:
        c_fn(x, out=x)

    @inplace.register_fake
    def _(x):
        return None

    @torch.library.custom_op(f"{NAMESPACE}::{name}_out", mutates_args=("out",))
    def out_variant(x: Tensor, out: Tensor) -> None:
        c_fn(x, out=out)

    @out_variant.register_fake
    def _(x, out):
        return None

    return functional, inplace, out_variant


_causal_softmax, _causal_softmax_, _causal_softmax_out = _unary_ops("causal_softmax", _ops._c_causal_softmax)
_silu, _silu_, _silu_out = _unary_ops("silu", _ops._c_silu)
_sigmoid, _sigmoid_, _sigmoid_out = _unary_ops("sigmoid", _ops._c_sigmoid)

# (torch.library takes autograd formulas for the functional operators only;
# the Python functions below check the in-place and out= forms.)
for _op in (_add_rms_norm, _layer_norm, _causal_softmax, _silu, _sigmoid):
    _b, _s = _no_grad_error(_op._name.split("::")[-1])
    _op.register_autograd(_b, setup_context=_s)
# The mutating forms (in-place, out=) cannot take an autograd formula; without
# one a call with an input that requires grad would leave the gradient
# silently wrong. torch.library calls a custom op's setup_context hook when
# grad mode is on and an input requires grad: set it (a private attribute of
# CustomOpDef, so only where it exists) to refuse. The Python functions below
# refuse before the call; a direct torch.ops call raises after the kernel ran.
for _op in (_add_rms_norm_out, _layer_norm_out, _causal_softmax_, _causal_softmax_out, _silu_, _silu_out, _sigmoid_,
            _sigmoid_out):
    if hasattr(_op, "_setup_context_fn"):
        _op._setup_context_fn = _no_grad_error(_op._name.split("::")[-1])[1]
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
    # The in-place and out= forms mutate their arguments, which autograd
    # cannot route through a custom operator without a backward; refuse as
    # loudly as the functional forms do.
    if torch.is_grad_enabled():
        for t in tensors:
            if t is not None and t.requires_grad:
                raise RuntimeError(
                    f"infiniop.{opname} has no backward, but an input requires grad. Run it under "
                    "torch.no_grad() or torch.inference_mode(), or pass .detach()ed tensors."
                )


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
    if out is None:
        return _OP["add_rms_norm"](a, b, weight, float(eps))
    y, r = _split(out, 2, "add_rms_norm")
    y = _empty(a) if y is None else y
    r = _empty(a) if r is None else r
    _requires_grad_error("add_rms_norm", (a, b, weight, y, r))
    _OP["add_rms_norm_out"](a, b, weight, float(eps), y, r)
    return y, r


def layer_norm(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, eps: float = 1e-5, *, out=None):
    """torch.ops.infiniop.layer_norm (out= given: layer_norm_out)."""
    if out is None:
        return _OP["layer_norm"](x, weight, bias, float(eps))
    o, xh, sd = _split(out, 3, "layer_norm")
    o = _empty(x) if o is None else o
    xh = _empty(x) if xh is None else xh
    sd = _empty(x, x.shape[:-1]) if sd is None else sd
    _requires_grad_error("layer_norm", (x, weight, bias, o, xh, sd))
    _OP["layer_norm_out"](x, weight, bias, float(eps), o, xh, sd)
    return o, xh, sd


def _unary(name, x, out):
    if out is None:
        return _OP[name](x)
    _requires_grad_error(name, (x, out))
    if out is x:
        _OP[name + "_"](x)
    else:
        _OP[name + "_out"](x, out)
    return out


def _unary_inplace(name, x):
    _requires_grad_error(name + "_", (x,))
    _OP[name + "_"](x)
    return x


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


_ops._torch_ops = sys.modules[__name__]
