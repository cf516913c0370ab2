"""torch's `out=` keyword: the result written into a given tensor, with torch's checks.

`write_out(name, result, out, inputs)` is what a function taking `out=` calls last: `out`
must be a tensor (a tuple of them for a tuple result) on the result's device, of the
result's dtype (or one it casts to, for the elementwise functions that allow it); it may not
be one of the inputs (the op would read what it writes); no input may require grad while
grad mode is on (torch's out= functions are not differentiable); an `out` of another shape
is resized to the result's, with torch's warning when it held elements.  The result is
written into `out`'s memory (views of it see it) and `out` is returned.
"""
from __future__ import annotations

import inspect
import warnings

from .. import dispatch
from .. import dtypes as D
from .._torch_gaps import only_default
from ..errors import (
    AutogradError,
    DeviceMismatchError,
    EmberTypeError,
    EmberValueError,
    EmberWarning,
)
from ..tensor import Tensor


def _tensors(obj):
    if type(obj) is Tensor:
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)


def write_out(name: str, result, out, inputs=(), *, same_dtype: bool = True):
    """result written into out as torch's `name(..., out=out)` writes it; returns out."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise EmberTypeError(f"{name}(): out= expects a tuple of {len(result)} tensors "
                                 f"for its {len(result)} results, got {type(out).__name__}")
        for r, o in zip(result, out):
            _check(name, r, o, inputs, same_dtype)
        written = [_write(name, r, o, same_dtype) for r, o in zip(result, out)]
        return type(result)(written) if not hasattr(result, "_fields") else \
            type(result)(*written)
    _check(name, result, out, inputs, same_dtype)
    return _write(name, result, out, same_dtype)


def _check(name, result, out, inputs, same_dtype):
    if type(out) is not Tensor:
        raise EmberTypeError(f"{name}(): argument 'out' must be a Tensor, not "
                             f"{type(out).__name__}")
    if any(x is out for x in _tensors(inputs)):
        raise EmberValueError(f"{name}(): unsupported operation: out= is one of the inputs, "
                              "so the op would overwrite what it reads; pass a new tensor as "
                              "out= or assign the result")
    if any(st == 0 and n > 1 for st, n in zip(_writer["strides"](out), out._data.shape)):
        raise EmberValueError(f"{name}(): unsupported operation: more than one element of "
                              "the out= tensor refers to a single memory location (it is "
                              "expanded); pass a tensor of its own memory, e.g. out.clone()")
    if dispatch.is_grad_enabled() and (out.requires_grad or any(
            x.requires_grad for x in _tensors(inputs))):
        raise AutogradError(f"{name}(): functions with out=... arguments don't support "
                            "automatic differentiation, but one of the arguments requires "
                            "grad; call it without out= (or under ember.no_grad())")
    if out._device != result._device:
        raise DeviceMismatchError(f"{name}(): out= is on {out._device}, the result on "
                                  f"{result._device}; pass an out= tensor on "
                                  f"{result._device}")
    if out._dtype is not result._dtype and (same_dtype or
                                            not D.can_cast(result._dtype, out._dtype)):
        raise EmberTypeError(f"{name}(): expected out tensor to have dtype "
                             f"{result._dtype.name}, but got {out._dtype.name} instead; "
                             f"pass an out= of dtype {result._dtype.name}")


_writer = {}          # ops/index.py hands down assign, bump and cast when it loads


def use_writer(assign, bump, cast, strides) -> None:
    _writer.update(assign=assign, bump=bump, cast=cast, strides=strides)


def _write(name, result, out, same_dtype):
    if out._dtype is not result._dtype:
        result = _writer["cast"](result, out._dtype)
    if out._data.shape != result._data.shape:
        if out._get_meta("chain") is not None or out._get_meta("base") is not None:
            raise EmberValueError(f"{name}(): out= is a view of shape {tuple(out.shape)} and "
                                  f"the result has shape {tuple(result.shape)}; a view "
                                  "cannot be resized: pass a tensor of the result's shape")
        if out.numel() > 0:
            warnings.warn(f"{name}(): an output with one or more elements was resized since "
                          f"it had shape {list(out.shape)}, which does not match the "
                          f"required output shape {list(result.shape)}", EmberWarning,
                          stacklevel=3)
        out._data = result.contiguous()._data
        out._version += 1
        return out
    _writer["assign"](out, result)
    _writer["bump"](out)
    return out



_FACTORY_DEFAULTS = {"layout": None, "pin_memory": False, "out": None}


def factory(*keywords: str):
    """A torch.* creation function (zeros, arange, rand, ...) that also takes the factory
    keywords torch gives it, of: out= (the result written into it, as above), layout=
    (strided, the only layout ember's dense tensors have; another raises NotInEmberError)
    and pin_memory= (False; True asks for page-locked host memory, for faster copies to a
    CUDA device, which ember does not allocate: NotInEmberError)."""
    def wrap(fn):
        name = fn.__name__

        def f(*args, layout=None, pin_memory: bool = False, out=None, **kwargs):
            if layout is not None:
                only_default(name, "layout", layout, ("strided",))
            if pin_memory:
                only_default(name, "pin_memory", pin_memory)
            if out is None:
                return fn(*args, **kwargs)
            if type(out) is Tensor:     # torch makes the out tensor's dtype, on its device
                if kwargs.get("dtype") is None:
                    kwargs["dtype"] = out._dtype
                if kwargs.get("device") is None:
                    kwargs["device"] = out._device
            return write_out(name, fn(*args, **kwargs), out)
        f.__name__, f.__qualname__, f.__doc__ = name, fn.__qualname__, fn.__doc__
        f.__module__, f.__wrapped__ = fn.__module__, fn
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        P = inspect.Parameter
        extra = [P(k, P.KEYWORD_ONLY, default=_FACTORY_DEFAULTS[k]) for k in keywords
                 if k not in sig.parameters]
        f.__signature__ = sig.replace(parameters=[
            p for p in params if p.kind is not P.VAR_KEYWORD] + extra + [
            p for p in params if p.kind is P.VAR_KEYWORD])
        return f
    return wrap
