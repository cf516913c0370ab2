"""In-place forms of Tensor methods: computed out of place and written back into the same
memory (views see it), or through a backend's own in-place kernel when no graph is recorded.
"""
from __future__ import annotations

import math

from .. import dispatch, ops
from .. import dtypes as D
from ..errors import AutogradError, EmberTypeError, EmberValueError
from ..ops import index as _index
from ..ops._util import as_shape
from ..tensor import Tensor


def _inplace(fn):
    def method(self, *args, **kwargs):
        grad_mode = dispatch.is_grad_enabled()
        if grad_mode:
            _index.check_inplace_target(self)
        recording = grad_mode and (self.requires_grad or any(
            type(a) is Tensor and a.requires_grad for a in args))
        if recording:
            # compute from a copy so the op's saved input is not the tensor we overwrite
            result = fn(ops.contiguous(self), *args, **kwargs)
        else:
            result = fn(self, *args, **kwargs)
        if result._dtype is not self._dtype:
            if not D.can_cast(result._dtype, self._dtype):
                raise EmberTypeError(
                    f"{fn.__name__}_: result type {result._dtype.name} can't be cast to the "
                    f"desired output type {self._dtype.name}; use the out-of-place op")
            result = ops.cast(result, self._dtype)
        if result._data.shape != self._data.shape:
            raise EmberValueError(
                f"{fn.__name__}_: output with shape {list(self.shape)} doesn't match the "
                f"broadcast shape {list(result.shape)}")
        if recording:
            _index._rebase(self, result)
        else:
            _index._assign(self, result)
            _index._bump(self)
        return self
    method.__name__ = fn.__name__ + "_"
    return method


def _add_scaled(self, other, alpha=1):
    return self + other * alpha if alpha != 1 else self + other


def _sub_scaled(self, other, alpha=1):
    return self - other * alpha if alpha != 1 else self - other


_add_scaled.__name__, _sub_scaled.__name__ = "add", "sub"


def _direct_inplace(op, generic, floats_only: bool = False):
    """x.add_(y) etc. through a backend's own in-place kernel (one pass, no temporary; op
    is its declaration) when no graph is recorded and no cast is needed; otherwise the
    generic out-of-place path.  Optimizer steps live here."""
    def method(self, other, alpha=1, **kwargs):
        grad_mode = dispatch.is_grad_enabled()
        if kwargs:                  # div_(y, rounding_mode=...): the generic path takes them
            return generic(self, other, **kwargs) if alpha == 1 else \
                generic(self, other, alpha, **kwargs)
        if not (grad_mode and (self.requires_grad or (
                type(other) is Tensor and other.requires_grad))):
            # generic checks its own target; this path writes without it
            if grad_mode:
                _index.check_inplace_target(self)
            cat = self._dtype.category
            if self._dtype is not D.bfloat16 and (cat == D.FLOAT or not floats_only):
                to = type(other)
                if to is Tensor and other._dtype is self._dtype and \
                        other._device is self._device:
                    value = other if alpha == 1 else other * alpha
                elif (to is float and cat == D.FLOAT) or (to is int and cat != D.BOOL):
                    value = other * alpha
                else:
                    value = None
                if value is not None and (type(value) is not Tensor or _fits(
                        value._data.shape, self._data.shape)) and _writable(self):
                    if dispatch.inplace(op, self, value):
                        _index._bump(self)
                        return self
        return generic(self, other, alpha) if alpha != 1 else generic(self, other)
    method.__name__ = op.name
    return method


def _fits(shape, target) -> bool:
    """Whether `shape` broadcasts to `target` without growing it."""
    if len(shape) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def _writable(x: Tensor) -> bool:
    """In-place kernels write x's own memory: only where a write through x reaches every
    tensor that shares it (see _index.writes_through)."""
    return _index.writes_through(x)


def _fill(self, value):
    if type(value) is Tensor and value.requires_grad and dispatch.is_grad_enabled():
        # torch's fill_ passes the gradient to a tensor value (its sum)
        return _in_graph(self, ops.cast(value, self._dtype))
    return _in_graph(self, ops.full_like(self, value.item() if type(value) is Tensor
                                         else value))


def _zero(self):
    return _in_graph(self, ops.zeros_like(self))


def _in_graph(self, value):
    """value broadcast to self, in the autograd graph when self is (torch's fill_ and zero_
    results are, with a zero gradient to self): where over an all-False mask, not a
    product with 0, which would carry self's inf and nan into the result."""
    if not (self.requires_grad or value.requires_grad) or not dispatch.is_grad_enabled():
        return value
    return ops.where(ops.zeros_like(self, dtype=D.bool_), self, value)


