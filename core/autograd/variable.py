"""torch.autograd.Variable: PyTorch's legacy wrapper, which since PyTorch 0.4 makes a Tensor.

`Variable(x)` is `x.detach()` (the same memory, a new leaf), `Variable(x,
requires_grad=True)` that leaf requiring grad, `Variable()` an empty tensor of the default
dtype; `isinstance(t, Variable)` holds for every tensor.  `volatile=True` warns, as in
PyTorch, and has no effect (use `ember.no_grad()`).
"""
from __future__ import annotations

import operator
import warnings

from ..errors import EmberTypeError, EmberValueError, EmberWarning, NotInEmberError
from ..tensor import Tensor

__all__ = ["Variable"]

# PyTorch's text, word for word (programs filter on it)
VOLATILE_WARNING = ("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                    "instead.")


def _flag(value, name: str) -> bool:
    """A flag parsed as PyTorch's legacy constructor parses it: anything with __index__."""
    try:
        return bool(operator.index(value))
    except TypeError:
        raise EmberTypeError(f"Variable(): {name} must be a bool, got "
                             f"{type(value).__name__} ({value!r}); pass True or False") from None


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data=None, requires_grad=False, volatile=False): a Tensor (see the module
    doc); data must be a tensor."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None,
                name=None):
        requires_grad = _flag(requires_grad, "requires_grad")
        if _flag(volatile, "volatile"):
            warnings.warn(VOLATILE_WARNING, EmberWarning, stacklevel=2)
            if requires_grad:
                raise EmberValueError("Variable can't be volatile and require_grad at the "
                                      "same time!")
        if _grad_fn is not None:
            raise EmberValueError("Variable(): the _grad_fn argument to the legacy Variable "
                                  "constructor is no longer supported (PyTorch neither); call "
                                  "your function to produce a tensor with it as its grad_fn")
        if name is not None:
            raise NotInEmberError(f"Variable(name={name!r}): ember tensors carry no name; "
                                  "drop the argument")
        if data is None:
            from ..ops import zeros
            out = zeros(0)                  # the default dtype, on the default device
        elif type(data) is Tensor:
            out = data.detach()
        else:
            raise EmberTypeError(f"Variable data has to be a tensor, but got "
                                 f"{type(data).__name__}; make one with ember.tensor(data)")
        if requires_grad:
            out.requires_grad_(True)
        return out
