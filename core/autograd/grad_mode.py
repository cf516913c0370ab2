"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (also decorators).

Grad mode is per thread, as in PyTorch: `no_grad` in one thread leaves others recording.
"""
from __future__ import annotations

import functools
import threading

from ..dispatch import is_grad_enabled
from ..dispatch import set_grad_enabled as _set


class _Mode:
    """Sets grad mode for a block; as a decorator, for every call of the function."""

    _value = True

    def __enter__(self):
        self._prev = _set(self._value)

    def __exit__(self, *exc):
        _set(self._prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    """A context manager (and decorator) in which operations record no gradient graph.

    Examples
    --------
    >>> import ember
    >>> w = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False

    PyTorch
    -------
    ``torch.no_grad``
    """
    _value = False


class enable_grad(_Mode):
    """A context manager (and decorator) that turns gradient recording back on inside a
    :func:`no_grad` block.

    PyTorch
    -------
    ``torch.enable_grad``
    """
    _value = True


def _decorate(fn, value: bool):
    """fn run with grad mode set to value on every call."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        prev = _set(value)
        try:
            return fn(*args, **kwargs)
        finally:
            _set(prev)
    return wrapper


_inference = threading.local()        # per thread, as grad mode


def is_inference_mode_enabled() -> bool:
    """Whether an inference_mode block (mode=True) is open in this thread.

    PyTorch
    -------
    ``torch.is_inference_mode_enabled``
    """
    return getattr(_inference, "on", False)


class inference_mode(_Mode):
    """A context manager (and decorator) for inference: no gradient graph is recorded.
    (ember keeps no separate inference tensors: what the block makes are ordinary tensors
    without history, as no_grad's.)

    Parameters
    ----------
    mode : bool
        ``False`` makes the block an ordinary one.

    PyTorch
    -------
    ``torch.inference_mode``
    """
    def __init__(self, mode: bool = True):
        self._value = not mode
        self._mode = bool(mode)

    def __enter__(self):
        self._prev = _set(self._value)
        self._prev_inference = is_inference_mode_enabled()
        _inference.on = self._mode

    def __exit__(self, *exc):
        _set(self._prev)
        _inference.on = self._prev_inference

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


class set_grad_enabled(_Mode):
    """Like torch's: takes effect when called, so it works as a plain call too.

    PyTorch
    -------
    ``torch.set_grad_enabled``
    """

    def __init__(self, mode: bool):
        self._value = bool(mode)
        self._prev = _set(self._value)

    def __enter__(self):
        pass

    def __call__(self, fn):
        _set(self._prev)          # used as a decorator: undo the call
        return _decorate(fn, self._value)


__all__ = ["no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled"]
