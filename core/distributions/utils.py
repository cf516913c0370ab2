"""torch.distributions.utils: broadcast_all and the probs/logits conversions the
distributions share."""
from __future__ import annotations

from .. import ops
from ..errors import EmberTypeError
from ..functional.movement import broadcast_shapes
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]

_EPS32 = 1.1920928955078125e-07
_EPS64 = 2.220446049250313e-16


def _eps(x: Tensor) -> float:
    return _EPS64 if str(x.dtype).endswith("float64") else _EPS32


def broadcast_all(*values):
    """Numbers become tensors of the dtype and device of the tensors among `values` (the
    default dtype where none is), then all are expanded to their broadcast shape."""
    for v in values:
        if not (type(v) is Tensor or isinstance(v, (int, float))):
            raise EmberTypeError("broadcast_all: expected each input to be a Tensor or a "
                                 f"number, got {type(v).__name__}")
    like = next((v for v in values if type(v) is Tensor), None)
    tensors = [v if type(v) is Tensor else
               ops.tensor(float(v), dtype=None if like is None else like.dtype,
                          device=None if like is None else like.device) for v in values]
    shape = tuple(broadcast_shapes(*[tuple(t.shape) for t in tensors]))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def clamp_probs(probs: Tensor) -> Tensor:
    """probs clamped into [eps, 1 - eps] of their dtype."""
    eps = _eps(probs)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) when binary, else softmax over the last dim."""
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log1p(-p) when binary, else log(p), probs clamped first."""
    ps = clamp_probs(probs)
    if is_binary:
        return ps.log() - (-ps).log1p()
    return ps.log()


class lazy_property:
    """A parameter computed from another on first use and then kept on the instance (the
    probs of a distribution made from logits, ...), as torch's."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _BinaryProbs:
    """The logits and probs of a binary event (Bernoulli, Binomial, Geometric), each made
    from the other on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

