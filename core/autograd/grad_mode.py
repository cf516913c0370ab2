"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (also decorators)."""
from __future__ import annotations

import functools

from .. import dispatch


class _Mode:
    """Sets grad mode for a block; as a decorator, for every call of the function."""

    _value = True

    def __enter__(self):
        self._prev = dispatch.grad_enabled
        dispatch.grad_enabled = self._value

    def __exit__(self, *exc):
        dispatch.grad_enabled = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    _value = False


class enable_grad(_Mode):
    _value = True


def _decorate(fn, value: bool):
    """fn run with grad mode set to value on every call."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with set_grad_enabled(value):
            return fn(*args, **kwargs)
    return wrapper


class inference_mode(_Mode):
    def __init__(self, mode: bool = True):
        self._value = not mode

    def __call__(self, fn):
        return _decorate(fn, self._value)


class set_grad_enabled(_Mode):
    """Like torch's: takes effect when called, so it works as a plain call too."""

    def __init__(self, mode: bool):
        self._value = bool(mode)
        self._prev = dispatch.grad_enabled
        dispatch.grad_enabled = self._value

    def __enter__(self):
        pass

    def __call__(self, fn):
        dispatch.grad_enabled = self._prev          # used as a decorator: undo the call
        return _decorate(fn, self._value)


def is_grad_enabled() -> bool:
    return dispatch.grad_enabled
