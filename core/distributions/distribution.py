"""torch.distributions.distribution: the Distribution base class (batch and event shapes,
argument and sample validation against constraints, sample() from rsample())."""
from __future__ import annotations

from .. import ops
from ..errors import EmberValueError
from ..ops._util import as_shape
from ..tensor import Size, Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _tensor(value, like=None) -> Tensor:
    if type(value) is Tensor:
        return value
    return ops.tensor(value, dtype=None if like is None else like.dtype,
                      device=None if like is None else like.device)


def _all_true(valid) -> bool:
    return bool(valid.all()) if type(valid) is Tensor else bool(valid)


class Distribution:
    """The shared interface: batch_shape and event_shape, sample_shape handling,
    validation of parameters (``arg_constraints``) and of log_prob's value (``support``),
    on unless ``validate_args=False`` or ``set_default_validate_args(False)``, as torch's."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for every distribution made after this call."""
        if value not in (True, False):
            raise EmberValueError("set_default_validate_args: expected True or False, got "
                                  f"{value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = Size(tuple(batch_shape))
        self._event_shape = Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and \
                        isinstance(getattr(type(self), param, None), lazy_property):
                    continue                 # derived from the one given, not computed yet
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise EmberValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """{parameter name: constraint} for each parameter."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint every sample satisfies."""
        raise NotImplementedError

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters expanded to `batch_shape` (no copy)."""
        raise NotImplementedError(f"{type(self).__name__}.expand")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return type(self).__new__(type(self)) if _instance is None else _instance

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}.variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _extended(self, sample_shape) -> tuple:
        return as_shape((tuple(sample_shape),), "sample") + tuple(self.batch_shape)

    def _extended_shape(self, sample_shape=()) -> Size:
        return Size(self._extended(sample_shape) + tuple(self.event_shape))

    def sample(self, sample_shape=()):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        from .._torch_gaps import gap
        raise gap(f"{type(self).__name__}.rsample", "this distribution is not "
                  "reparameterisable; use sample()")

    def sample_n(self, n: int):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__}.log_prob")

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__}.icdf")

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError(f"{type(self).__name__}.enumerate_support")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__}.entropy")

    def perplexity(self):
        return self.entropy().exp()

    def _validate_sample(self, value) -> None:
        if type(value) is not Tensor:
            raise EmberValueError(f"{type(self).__name__}.log_prob: the value argument must "
                                  f"be a Tensor, got {type(value).__name__}")
        shape, event = tuple(value.shape), tuple(self._event_shape)
        if shape[len(shape) - len(event):] != event:
            raise EmberValueError(f"The right-most size of value must match event_shape: "
                                  f"{shape} vs {event}.")
        expected = tuple(self._batch_shape) + event
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise EmberValueError("Value is not broadcastable with "
                                      f"batch_shape+event_shape: {shape} vs {expected}.")
        support = self.support
        if not _all_true(support.check(value)):
            raise EmberValueError(
                f"Expected value argument ({type(value).__name__} of shape {shape}) to be "
                f"within the support ({support!r}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}")

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        shown = {p: self.__dict__[p] for p in names}
        args = ", ".join(f"{p}: {v if v.numel() == 1 else tuple(v.shape)}"
                         for p, v in shown.items())
        return f"{type(self).__name__}({args})"



def _expanded(self, cls, batch_shape, names, _instance=None):
    """A `cls` like `self` with the parameters `names` expanded to `batch_shape` (their
    trailing, non-batch dimensions kept), unvalidated, as torch's expand methods."""
    new = self._get_checked_instance(cls, _instance)
    batch = tuple(Size(tuple(batch_shape)))
    nb = len(self.batch_shape)
    for name in names:
        if name not in self.__dict__:
            continue                         # a lazy parameter not computed yet
        value = self.__dict__[name]
        new.__dict__[name] = value.expand(batch + tuple(value.shape[nb:]))
    Distribution.__init__(new, batch, self.event_shape, validate_args=False)
    new._validate_args = self._validate_args
    return new
