"""The other spellings torch's argument parser accepts, applied where a function is defined:
axis= for dim= and keepdims= for keepdim= (x.sum(axis=1, keepdims=True)), size= for a
factory's shape (ember.zeros(size=(2, 3)))."""
from __future__ import annotations

import inspect

_P = inspect.Parameter


def numpy_names(fn):
    """fn that also takes axis= for dim= and keepdims= for keepdim=."""
    def f(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return fn(*args, **kwargs)
    return _wrapped(f, fn, {"dim": "axis", "keepdim": "keepdims"})


def size_keyword(fn):
    """A factory fn(*size, ...) that also takes size= as a keyword."""
    def f(*args, **kwargs):
        if "size" in kwargs:
            args = (kwargs.pop("size"),) + args
        return fn(*args, **kwargs)
    return _wrapped(f, fn, {"size": "size"})


def _wrapped(f, fn, spellings: dict):
    f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    f.__module__ = fn.__module__
    f.__wrapped__ = fn
    f.__signature__ = _signature(fn, spellings)
    return f


def _signature(fn, spellings: dict):
    """fn's signature with the spellings it also takes (spellings: a parameter of fn -> the
    keyword that stands for it) as keyword-only parameters, so that inspect (and `ember
    torch-api`) sees them; a `*size` is shown as `*sizes` beside its size= keyword."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):       # a builtin without one: nothing to add to
        return None
    params = list(sig.parameters.values())
    names = {p.name for p in params}
    extra = [_P(alias, _P.KEYWORD_ONLY, default=None) for name, alias in spellings.items()
             if name in names and (alias not in names or alias == name)]
    params = [p.replace(name=p.name + "s") if p.kind is _P.VAR_POSITIONAL and p.name in
              spellings else p for p in params]
    tail = [p for p in params if p.kind is _P.VAR_KEYWORD]
    return sig.replace(parameters=[p for p in params if p.kind is not _P.VAR_KEYWORD] +
                       extra + tail)
