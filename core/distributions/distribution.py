"""ember.distributions (torch.distributions): Categorical, Bernoulli and Normal, with
sample / rsample, log_prob, entropy and their moments, written with ember ops.

Samples come from ember's host stream like every random number (multinomial, randn);
log_prob and entropy are differentiable composites, so policy gradients and
reparameterised losses get their gradients on every backend.
"""
from __future__ import annotations

import math

from . import ops
from .errors import EmberValueError
from .functional.movement import broadcast_shapes
from .ops._util import as_shape
from .ops.sampling import multinomial
from .tensor import Size, Tensor

__all__ = ["Distribution", "Categorical", "Bernoulli", "Normal"]


def _tensor(value, like=None) -> Tensor:
    if type(value) is Tensor:
        return value
    return ops.tensor(value, dtype=None if like is None else like.dtype,
                      device=None if like is None else like.device)


class Distribution:
    """The shared interface: batch_shape, sample_shape handling, and sample() from rsample."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self.batch_shape = Size(batch_shape)
        self.event_shape = tuple(event_shape)

    def _extended(self, sample_shape) -> tuple:
        return as_shape((tuple(sample_shape),), "sample") + tuple(self.batch_shape)

    def sample(self, sample_shape=()):
        from .autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        from ._torch_gaps import gap
        raise gap(f"{type(self).__name__}.rsample", "this distribution is not "
                  "reparameterisable; use sample()")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={tuple(self.batch_shape)})"


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
        from ._torch_gaps import gap
        raise gap("Categorical.mean", "a categorical distribution has no mean (as in PyTorch)")


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
        from .nn.functional import binary_cross_entropy_with_logits
        value = _tensor(value, self.logits)
        logits = self.logits.expand(tuple(value.shape)) if value.shape != self.logits.shape \
            else self.logits
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        from .nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)


class Normal(Distribution):
    """A normal distribution with mean loc and standard deviation scale."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc = _tensor(loc, scale if type(scale) is Tensor else None)
        self.scale = _tensor(scale, self.loc)
        shape = broadcast_shapes(tuple(self.loc.shape), tuple(self.scale.shape))
        super().__init__(tuple(shape))

    def rsample(self, sample_shape=()):
        eps = ops.randn(self._extended(sample_shape), dtype=self.loc.dtype,
                        device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = _tensor(value, self.loc)
        var = self.scale * self.scale
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale * self.scale


def __getattr__(name: str):
    from ._torch_gaps import missing
    raise missing("distributions", name)
