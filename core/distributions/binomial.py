"""torch.distributions.binomial: Binomial."""
from __future__ import annotations

from .. import ops
from ..errors import EmberValueError
from ..ops.sampling import _binomial
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import _BinaryProbs, broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0, as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryProbs, Distribution):
    """Successes in ``total_count`` Bernoulli(``probs``) trials.

    PyTorch
    -------
    ``torch.distributions.Binomial``; samples differ from torch's for a seed.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError("Binomial: expected exactly one of probs and logits, got "
                                  f"{'both' if probs is not None else 'neither'}")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, Binomial, batch_shape, ("total_count", "probs", "logits"),
                        _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().minimum(self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        normalize_term = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p() - \
            log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous(self, what: str) -> int:
        total = int(self.total_count.max())
        if int(self.total_count.min()) != total:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self) -> Tensor:
        self._homogeneous("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total = self._homogeneous("enumerate_support")
        values = ops.arange(1 + total, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((1 + total,) + tuple(self.batch_shape))
        return values
