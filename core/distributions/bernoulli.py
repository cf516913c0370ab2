"""torch.distributions.bernoulli: Bernoulli."""
from __future__ import annotations

from .. import ops
from ..errors import EmberValueError
from ..tensor import Tensor
from .distribution import Distribution, _tensor

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """1 with probability probs (or sigmoid(logits)), else 0."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError("Bernoulli: pass exactly one of probs and logits")
        if probs is not None:
            self.probs = _tensor(probs)
            p = self.probs.clamp(1.1920928955078125e-07, 1 - 1.1920928955078125e-07)
            self.logits = (p / (1 - p)).log()
        else:
            self.logits = _tensor(logits)
            self.probs = self.logits.sigmoid()
        super().__init__(tuple(self.probs.shape))

    def sample(self, sample_shape=()):
        shape = self._extended(sample_shape)
        u = ops.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return (u < self.probs.detach()).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits
        value = _tensor(value, self.logits)
        logits = self.logits.expand(tuple(value.shape)) if value.shape != self.logits.shape \
            else self.logits
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)
