"""Tensor conversion methods: to(device/dtype), cpu(), cuda(), the dtype shorthands, clone,
detach, requires_grad_, new_* (the device copy is a graph node: its gradient goes back)."""
from __future__ import annotations

import weakref

import numpy as np

from .. import dispatch, ops
from .. import dtypes as D
from ..backend import optional
from ..device import Device, as_device
from ..errors import EmberTypeError, EmberValueError, ViewError
from ..ops import layout, movement
from ..ops._util import as_shape, resolve_reshape
from ..ops.movement import view_strides
from ..tensor import Tensor, preserve_format, version_root, wrap
from ..tensor import memory_format as memory_format_type


def converter(name: str, dtype):
    """Tensor.float(), .int(), ...: a cast, laid out as memory_format= says (torch's)."""
    def convert(self, memory_format=preserve_format):
        out = ops.cast(self, dtype)
        if memory_format is not preserve_format:
            out = layout.clone(out, memory_format=memory_format)
        return out
    convert.__name__ = convert.__qualname__ = name
    return convert


def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False,
       memory_format=preserve_format):
    """to(device=None, dtype=None, non_blocking=False, copy=False, memory_format=
    preserve_format), to(dtype, non_blocking, copy, memory_format), to(other, non_blocking,
    copy), as torch's: positional booleans are non_blocking then copy.

    The result is self when nothing changes (same device and dtype, copy=False, and self
    already in memory_format); memory_format (channels_last, ...) lays the result out so.
    ember copies between devices through the host synchronously, which is what
    non_blocking=True does in PyTorch for memory that is not pinned (ember has none)."""
    flags = []
    for a in args:
        if isinstance(a, bool):             # torch's positional non_blocking, copy
            flags.append(a)
        elif type(a) is Tensor:
            device, dtype = a._device, a._dtype
        elif isinstance(a, memory_format_type):
            memory_format = a
        elif isinstance(a, (D.DType, type)) or (isinstance(a, str) and _is_dtype_name(a)):
            dtype = a
        elif isinstance(a, (str, Device, int)):
            device = a
        elif a is not None:
            raise EmberTypeError(f"to(): expected a device, a dtype or a tensor, got {a!r}")
    if len(flags) > 2:
        raise EmberTypeError(f"to(): takes at most two positional booleans (non_blocking, "
                             f"copy), got {len(flags)}")
    if flags:
        non_blocking = flags[0]
    if len(flags) == 2:
        copy = flags[1]
    if not (isinstance(non_blocking, bool) and isinstance(copy, bool)):
        raise EmberTypeError(f"to(): non_blocking and copy must be bools, got "
                             f"{non_blocking!r} and {copy!r}")
    out = self
    if device is not None:
        dev = as_device(f"cuda:{device}" if type(device) is int else device)
        if dev is not out._device:
            out = _transfer(out, dev)
    if dtype is not None:
        out = ops.cast(out, dtype)
    if memory_format is not preserve_format:
        layout._check(memory_format, "to")
        if not layout.is_contiguous(out, memory_format):
            return layout.contiguous(out, memory_format)
        if copy and out is self:
            return layout.clone(self, memory_format)
        return out
    if copy and out is self:
        out = layout.clone(self)
    return out


def _is_dtype_name(s: str) -> bool:
    try:
        D.get_dtype(s)
        return True
    except EmberValueError:
        return False


def _transfer(x: Tensor, dev) -> Tensor:
    src = x._device
    if dev.type != "cpu":
        dispatch._check_dtype("to", dev, x._dtype)
    move = _mover(src, dev)
    tracer = None
    if Tensor._capture is not None:
        from ..graph.capture import current
        tracer = current()
    native = move(x._data) if tracer is None else tracer.transfer(x, dev, move)
    out = wrap(native, dev, x._dtype)
    if dispatch.is_grad_enabled() and x.requires_grad:
        dispatch.record(_TRANSFER, out, (x,), {"source": src})
    return out


def _mover(src, dev):
    """native on src -> a copy on dev: a backend that can copy directly between its own
    devices does (CuPy peer copy); otherwise through the host."""
    direct = optional(src.backend, "copy_to") if src.type == dev.type else None
    if direct is not None:
        return lambda native: direct(native, dev.index)
    to_host = src.backend.to_host

    def move(native):
        host = to_host(native)
        if dev.type == "cpu":
            # a CPU tensor's memory is its own and writable: copy a host array that is
            # read-only (a backend over immutable arrays) or the source's own memory
            if src.type == "cpu" or not host.flags.writeable or (
                    isinstance(native, np.ndarray) and np.may_share_memory(host, native)):
                return np.array(host, copy=True)
            return host
        return dev.backend.from_host(host, dev.index)
    return move


class _Transfer:
    """A device copy as a graph node: the gradient goes back to the source device."""

    name = "to_device"
    save_out = False
    uses = ()

    @staticmethod
    def vjp(g, out, x, *, source):
        return (g.to(source),)


_TRANSFER = _Transfer()


def clone(self) -> Tensor:
    return ops.contiguous(self)


def detach(self) -> Tensor:
    # shares self's memory and, as torch's, its version counter (tensor.version): an
    # in-place write into the detached alias is seen by autograd's checks on self
    out = wrap(self._data, self._device, self._dtype)
    out._meta = {"version_of": weakref.ref(version_root(self))}
    return out


def detach_(self) -> Tensor:
    self.grad_fn = None
    self.requires_grad = False
    return self


def requires_grad_(self, requires_grad: bool = True) -> Tensor:
    if requires_grad and self._dtype.category < D.FLOAT:
        raise EmberTypeError(f"only Tensors of floating point and complex dtype can require "
                             f"gradients, "
                             f"got {self._dtype.name}")
    if not requires_grad and self.grad_fn is not None:
        raise EmberValueError("requires_grad_(False) on a non-leaf tensor; use .detach()")
    self.requires_grad = bool(requires_grad)
    return self


def view(self, *shape):
    if len(shape) == 1 and (isinstance(shape[0], (str, D.DType)) or shape[0] in (float, int)):
        raise EmberTypeError("view(dtype) is not supported; use .to(dtype)")
    new = resolve_reshape("view", self._data.shape, as_shape(shape, "view"))
    if new != self._data.shape:
        strides = layout.strides_of(self)              # Tensor.stride()'s, every backend
        if view_strides(self._data.shape, strides, new) is None:
            # reshape would copy here, and writes through the result would not reach self
            raise ViewError(
                f"view: size {list(new)} is not compatible with the input's size "
                f"{list(self.shape)} and stride {list(strides)} (at least one dimension "
                "spans across two contiguous subspaces); use .reshape(...) instead (it "
                "copies where no view exists), or .contiguous().view(...)")
    return movement.reshape_to(self, new)


def to_dense(self, dtype=None, *, masked_grad=True):
    """The tensor itself (every ember tensor is strided), in dtype when one is given; as
    torch's to_dense of a strided tensor.  masked_grad only concerns sparse inputs."""
    return self if dtype is None else ops.cast(self, dtype)
