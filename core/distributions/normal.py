"""torch.distributions.normal: Normal."""
from __future__ import annotations

import math

from .. import ops
from ..functional.movement import broadcast_shapes
from ..tensor import Tensor
from .distribution import Distribution, _tensor

__all__ = ["Normal"]


class Normal(Distribution):
    """A normal distribution with mean loc and standard deviation scale."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc = _tensor(loc, scale if type(scale) is Tensor else None)
        self.scale = _tensor(scale, self.loc)
        shape = broadcast_shapes(tuple(self.loc.shape), tuple(self.scale.shape))
        super().__init__(tuple(shape))

    def rsample(self, sample_shape=()):
        eps = ops.randn(self._extended(sample_shape), dtype=self.loc.dtype,
                        device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        var = self.scale * self.scale
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale * self.scale
