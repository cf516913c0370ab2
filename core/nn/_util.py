"""Argument checks several nn families share (conv and pooling inputs, loss and distance ones)."""
from __future__ import annotations

from .. import dtypes as D
from ..errors import EmberTypeError, ShapeError
from ..tensor import Tensor


def _batched(name: str, x: Tensor, ndim: int):
    """(x with a batch dim, whether one was added): torch accepts unbatched inputs."""
    if x.ndim == ndim:
        return x, False
    if x.ndim == ndim - 1:
        return x.unsqueeze(0), True
    raise ShapeError(f"{name}: expected a {ndim - 1}-D (unbatched) or {ndim}-D (batched) "
                     f"input, got shape {tuple(x.shape)}")


def _need_float(name: str, x: Tensor, what: str = "input") -> None:
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}: expected {what} to be a Tensor, got "
                             f"{type(x).__name__}")
    if x._dtype.category != D.FLOAT:
        raise EmberTypeError(f"{name}: expected a floating point {what}, got "
                             f"{x._dtype.name}; call .float() first")


def _floats(name: str, **tensors: Tensor) -> None:
    for what, x in tensors.items():
        _need_float(name, x, what)


def _tensor(name: str, x, what: str) -> None:
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}: expected {what} to be a Tensor, got {type(x).__name__}")
