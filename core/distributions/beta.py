"""torch.distributions.beta: Beta (through a two-category Dirichlet, as torch's)."""
from __future__ import annotations

from .. import ops
from ..errors import NotInEmberError
from ..tensor import Tensor
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .gamma import NO_RSAMPLE
from .normal import _is_number
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(Distribution):
    """The beta distribution on [0, 1] with ``concentration1`` (alpha) and
    ``concentration0`` (beta).

    PyTorch
    -------
    ``torch.distributions.Beta``; samples differ from torch's for a seed; rsample raises
    NotInEmberError (see Gamma), so has_rsample is False.
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = False

    def __init__(self, concentration1, concentration0, validate_args=None):
        if _is_number(concentration1) and _is_number(concentration0):
            both = ops.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = ops.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def sample(self, sample_shape=()) -> Tensor:
        return self._dirichlet.sample(sample_shape).select(-1, 0)

    def rsample(self, sample_shape=()):
        raise NotInEmberError(NO_RSAMPLE.format(name=type(self).__name__))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ops.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
