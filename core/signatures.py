"""The other spellings torch's argument parser accepts, applied where a function is defined:
axis= for dim= and keepdims= for keepdim= (x.sum(axis=1, keepdims=True)), size= for a
factory's shape (ember.zeros(size=(2, 3)))."""
from __future__ import annotations


def numpy_names(fn):
    """fn that also takes axis= for dim= and keepdims= for keepdim=."""
    def f(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    return _wrapped(f, fn)


def size_keyword(fn):
    """A factory fn(*size, ...) that also takes size= as a keyword."""
    def f(*args, **kwargs):
        if "size" in kwargs:
            args = (kwargs.pop("size"),) + args
        return fn(*args, **kwargs)
    return _wrapped(f, fn)


def _wrapped(f, fn):
    f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    f.__module__ = fn.__module__
    f.__wrapped__ = fn
    return f
