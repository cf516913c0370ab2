"""torch.* random composites: dropout (the element-wise mask nn.functional's dropout forms
share)."""
from __future__ import annotations

from ..errors import EmberValueError
from ..ops.creation import bernoulli_mask
from ..tensor import Tensor

__all__ = ["dropout"]


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:
    """torch.dropout: nn.functional.dropout without inplace.

    PyTorch
    -------
    ``torch.dropout``
    """
    return drop(input, p, train, False)


def drop(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training)."""
    if not 0.0 <= p <= 1.0:
        raise EmberValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    keep = bernoulli_mask(input._data.shape, 1.0 - p, input._dtype, input.device)
    return apply_mask(input, keep, p, inplace)


def apply_mask(input: Tensor, keep: Tensor, p: float, inplace: bool) -> Tensor:
    """input * keep / (1 - p), written into input when inplace."""
    scaled = keep * (1.0 / (1.0 - p)) if p < 1.0 else keep
    if inplace:
        return input.mul_(scaled)
    return input * scaled
