"""Strides and memory formats, with PyTorch's rules: Tensor.stride() and is_contiguous(),
and the memory_format= of clone, contiguous and the *_like factories.

A tensor's strides (in elements) are its backend's (Backend.strides) where its movement
kernels return views of their input (views == "strided"), and otherwise the layout the
core tracks for a view (movement.layout_of; row-major for a tensor of its own).  Kernels
return row-major results; another layout is made as PyTorch's empty_strided would have it:
a row-major tensor laid out in the format's dimension order, permuted back (a view with
the format's strides).  These functions are Tensor methods and keywords; they add no
names to ember.*.
"""
from __future__ import annotations

from ..backend import optional
from ..errors import EmberTypeError, EmberValueError, NotInEmberError
from ..tensor import (
    Tensor,
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from . import creation, movement
from ._util import norm_dim

__all__: list = []       # Tensor methods and keywords only (core/methods binds them)

# the dimension order, outermost first, each format lays a tensor of its rank out in
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def strides_of(x: Tensor) -> tuple:
    """x's strides in elements, as PyTorch's Tensor.stride()."""
    if x._device.strided_views:
        fn = optional(x._device.backend, "strides")
        if fn is None:
            raise NotInEmberError(
                f"stride(): the {x._device.backend.name} backend returns views but does not "
                "report strides (Backend.strides); ember cannot say this tensor's layout")
        return tuple(fn(x._data))
    return tuple(movement.layout_of(x)[1])


def stride(x: Tensor, dim: int | None = None):
    """Tensor.stride(): the strides of every dim, or of dim."""
    strides = strides_of(x)
    return strides if dim is None else strides[norm_dim(dim, x.ndim, "stride")]


def _root(x: Tensor) -> Tensor | None:
    """The tensor whose memory x views (None: x has memory of its own)."""
    return x._get_meta("base")


def data_ptr(x: Tensor) -> int:
    """The address of the tensor's first element, as PyTorch's: equal for views that start
    at the same element, ``offset * element_size()`` apart for a view that starts `offset`
    elements into its base (CPU: the NumPy array's address).  A backend whose memory has no
    address the host can see (OpenCL: PyOpenCL hands out cl_mem handles, not addresses)
    raises NotInEmberError.

    PyTorch
    -------
    ``torch.Tensor.data_ptr``
    """
    backend = x._device.backend
    fn = optional(backend, "data_ptr")
    if fn is None:
        raise NotInEmberError(
            f"data_ptr(): the {backend.name} backend does not expose memory addresses "
            f"(Backend.data_ptr){_WHY.get(backend.name, '')}; ember cannot give this "
            "tensor's address (compare tensors with `is`, or their values, instead)")
    root = _root(x)
    if root is not None and not x._device.strided_views:
        # a backend whose views are copies: the base's address plus the view's offset
        layout = movement.layout_of(x)
        if layout is not None:
            return int(fn(root._data)) + layout[2] * x._dtype.itemsize
    return int(fn(x._data))


# why a backend has no data_ptr, where it is known
_WHY = {"opencl": ": PyOpenCL gives a buffer's cl_mem handle (Buffer.int_ptr), not its "
                  "address on the device"}


def storage_offset(x: Tensor) -> int:
    """How many elements into its storage the tensor starts, as PyTorch's: 0 for a tensor
    of its own memory (a reshape that had to copy included), for a view its first
    element's offset in its base's memory.

    PyTorch
    -------
    ``torch.Tensor.storage_offset``
    """
    root = _root(x)
    if root is None:
        return 0
    if not x._device.strided_views:
        layout = movement.layout_of(x)       # the core tracks a copied view's layout
        return 0 if layout is None else layout[2]
    backend = x._device.backend
    fn = optional(backend, "offset")
    ptr = optional(backend, "data_ptr")
    if fn is None and ptr is None:
        raise NotInEmberError(
            f"storage_offset(): the {backend.name} backend returns views but reports "
            "neither their offsets (Backend.offset) nor their addresses (Backend.data_ptr)")
    # the memory x lies in: the base's, or that of a step between (a reshape that had to
    # copy is new memory its own views lie in)
    for owner in _made_from(x):
        if fn is not None:
            offset = fn(x._data, owner._data)
            if offset is not None:
                return int(offset)
        else:
            apart = int(ptr(x._data)) - int(ptr(owner._data))
            if 0 <= apart < owner._data.size * owner._dtype.itemsize:
                return apart // x._dtype.itemsize
    return 0


def _made_from(x: Tensor) -> list:
    """The tensors x was made from by views, its base first."""
    chain = []
    src = x._get_meta("src")
    while src is not None:
        chain.append(src)
        src = src._get_meta("src")
    return chain[::-1]


def _check(fmt, op: str) -> memory_format:
    if not isinstance(fmt, memory_format):
        raise EmberTypeError(f"{op}: memory_format must be an ember.memory_format "
                             f"(ember.contiguous_format, channels_last, ...), got {fmt!r}")
    return fmt


def _dense_in(shape, strides, order) -> bool:
    """Whether (shape, strides) is dense in `order` (dims outermost first), ignoring dims of
    size 1 (PyTorch's is_contiguous rule)."""
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _order(fmt, ndim: int, op: str) -> tuple:
    if fmt is contiguous_format:
        return tuple(range(ndim))
    rank, order = _ORDERS[fmt]
    if ndim != rank:
        raise EmberValueError(f"{op}: {fmt!r} needs a {rank}-D tensor, got {ndim}-D; use "
                              "ember.contiguous_format")
    return order


def is_contiguous(x: Tensor, memory_format=contiguous_format) -> bool:
    """Tensor.is_contiguous(): whether x is dense in the format's order (sizes of 1 may
    carry any stride; an empty tensor is contiguous; preserve_format checks row-major)."""
    fmt = _check(memory_format, "is_contiguous")
    if fmt is preserve_format:          # PyTorch checks row-major for any format but these
        fmt = contiguous_format
    shape = x._data.shape
    if fmt in _ORDERS and len(shape) != _ORDERS[fmt][0]:
        return False
    if 0 in shape:
        return True
    return _dense_in(shape, strides_of(x), _order(fmt, len(shape), "is_contiguous"))


def _dense_order(shape, strides) -> tuple | None:
    """The dim order (outermost first) in which x is non-overlapping and dense, or None
    (PyTorch's is_non_overlapping_and_dense); dims of size 0 or 1 go outermost."""
    inner = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d]))
    expected = 1
    for d in inner:
        if shape[d] < 2:
            break
        if strides[d] != expected:
            return None
        expected *= shape[d]
    return tuple(reversed(inner))