_fill.__name__, _zero.__name__ = "fill", "zero"


def copy_(self, src, non_blocking: bool = False):
    """Copy src's values into self (broadcast, cast), keeping self's dtype and device.
    non_blocking=True lets torch return before an asynchronous device copy ends; ember's
    copies have ended when copy_ returns, which is what that permits."""
    src = src.to(self._device) if src._device is not self._device else src
    if src._data.shape != self._data.shape:
        src = ops.expand(src, as_shape(self.shape, "copy_"))
    grad_mode = dispatch.is_grad_enabled()
    if grad_mode:
        _index.check_inplace_target(self)
    if grad_mode and (self.requires_grad or src.requires_grad):
        _index._rebase(self, ops.contiguous(ops.cast(src, self._dtype)))
    else:
        _index._assign(self, ops.cast(src, self._dtype))
        _index._bump(self)
    return self


def _reshaping(name: str, fn):
    """squeeze_, unsqueeze_, t_, transpose_, swapaxes_, swapdims_: x takes the new shape
    itself.  Outside autograd only: the nodes that took x as an input read its shape when
    they run backward (torch's keep their inputs' sizes), so under a recorded graph a new
    shape would reach them; torch gives x the view op's history there."""
    def method(self, *args, **kwargs):        # x.transpose_(dim0=0, dim1=1)
        if dispatch.is_grad_enabled() and self.requires_grad:
            raise AutogradError(f"{name}: changing the shape in place of a tensor that "
                                "requires grad is not supported; use the out-of-place "
                                f"{name[:-1]}()")
        self._data = fn(self, *args, **kwargs)._data
        return self
    method.__name__ = name
    return method


def _setitem(self, key, value):
    if dispatch.is_grad_enabled():
        _index.check_inplace_target(self)
    _index.setitem(self, key, value)


# -- resizing: PyTorch's resize_, resize_as_ and the deprecated out-of-place resize ----------

def resize_(self, *sizes, memory_format=None) -> Tensor:
    """x.resize_(*sizes): x takes the shape, keeping its elements in row-major order: the
    first ones when it shrinks, zeros appended when it grows (PyTorch leaves them
    uninitialised; ember never hands out uninitialised memory).  Views taken before do not
    follow a change of size, as in PyTorch when it reallocates."""
    shape = as_shape(sizes, "resize_")
    if any(n < 0 for n in shape):
        raise EmberValueError(f"resize_: negative dimension in {list(shape)}")
    if self.requires_grad:
        raise AutogradError("resize_: cannot resize variables that require grad (as "
                            "PyTorch); resize a detached copy, or use .reshape()")
    new, n = math.prod(shape), self.numel()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        if new == n:
            out = ops.reshape(ops.contiguous(self), shape)
        else:
            flat = ops.reshape(ops.contiguous(self), (n,))
            if new < n:
                flat = ops.contiguous(flat[:new])
            else:
                flat = ops.cat([flat, ops.zeros(new - n, dtype=self._dtype,
                                                device=self._device)])
            out = ops.reshape(flat, shape)
    if memory_format is not None:
        from ..ops import layout
        out = layout.contiguous(out, memory_format)
    self._data = out._data
    if self._meta is not None:          # no longer a view of what it was made from
        for key in ("base", "chain", "layout", "version_of"):
            self._meta.pop(key, None)
    _index._bump(self)
    return self


def resize_as_(self, other: Tensor, memory_format=None) -> Tensor:
    return resize_(self, *other.shape, memory_format=memory_format)


def resize(self, *sizes) -> Tensor:
    """x.resize(*sizes), deprecated in PyTorch (it warns, and so does ember): x reshaped to
    sizes, which must hold as many elements."""
    import warnings

    from ..errors import EmberWarning
    warnings.warn("non-inplace resize is deprecated", EmberWarning, stacklevel=2)
    shape = as_shape(sizes, "resize")
    if math.prod(shape) != self.numel():
        raise EmberValueError(
            f"resize: requested resize to {'x'.join(map(str, shape))} ({math.prod(shape)} "
            f"elements in total), but the given tensor has a size of "
            f"{'x'.join(map(str, self.shape))} ({self.numel()} elements); resize can only "
            "change the shape, keeping the number of elements; use resize_ to change it")
    return ops.reshape(ops.contiguous(self), shape)
