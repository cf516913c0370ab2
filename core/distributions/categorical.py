"""torch.distributions.categorical: Categorical."""
from __future__ import annotations

import math

from .. import ops
from ..errors import EmberValueError
from ..functional.movement import broadcast_shapes
from ..ops._util import as_shape
from ..ops.sampling import multinomial
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, _expanded
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categories 0..K-1 along the last dim of ``probs`` (normalised) or ``logits``
    (normalised to log-probabilities).

    PyTorch
    -------
    ``torch.distributions.Categorical``; samples differ from torch's for a seed.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name = type(self).__name__
        if (probs is None) == (logits is None):
            raise EmberValueError(f"{name}: expected exactly one of probs and logits, got "
                                  f"{'both' if probs is not None else 'neither'}")
        if probs is not None:
            if probs.dim() < 1:
                raise EmberValueError(f"{name}: probs must be at least one-dimensional, got "
                                      "a 0-d tensor")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise EmberValueError(f"{name}: logits must be at least one-dimensional, "
                                      "got a 0-d tensor")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch = tuple(self._param.shape[:-1]) if self._param.dim() > 1 else ()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _expanded(self, Categorical, batch_shape, ("probs", "logits"), _instance)
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return ops.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                        device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return ops.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                        device=self.probs.device)

    def sample(self, sample_shape=()):
        n = 1
        for s in as_shape((tuple(sample_shape),), "sample"):
            n *= s
        rows = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(rows, n, replacement=True)          # (rows, n)
        return draws.mT.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long()
        logits = self.logits
        shape = broadcast_shapes(tuple(value.shape), tuple(logits.shape[:-1]))
        value = value.expand(shape)
        logits = logits.expand(tuple(shape) + (logits.shape[-1],))
        return logits.gather(-1, value.unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> Tensor:
        from ..dtypes import finfo
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = ops.arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((self._num_events,) + tuple(self.batch_shape))
        return values