def _strides_like(shape, strides, order) -> bool:
    """Whether strides grow in `order` (innermost last): PyTorch's is_channels_last_strides,
    which suggests channels_last for a tensor that is not dense."""
    low = 0
    if strides[1] == 0:
        return False
    for d in reversed(order):
        if shape[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return False
        low = strides[d] * max(shape[d], 1)
    return True


def _target(x: Tensor, fmt, op: str) -> tuple | None:
    """The dim order (outermost first) a result of fmt made from x has, or None for
    row-major: preserve_format keeps x's where x is dense, else channels_last where x's
    strides are like it, else row-major (PyTorch's rule)."""
    fmt = _check(fmt, op)
    if fmt is contiguous_format or x.ndim < 2:
        return None
    if fmt is preserve_format:
        if x._device.strided_views and optional(x._device.backend, "strides") is None:
            return None     # a backend that cannot say its layout: clone as row-major
        shape, strides = x._data.shape, strides_of(x)
        order = _dense_order(shape, strides)
        if order is None:
            order = next((o for r, o in _ORDERS.values() if r == len(shape)
                          and _strides_like(shape, strides, o)), None)
    else:
        order = _order(fmt, x.ndim, op)
    if order is None:
        return None
    # dims of size 1 have no place in memory: an order that is row-major once they are
    # left out is row-major ((2, 1) with strides (1, 1) clones as a plain copy)
    sized = [d for d in order if x._data.shape[d] != 1]
    return None if sized == sorted(sized) else order


def _arranged(x: Tensor, order: tuple) -> Tensor:
    """x's values in a new tensor laid out in `order` (dims outermost first)."""
    inverse = tuple(order.index(d) for d in range(len(order)))
    return movement.permute(movement.contiguous(movement.permute(x, order)), inverse)


def relayout(out: Tensor, like: Tensor, fmt, op: str) -> Tensor:
    """out (new, row-major, like's shape) laid out as fmt says for like: the *_like
    factories' memory_format= (creation hands it through use_layout)."""
    order = _target(like, fmt, op)
    if order is None:
        return out
    from ..autograd.grad_mode import no_grad
    with no_grad():
        return _arranged(out, order)


def clone(x: Tensor, memory_format=preserve_format) -> Tensor:
    """Tensor.clone(): a copy of x with memory of its own, laid out as memory_format says
    (preserve_format, the default: x's layout where x is dense, as in PyTorch)."""
    if memory_format is preserve_format and x._get_meta("base") is None:
        return movement.contiguous(x)       # no view: its kernel made it row-major
    order = _target(x, memory_format, "clone")
    return movement.contiguous(x) if order is None else _arranged(x, order)


def contiguous(x: Tensor, memory_format=contiguous_format) -> Tensor:
    """Tensor.contiguous(): a row-major copy (ember's contiguous always copies:
    docs/semantics.md), or one laid out as channels_last / channels_last_3d."""
    if memory_format is contiguous_format:
        return movement.contiguous(x)
    if _check(memory_format, "contiguous") is preserve_format:
        if is_contiguous(x):              # PyTorch returns such a tensor as it is
            return movement.contiguous(x)
        raise EmberValueError("contiguous: preserve memory format is unsupported by the "
                              "contiguous operator (as in PyTorch); pass "
                              "ember.contiguous_format or channels_last")
    order = _order(memory_format, x.ndim, "contiguous")
    return _arranged(x, order)


def empty_format(out: Tensor, fmt, op: str) -> Tensor:
    """empty(..., memory_format=): out (new, row-major) laid out as fmt."""
    if _check(fmt, op) is preserve_format:
        raise EmberValueError(f"{op}: preserve_format is not supported here (there is no "
                              "input to preserve, as in PyTorch); pass "
                              "ember.contiguous_format or channels_last")
    return relayout(out, out, fmt, op)


creation.use_layout(relayout, empty_format)
