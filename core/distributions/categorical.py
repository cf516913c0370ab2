"""torch.distributions.categorical: Categorical."""
from __future__ import annotations

from ..errors import EmberValueError
from ..functional.movement import broadcast_shapes
from ..ops._util import as_shape
from ..ops.sampling import multinomial
from ..tensor import Tensor
from .distribution import Distribution, _tensor

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categories 0..K-1 along the last dim of probs (normalised) or logits."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise EmberValueError("Categorical: pass exactly one of probs and logits")
        if probs is not None:
            probs = _tensor(probs)
            self.probs = probs / probs.sum(-1, keepdim=True)
            self.logits = self.probs.clamp(min=1.1920928955078125e-07).log()
        else:
            logits = _tensor(logits)
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.exp()
        super().__init__(tuple(self.probs.shape[:-1]))

    @property
    def param_shape(self):
        return tuple(self.probs.shape)

    def sample(self, sample_shape=()):
        k = self.probs.shape[-1]
        n = 1
        for s in as_shape((tuple(sample_shape),), "sample"):
            n *= s
        rows = self.probs.detach().reshape(-1, k)
        draws = multinomial(rows, n, replacement=True)          # (rows, n)
        shape = self._extended(sample_shape)
        return draws.mT.reshape(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        value = _tensor(value).long()
        logits = self.logits
        if value.shape != self.batch_shape:
            shape = broadcast_shapes(tuple(value.shape), tuple(self.batch_shape))
            value = value.expand(shape)
            logits = logits.expand(tuple(shape) + (logits.shape[-1],))
        return logits.gather(-1, value.unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> Tensor:
        return -(self.probs * self.logits).sum(-1)

    @property
    def mean(self):
        from .._torch_gaps import gap
        raise gap("Categorical.mean", "a categorical distribution has no mean (as in PyTorch)")
