"""Parameter: a Tensor flagged as a module parameter (requires_grad=True by default).

ember's Tensor is a slotted class and the dispatcher's fast paths test `type(x) is Tensor`
(not isinstance) to stay cheap, so a Tensor *subclass* would be passed to kernels as an
opaque object.  `Parameter(t)` therefore returns a plain Tensor sharing t's storage, with a
"param" flag in its metadata; `isinstance(x, Parameter)` reads that flag.  Every op and
fast path treats a parameter exactly like any other tensor.
"""
from __future__ import annotations

from .. import dtypes as D
from ..errors import EmberTypeError
from ..tensor import Tensor, wrap

__all__ = ["Parameter", "Buffer"]


class _ParameterMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return type(obj) is Tensor and obj._meta is not None and "param" in obj._meta


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data, requires_grad=True) -> a Tensor registered as a module parameter.

    PyTorch
    -------
    ``torch.nn.Parameter``
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:
        if data is None:
            from ..ops import empty
            data = empty(0)
        if type(data) is not Tensor:
            raise EmberTypeError(f"Parameter: expected a Tensor, got {type(data).__name__}; "
                                 "wrap the values with ember.tensor(...) first")
        if requires_grad and data._dtype.category < D.FLOAT:
            raise EmberTypeError(f"Parameter: only floating point tensors can require "
                                 f"gradients, got {data._dtype.name}; pass "
                                 "requires_grad=False or cast with .float()")
        # shares storage with data, as torch.nn.Parameter(t) does
        t = wrap(data._data, data._device, data._dtype)
        t._set_meta("param", True)
        t.requires_grad = bool(requires_grad)
        return t


def zero_grads(params, set_to_none: bool = True) -> None:
    """Module.zero_grad and Optimizer.zero_grad: drop each gradient, or zero it in place."""
    from ..autograd.grad_mode import no_grad
    with no_grad():
        for p in params:
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p._set_grad(None)
            else:
                if g.grad_fn is not None:
                    g = g.detach()
                    p._set_grad(g)
                g.zero_()


def is_parameter(x) -> bool:
    return isinstance(x, Parameter)


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return type(obj) is Tensor and obj._meta is not None and "buffer" in obj._meta


class Buffer(metaclass=_BufferMeta):
    """Buffer(data, persistent=True): assigning one to a Module attribute registers a buffer
    (torch.nn.Buffer).

    PyTorch
    -------
    ``torch.nn.Buffer``
    """

    def __new__(cls, data: Tensor, *, persistent: bool = True) -> Tensor:
        if type(data) is not Tensor:
            raise EmberTypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        t = wrap(data._data, data._device, data._dtype)
        t._set_meta("buffer", bool(persistent))
        return t
