"""Checks and conversions the torch.* composites share (tensor arguments, float inputs)."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..errors import (
    DtypeNotSupportedError,
    EmberTypeError,
    ShapeError,
)
from ..tensor import Tensor


def _need_float(name, x):
    """A floating (or complex: the ops torch refuses on complex refuse it themselves)
    input."""
    if x._dtype.category < D.FLOAT:
        raise DtypeNotSupportedError(
            f"{name}(): could not infer output dtype. Input dtype must be floating point, "
            f"got {x._dtype.name}; call .float() first")


def _need(name, x, ndim=None):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")
    if ndim is not None and x.ndim != ndim:
        raise ShapeError(f"{name}(): expected a {ndim}-D tensor, got shape {tuple(x.shape)}")


def _float(x: Tensor) -> Tensor:
    return x if x._dtype.category >= D.FLOAT else x.to(D.get_default_dtype())


_INTS = (D.uint8, D.int8, D.int16, D.int32, D.int64)


def _tensor(name, x, like=None):
    if type(x) is Tensor:
        return x
    if isinstance(x, (int, float, bool, complex)) and like is not None:
        return ops.full((), x, dtype=D.result_type(like, x) if type(x) is complex else
                        like._dtype if like._dtype.category >= D.FLOAT
                        else D.get_default_dtype(), device=like._device)
    raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")


def _need_tensors(name, input, other=None, *, both: bool = True):
    """torch's rule for the binary functions without a number overload: `input` (and, with
    `both`, `other`) must be tensors; a Python number there is refused, as torch refuses it
    (torch.maximum(t, 2), torch.eq(2, t))."""
    for what, x in (("input", input), ("other", other) if both else ("input", input)):
        if type(x) is not Tensor:
            raise EmberTypeError(f"{name}(): argument '{what}' must be a Tensor, not "
                                 f"{type(x).__name__}; wrap the number with ember.tensor(...)")
