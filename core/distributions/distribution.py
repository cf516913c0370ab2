"""torch.distributions.distribution: the Distribution base class (batch shape, sample()
from rsample()) and the helper its subclasses share."""
from __future__ import annotations

from .. import ops
from ..ops._util import as_shape
from ..tensor import Size, Tensor

__all__ = ["Distribution"]


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
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        from .._torch_gaps import gap
        raise gap(f"{type(self).__name__}.rsample", "this distribution is not "
                  "reparameterisable; use sample()")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={tuple(self.batch_shape)})"
