"""Checks shared by several nn families (conv and pooling inputs, loss and distance
arguments)."""
from __future__ import annotations

from ..errors import ShapeError
from ..tensor import Tensor


def _batched(name: str, x: Tensor, ndim: int):
    """(x with a batch dim, whether one was added): torch accepts unbatched inputs."""
    if x.ndim == ndim:
        return x, False
    if x.ndim == ndim - 1:
        return x.unsqueeze(0), True
    raise ShapeError(f"{name}: expected a {ndim - 1}-D (unbatched) or {ndim}-D (batched) "
                     f"input, got shape {tuple(x.shape)}")

