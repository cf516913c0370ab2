"""torch.* activations and softmax: leaky_relu, gelu, silu, softplus, softmax, log_softmax
(relu is a declared op: ops.elementwise)."""
from __future__ import annotations

import math

from .. import amp_policy, dispatch, ops
from ..amp_policy import active as _amp
from ..errors import EmberValueError, ShapeError
from ..ops._util import norm_dim
from ..ops.nn import log_softmax_op, softmax_op
from ..signatures import numpy_names
from ..tensor import Tensor
from ._util import _need_float

__all__ = ["softmax", "log_softmax", "leaky_relu", "gelu", "silu", "hardshrink", "prelu"]


@numpy_names
def softmax(input: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably (the maximum is subtracted
    first); ``dtype=`` converts ``input`` first.

    Examples
    --------
    >>> import ember
    >>> ember.softmax(ember.zeros(4), dim=0).tolist()
    [0.25, 0.25, 0.25, 0.25]

    PyTorch
    -------
    ``torch.softmax``, ``torch.nn.functional.softmax``
    """
    if _amp and amp_policy.on("softmax"):      # autocast (amp_policy.py)
        return amp_policy.call("softmax", softmax, input, dim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    _need_float("softmax", input)
    # a 0-d tensor takes dim 0 or -1, as in PyTorch: its softmax is 1
    axis = norm_dim(dim, input.ndim, "softmax")
    if 0 in input._data.shape:                  # nothing to normalise: an empty answer
        return input * 1.0
    return dispatch.run(softmax_op, input, axis=axis)


@numpy_names
def log_softmax(input: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably.

    PyTorch
    -------
    ``torch.log_softmax``, ``torch.nn.functional.log_softmax``
    """
    if _amp and amp_policy.on("log_softmax"):      # autocast (amp_policy.py)
        return amp_policy.call("log_softmax", log_softmax, input, dim, dtype)
    if dtype is not None:
        input = input.to(dtype)
    _need_float("log_softmax", input)
    axis = norm_dim(dim, input.ndim, "log_softmax")
    if 0 in input._data.shape:                  # nothing to normalise: an empty answer
        return input * 1.0
    return dispatch.run(log_softmax_op, input, axis=axis)


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``, elementwise.

    PyTorch
    -------
    ``torch.nn.functional.leaky_relu``
    """
    return ops.where(x > 0, x, x * negative_slope)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """The Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh
    approximation.

    PyTorch
    -------
    ``torch.nn.functional.gelu``
    """
    if approximate == "tanh":
        inner = (input + input * input * input * 0.044715) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (ops.tanh(inner) + 1.0)
    if approximate != "none":
        raise EmberValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return input * 0.5 * (ops.erf(input * (1.0 / math.sqrt(2.0))) + 1.0)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)`` elementwise (also called swish).

    PyTorch
    -------
    ``torch.nn.functional.silu``
    """
    return x * ops.sigmoid(x)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    PyTorch
    -------
    ``torch.nn.functional.softplus``
    """
    if _amp and amp_policy.on("softplus"):      # autocast (amp_policy.py)
        return amp_policy.call("softplus", softplus, input, beta, threshold)
    bx = input * beta
    return ops.where(bx > threshold, input, ops.log1p(ops.exp(ops.minimum(bx, threshold))) / beta)

def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, 0 elsewhere.

    PyTorch
    -------
    ``torch.nn.functional.hardshrink``
    """
    return ops.where(ops.abs(input) > lambd, input, 0.0)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x for x >= 0, weight * x otherwise; a weight of n > 1 values scales channel dim 1.

    PyTorch
    -------
    ``torch.nn.functional.prelu``
    """
    if _amp and amp_policy.on("prelu"):      # autocast (amp_policy.py)
        return amp_policy.call("prelu", prelu, input, weight)
    if weight.ndim > 1:
        raise ShapeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                         f"ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        if input.ndim < 2 or input._data.shape[1] != n:
            raise ShapeError(f"prelu: weight has {n} values, so the input needs {n} channels "
                             f"in dim 1; got shape {tuple(input.shape)}")
        weight = weight.reshape((n,) + (1,) * (input.ndim - 2))
    elif weight.ndim:
        weight = weight.reshape(())
    return ops.where(input >= 0, input, input * weight)
