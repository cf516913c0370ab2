"""Dropout layers and their functional forms (torch.nn.modules.dropout).

Dropout, Dropout1d/2d/3d and dropout, dropout1d/2d/3d; ember's seeded host stream draws
the masks."""
from __future__ import annotations

import math
import warnings

from .. import ops
from ..errors import EmberValueError, EmberWarning, ShapeError
from ..functional.random import apply_mask, drop
from ..ops.creation import bernoulli_mask
from ..tensor import Tensor
from .module import Module

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


# -- functional forms ---------------------------------------------------------------------


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training).

    PyTorch
    -------
    ``torch.nn.functional.dropout``
    """
    return drop(input, p, training, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) (or unbatched (C, L)) with probability p.

    PyTorch
    -------
    ``torch.nn.functional.dropout1d``
    """
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                         "input. Note that dropout1d exists to provide channel-wise dropout on "
                         "inputs with 1 spatial dimension, a channel dimension, and an "
                         "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout("dropout1d", input, p, training, inplace, input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability p.

    As in PyTorch, a 3-D input is taken as (N, C, L) (1-D channel dropout, not as an
    unbatched image) and a 2-D one as (N, C) (plain dropout), each with an EmberWarning.

    PyTorch
    -------
    ``torch.nn.functional.dropout2d``
    """
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim (as PyTorch does). To "
                      "silence this warning, use dropout1d for (N, C, L) inputs.",
                      EmberWarning, stacklevel=2)
    elif input.ndim != 4:
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d; as PyTorch "
                      "does, each of its first two dims is treated as batch and channel. "
                      "dropout2d is meant for (N, C, H, W) or (C, H, W) inputs; use dropout "
                      "for element-wise dropout and to silence this warning.",
                      EmberWarning, stacklevel=2)
    return _channel_dropout("dropout2d", input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) (or unbatched (C, D, H, W)) with
    probability p.

    PyTorch
    -------
    ``torch.nn.functional.dropout3d``
    """
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d; as PyTorch "
                      "does, it is treated as unbatched with channels in dim 0. dropout3d is "
                      "meant for (N, C, D, H, W) or (C, D, H, W) inputs; use dropout for "
                      "element-wise dropout and to silence this warning.",
                      EmberWarning, stacklevel=2)
    return _channel_dropout("dropout3d", input, p, training, inplace, input.ndim == 5)


def _channel_dropout(name, input, p, training, inplace, batched):
    """One mask draw per (sample, channel), broadcast over the remaining dims."""
    if not 0.0 <= p <= 1.0:
        raise EmberValueError(f"{name}: dropout probability has to be between 0 and 1, but "
                              f"got {p}")
    lead = 2 if batched else 1
    if input.ndim < lead:
        raise ShapeError(f"{name}: feature dropout requires at least {lead} dimensions in the "
                         f"input, got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    shape = input._data.shape
    keep = bernoulli_mask(shape[:lead] + (1,) * (len(shape) - lead), 1.0 - p, input._dtype,
                          input.device)
    return apply_mask(input, keep, p, inplace)


# -- modules ------------------------------------------------------------------------------


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise EmberValueError(f"{type(self).__name__}: dropout probability has to be "
                                  f"between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability p during training, scaling the rest by 1/(1-p).

    PyTorch
    -------
    ``torch.nn.Dropout``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks (:func:`ember.nn.functional.alpha_dropout`): dropped
    elements take SELU's negative saturation value and the output keeps the input's mean
    and variance.

    PyTorch
    -------
    ``torch.nn.AlphaDropout``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels of (N, C, ...).

    PyTorch
    -------
    ``torch.nn.FeatureAlphaDropout``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) with probability p during training.

    PyTorch
    -------
    ``torch.nn.Dropout1d``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) with probability p during training; other
    shapes as PyTorch takes them (3-D as (N, C, L); see F.dropout2d), with a warning.

    PyTorch
    -------
    ``torch.nn.Dropout2d``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p during
    training.

    PyTorch
    -------
    ``torch.nn.Dropout3d``
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


_SELU_ALPHA_SCALED = 1.7580993408473766      # SELU's alpha * scale: alpha dropout's value


def _alpha_dropout(name, input, p, training, inplace, feature):
    if not 0.0 <= p <= 1.0:
        raise EmberValueError(f"{name}: dropout probability has to be between 0 and 1, but "
                              f"got {p}")
    if not training or p == 0:
        return input
    if p == 1:                      # torch: everything dropped, no rescaling
        return input.mul_(0.0) if inplace else input * 0.0
    if feature and input.ndim < 2:
        raise ShapeError(f"{name}: expected an input with a channel dim (N, C, ...), got "
                         f"shape {tuple(input.shape)}")
    shape = tuple(input.shape) if not feature else \
        tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    keep = ops.bernoulli(ops.full(shape, 1.0 - p, dtype=input.dtype, device=input.device))
    alpha = _SELU_ALPHA_SCALED
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    out = input * (keep * a) + ((keep - 1) * (alpha * a) + alpha * a * p)
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalization: dropped elements take SELU's negative
    saturation value and the result is rescaled to the input's mean and variance.

    PyTorch
    -------
    ``torch.nn.functional.alpha_dropout``
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels of (N, C, ...).

    PyTorch
    -------
    ``torch.nn.functional.feature_alpha_dropout``
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)
