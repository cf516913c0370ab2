"""torch.distributions.normal: Normal."""
from __future__ import annotations

import math

from .. import ops
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["Normal"]


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


class _LocationScale(Distribution):
    """A family with a real location ``loc`` and a positive ``scale``, broadcast together
    (the batch shape theirs; () for two Python numbers): Normal, Laplace, Cauchy."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if _is_number(loc) and _is_number(scale) else tuple(self.loc.shape)
        super().__init__(batch, validate_args=validate_args)


class Normal(_LocationScale):
    """A normal distribution with mean ``loc`` and standard deviation ``scale``
    (broadcast together).

    PyTorch
    -------
    ``torch.distributions.Normal``; samples differ from torch's for a seed.
    """

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = ops.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype,
                        device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                           / math.sqrt(2)).erf())

    def icdf(self, value) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
