"""torch.distributions.poisson: Poisson."""
from __future__ import annotations

from ..ops.sampling import poisson
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(Distribution):
    """The Poisson distribution with rate ``rate``.

    PyTorch
    -------
    ``torch.distributions.Poisson``; samples differ from torch's for a seed.
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, (int, float)) else tuple(self.rate.shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        return poisson(self.rate.detach().expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()
