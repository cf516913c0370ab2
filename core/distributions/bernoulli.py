"""torch.distributions.bernoulli: Bernoulli."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import _BinaryProbs, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(_BinaryProbs, Distribution):
    """1 with probability ``probs`` (or sigmoid(``logits``)), else 0.

    PyTorch
    -------
    ``torch.distributions.Bernoulli``; samples differ from torch's for a seed.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError("Bernoulli: expected exactly one of probs and logits, got "
                                  f"{'both' if probs is not None else 'neither'}")
        given = probs if probs is not None else logits
        is_scalar = isinstance(given, (int, float))
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else tuple(self._param.shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, Bernoulli, batch_shape, ("probs", "logits"), _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ops.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = ops.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return (u < self.probs.detach()).to(self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = ops.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((2,) + tuple(self.batch_shape))
        return values
