"""torch.distributions.geometric: Geometric (failures before the first success)."""
from __future__ import annotations

from .. import ops
from ..errors import EmberValueError
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import _BinaryProbs, broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryProbs, Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials.

    PyTorch
    -------
    ``torch.distributions.Geometric``; samples differ from torch's for a seed.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError("Geometric: expected exactly one of probs and logits, got "
                                  f"{'both' if probs is not None else 'neither'}")
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        super().__init__(() if isinstance(given, (int, float)) else tuple(given.shape),
                         validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            value = self.probs
            raise EmberValueError(
                f"Expected parameter probs ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                f"invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        return _expanded(self, Geometric, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return ops.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()) -> Tensor:
        from ..dtypes import finfo
        probs = self.probs.detach()
        tiny = finfo(probs.dtype).tiny
        u = ops.rand(tuple(self._extended_shape(sample_shape)), dtype=probs.dtype,
                     device=probs.device) * (1 - tiny) + tiny          # in [tiny, 1)
        return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
