"""torch.distributions.dirichlet: Dirichlet."""
from __future__ import annotations

from ..errors import EmberValueError, NotInEmberError
from ..ops.sampling import _standard_gamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .gamma import NO_RSAMPLE

__all__ = ["Dirichlet"]


class Dirichlet(Distribution):
    """The Dirichlet distribution over the simplex of the last dim of ``concentration``.

    PyTorch
    -------
    ``torch.distributions.Dirichlet``; samples differ from torch's for a seed; rsample
    raises NotInEmberError (see Gamma), so has_rsample is False.
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = False

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise EmberValueError("Dirichlet: concentration must be at least "
                                  "one-dimensional, got a 0-d tensor")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Dirichlet, batch_shape, ("concentration",), _instance)

    def sample(self, sample_shape=()) -> Tensor:
        from ..dtypes import finfo
        shape = tuple(self._extended_shape(sample_shape))
        gammas = _standard_gamma(self.concentration.detach().expand(shape))
        info = finfo(gammas.dtype)
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=info.tiny,
                                                              max=1 - info.eps)

    def rsample(self, sample_shape=()):
        raise NotInEmberError(NO_RSAMPLE.format(name=type(self).__name__))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        from .. import ops
        from ..nn.functional import one_hot
        c = self.concentration
        cm1 = (c - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        # every concentration below 1: the mode is a vertex, at the largest one (as torch)
        corner = one_hot(mode.argmax(-1), c.shape[-1]).to(mode.dtype)
        return ops.where((c < 1).all(-1).unsqueeze(-1), corner, mode)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - \
            ((c - 1.0) * c.digamma()).sum(-1)
