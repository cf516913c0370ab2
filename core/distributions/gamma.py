"""torch.distributions.gamma: Gamma."""
from __future__ import annotations

from ..errors import NotInEmberError
from ..ops.sampling import _standard_gamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .normal import _is_number
from .utils import broadcast_all

__all__ = ["Gamma"]

NO_RSAMPLE = ("ember's {name} has no rsample: torch reparametrises it with implicit "
              "gradients (torch._standard_gamma_grad), which ember does not have, and a "
              "sample without that gradient would be silently wrong; use sample() (no "
              "gradient) or a reparametrisable distribution")


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and ``rate`` (mean
    concentration / rate).

    PyTorch
    -------
    ``torch.distributions.Gamma``; samples differ from torch's for a seed; rsample
    (torch's implicit reparametrisation) raises NotInEmberError, so has_rsample is False.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch = () if _is_number(concentration) and _is_number(rate) else \
            tuple(self.concentration.shape)
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        draws = _standard_gamma(self.concentration.detach().expand(shape))
        return draws / self.rate.detach().expand(shape)

    def rsample(self, sample_shape=()):
        raise NotInEmberError(NO_RSAMPLE.format(name=type(self).__name__))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration.xlogy(self.rate) + \
            (self.concentration - 1).xlogy(value) - self.rate * value - \
            self.concentration.lgamma()

    def entropy(self) -> Tensor:
        return self.concentration - self.rate.log() + self.concentration.lgamma() + \
            (1.0 - self.concentration) * self.concentration.digamma()
