"""torch.distributions.cauchy: Cauchy."""
from __future__ import annotations

import math

from .. import ops
from ..tensor import Tensor
from .distribution import _expanded
from .normal import _LocationScale

__all__ = ["Cauchy"]


class Cauchy(_LocationScale):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``.

    PyTorch
    -------
    ``torch.distributions.Cauchy``; samples differ from torch's for a seed.
    """

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self) -> Tensor:
        return ops.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype,
                        device=self.loc.device)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return ops.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype,
                        device=self.loc.device)

    def rsample(self, sample_shape=()) -> Tensor:
        u = ops.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype,
                     device=self.loc.device)
        return self.loc + (math.pi * (u - 0.5)).tan() * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - \
            (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
