"""torch.distributions.negative_binomial: NegativeBinomial."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..errors import EmberValueError
from ..nn.activation import logsigmoid
from ..ops.sampling import poisson
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .gamma import Gamma
from .utils import _BinaryProbs, broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbs, Distribution):
    """The number of successes of Bernoulli(``probs``) trials before ``total_count``
    failures (``total_count`` may be any non-negative real); ``probs`` in [0, 1), or
    ``logits``.  Sampled as torch does: Poisson(Gamma(total_count, exp(-logits))).

    PyTorch
    -------
    ``torch.distributions.NegativeBinomial``; samples differ from torch's for a seed.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError(
                "Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, NegativeBinomial, batch_shape,
                        ("total_count", "probs", "logits"), _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized = (self.total_count * logsigmoid(-self.logits)
                            + value * logsigmoid(self.logits))
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        # total_count + value == 0: a point mass at 0, whose log-probability is 0
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0,
                                                          0.0)
        return log_unnormalized - log_normalization
