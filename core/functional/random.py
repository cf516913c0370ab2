"""torch.* random composites: dropout."""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["dropout"]


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:
    from ..nn.functional import dropout as _dropout
    return _dropout(input, p, train)
