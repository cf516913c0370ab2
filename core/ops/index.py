"""Indexing primitives (take, gather, index_add, scatter_add, index_put, nonzero, assign)
and the __getitem__/__setitem__ logic built on them.

Kernel signatures: take(x, index, *, axis) as numpy.take with a 1-D index; index_add(x, index,
src, *, axis) -> a copy of x with src added at the 1-D index along axis, repeats
accumulating; gather(x, index,
*, axis) as torch.gather; scatter_add(x, index, src, *, axis) as torch.scatter_add
(out of place); index_put(x, index, values) -> a copy of flat x with x[index] = values
(index: int64, values: same shape, last write wins); nonzero(x) -> int64 (count, ndim);
assign(dst, src) writes src (broadcast, or a scalar) into dst in place and returns None.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as D
from ..autograd import node as _node
from ..autograd.grad_mode import no_grad
from ..dispatch import run
from ..errors import (
    AutogradError,
    EmberIndexError,
    EmberTypeError,
    EmberValueError,
    KernelNotFoundError,
    NotInEmberError,
    ShapeError,
)
from ..signatures import numpy_names
from ..tensor import Tensor, bump_version, wrap
from . import _out, elementwise, layout, movement
from ._op import declare, rule_first, rule_fixed, shape_first
from ._util import broadcast_shapes, norm_dim
from .creation import c_order, from_host, full, tensor
from .elementwise import where
from .movement import (
    _inverse,
    expand_op,
    permute_op,
    reshape,
    reshape_op,
    slice_,
    slice_op,
    slice_scatter,
    slice_scatter_op,
)

__all__ = ["argwhere", "gather", "index_add", "index_select", "nonzero", "scatter_add", "take"]


def _check_index_dtype(name, index):
    if type(index) is not Tensor or index._dtype.category != D.INT:
        got = index._dtype.name if type(index) is Tensor else type(index).__name__
        raise EmberTypeError(f"{name}: expected an integer index tensor (int64), got {got}")


def _take_shape(inputs, attrs):
    x, index, axis = inputs[0], inputs[1], attrs["axis"]
    shape = x._data.shape
    return shape[:axis] + index._data.shape + shape[axis + 1:]


take_op = declare("take", "index", rule_first, sig="x, index, *, axis: int", shape=_take_shape,
                  doc="numpy.take(x, index, axis) with a 1-D int64 index in range",
                  vjp=lambda g, out, x, index, *, axis: (
                      _index_add(g.new_zeros(x._data.shape), index, g, axis), None), uses=(1,))
index_add_op = declare("index_add", "index", rule_first, promote=(0, 2),
                       sig="x, index, src, *, axis: int", shape=shape_first,
                       doc="a copy of x with src added at the 1-D int64 index along axis; "
                           "repeated indices accumulate",
                       vjp=lambda g, out, x, index, src, *, axis: (
                           g, None, take_along(g, index, axis)), uses=(1,))
gather_op = declare("gather", "index", rule_first, sig="x, index, *, axis: int",
                    shape=lambda inputs, attrs: inputs[1]._data.shape,
                    doc="torch.gather: out[i][j] = x[index[i][j]][j] for axis 0, and so on",
                    vjp=lambda g, out, x, index, *, axis: (
                        _scatter_add(g.new_zeros(x._data.shape), index, g, axis), None), uses=(1,))
scatter_add_op = declare("scatter_add", "index", rule_first, promote=(0, 2),
                         sig="x, index, src, *, axis: int", shape=shape_first,
                         doc="torch.scatter_add, out of place: a copy of x with src added at "
                             "index along axis",
                         vjp=lambda g, out, x, index, src, *, axis: (
                             g, None, _gather(g, index, axis)), uses=(1,))
index_put_op = declare("index_put", "index", rule_first, promote=(0, 2),
                       sig="x, index, values: array|scalar", shape=shape_first,
                       doc="a copy of flat x with x[index] = values (int64 index, values of "
                           "index's shape; with repeated indices the last write wins)",
                       vjp=lambda g, out, x, index, values: (
                           run(index_put_op, g, index, 0.0), None,
                           take_along(g, index, 0) if type(values) is Tensor else None),
                       uses=(1,))
nonzero_op = declare("nonzero", "index", rule_fixed(D.int64), sig="x",
                     doc="the int64 (count, ndim) coordinates of x's nonzero elements")
assign_op = declare("assign", "index", rule_first, sig="dst, src: array|scalar",
                    doc="writes src (broadcast, or a scalar) into dst's memory in place; "
                        "returns None")


# The functions whose indices must lie in [0, size), as PyTorch's ("index -1 is out of
# bounds"): gather, the scatters, index_add, index_select, embedding (and take_along_dim
# without a dim, which PyTorch runs as a gather of the flattened input).  The others (x[i],
# take, index_fill, index_put, take_along_dim with a dim) take [-size, size) and count a
# negative index from the end.  The name decides, so a captured or exported check node
# (`<name>_bounds`) replays the same rule.
NON_NEGATIVE = frozenset({"gather", "scatter", "scatter_add", "scatter_reduce", "index_add",
                          "index_select", "embedding"})


def _bounds(name, index: Tensor, size: int):
    """Indices must lie in [-size, size) ([0, size) for the NON_NEGATIVE functions): checked
    here so no backend reads out of range.

    The check costs two reductions and a wait for the device, so an index tensor that
    passed it keeps a mark (size, version): a gradient reusing its forward's index (gather
    then scatter_add, take then index_add) is not checked again. A view's mark is not
    trusted (writes through its base do not bump its version)."""
    if index.numel() == 0:
        return index
    if Tensor._capture is not None:
        from ..graph.capture import current
        tracer = current()
        if tracer is not None:
            # in a graph the check is a node of its own (it runs at every replay) and the
            # wrap of negative indices is unconditional: what follows must not depend on
            # data. An index checked earlier in this graph (a gather's, then its gradient's
            # scatter) or made in range by construction (mark_in_range) is not checked again
            known = _known_in_range(tracer, index, size)
            if known is not None and (known or name not in NON_NEGATIVE):
                return index if known else _wrap_negative(index, size)
            tracer.check(f"{name}_bounds", _bounds_check(name, index._device, size), (index,),
                         {"size": size})
            if name in NON_NEGATIVE:
                if index._get_meta("base") is not None:
                    # a view's mark is not trusted (above): a copy (one kernel, as the wrap
                    # below is) carries it to the gradient's scatter, which then needs no
                    # second check (target.unsqueeze(1) in nll_loss)
                    index = index.clone()
                _note_in_range(tracer, index, size, True)
                return index
            _note_in_range(tracer, index, size, False)
            wrapped = _wrap_negative(index, size)
            _note_in_range(tracer, wrapped, size, True)
            return wrapped
    if (index._get_meta("bounds") == (size, index._version)
            and index._get_meta("base") is None):
        return index
    with no_grad():
        lo, hi = int(index.min().item()), int(index.max().item())
    _raise_out_of_bounds(name, lo, hi, size)
    if lo < 0:
        index = _wrap_negative(index, size)
    index._set_meta("bounds", (size, index._version))
    return index


def mark_in_range(index: Tensor, size: int) -> Tensor:
    """Say that index's values lie in [0, size) by construction (an argmax over `size`
    entries): the gathers and scatters that take it skip the bounds check (two reductions
    and a wait for the device), in eager runs and in a graph being captured, where the
    same kernel makes the index at every replay."""
    index._set_meta("bounds", (size, index._version))
    if Tensor._capture is not None:
        from ..graph.capture import current
        tracer = current()
        if tracer is not None:
            _note_in_range(tracer, index, size, True)
    return index


def _note_in_range(tracer, index: Tensor, size: int, non_negative: bool) -> None:
    # the tensor itself is kept (its id stays its own while the capture runs)
    tracer.in_range[id(index)] = (index, size, index._version, non_negative)


def _known_in_range(tracer, index: Tensor, size: int):
    """None, or whether index (known in range in this capture) is also non-negative."""
    known = tracer.in_range.get(id(index))
    if known is None or known[1] != size or known[2] != index._version or \
            index._get_meta("base") is not None:
        return None
    return known[3]


def _raise_out_of_bounds(name, lo, hi, size):
    low = 0 if name in NON_NEGATIVE else -size
    if lo < low or hi >= size:
        bad = hi if hi >= size else lo
        why = (" (negative indices are not counted from the end here, as in PyTorch; add "
               "the dim's size to them first)" if low == 0 and -size <= bad < 0 else "")
        raise EmberIndexError(f"{name}: index {bad} is out of bounds for a dimension of size "
                              f"{size}; expected indices in [{low}, {size - 1}]{why}")


def _bounds_check(name, device, size):
    """The bounds check on a native index array, with the device's own reductions."""
    kmin, kmax, to_host = device.kernels["min"], device.kernels["max"], device.backend.to_host

    def check(native):
        axes = tuple(range(len(native.shape)))
        lo = int(np.asarray(to_host(kmin(native, axes=axes, keepdims=False))))
        hi = int(np.asarray(to_host(kmax(native, axes=axes, keepdims=False))))
        _raise_out_of_bounds(name, lo, hi, size)
    return check


def _wrap_negative(index, size):
    return where(index < 0, index + size, index)


def take_along(x: Tensor, index: Tensor, axis: int, name: str = "take") -> Tensor:
    """x indexed along one axis by an integer tensor of any shape (numpy.take); `name` is
    the function called, for messages and its index rule (NON_NEGATIVE)."""
    _check_index_dtype(name, index)
    axis = norm_dim(axis, x.ndim, name)
    index = _bounds(name, index.to(D.int64), x._data.shape[axis] if x.ndim else 1)
    if index.ndim != 1:
        # backends see 1-D indices only (for take and for index_add, its gradient)
        shape = x._data.shape
        flat = run(take_op, x, index.reshape(-1), axis=axis)
        return flat.reshape(shape[:axis] + index._data.shape + shape[axis + 1:])
    return run(take_op, x, index, axis=axis)


@numpy_names
def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """torch.index_select: the entries of input at index along dim (in [0, size)).

    PyTorch
    -------
    ``torch.index_select``
    """
    if type(index) is Tensor and index.ndim > 1:
        raise ShapeError(f"index_select(): index is supposed to be a vector, got shape "
                         f"{list(index.shape)}; flatten it (index.reshape(-1)) or use "
                         "take_along_dim / gather")
    if input.ndim == 0:                       # torch: a 0-d input gives a 0-d result
        result = take_along(input.reshape(1), index, 0, "index_select").reshape(())
    else:
        result = take_along(input, index, dim, "index_select")
    return result if out is None else _out.write_out("index_select", result, out,
                                                     (input, index))


def take(input: Tensor, index: Tensor, *, out=None) -> Tensor:
    """torch.take: input treated as 1-D, read at index (any shape).

    PyTorch
    -------
    ``torch.take``
    """
    result = take_along(input.reshape(-1), index, 0)
    return result if out is None else _out.write_out("take", result, out, (input, index))


@numpy_names
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha=1) -> Tensor:
    """torch.index_add: a copy of input with alpha * source added at index along dim.

    PyTorch
    -------
    ``torch.index_add``
    """
    if type(input) is Tensor and type(source) is Tensor and input.ndim and source.ndim:
        xs, ss = input._data.shape, source._data.shape
        axis = norm_dim(dim, input.ndim, "index_add")
        if len(ss) != len(xs) or any(a != b for d, (a, b) in enumerate(zip(xs, ss))
                                     if d != axis):
            raise ShapeError(f"index_add(): source tensor shape must match self tensor "
                             f"shape, excluding the specified dimension. Got self.shape = "
                             f"{list(xs)} source.shape = {list(ss)}")
    return _index_add(input, index, source if alpha == 1 else source * alpha, dim)


def _index_add(x: Tensor, index: Tensor, src: Tensor, axis: int) -> Tensor:
    _check_index_dtype("index_add", index)
    if x.ndim == 0:             # a 0-d tensor is one element along dim 0 or -1 (torch's)
        norm_dim(axis, 1, "index_add")
        return _index_add(x.reshape(1), index.reshape(-1), src.reshape(-1), 0).reshape(())
    axis = norm_dim(axis, x.ndim, "index_add")
    index = _bounds("index_add", index.to(D.int64), x._data.shape[axis])
    if index.ndim != 1:
        shape = src._data.shape
        src = src.reshape(shape[:axis] + (-1,) + shape[axis + index.ndim:])
        index = index.reshape(-1)
    return run(index_add_op, x, index, src, axis=axis)


def _check_gather(name, x, index, axis, src=None):
    if index.ndim != x.ndim:
        raise ShapeError(f"{name}: index has {index.ndim} dims but the input has {x.ndim}; "
                         "expected the same number of dims")
    for d, (a, b) in enumerate(zip(index._data.shape, x._data.shape)):
        if d != axis and a > b:
            raise ShapeError(f"{name}: index shape {tuple(index.shape)} exceeds the input "
                             f"shape {tuple(x.shape)} at dim {d}")
    if src is not None and type(src) is Tensor and src._data.shape != index._data.shape and (
            src.ndim != index.ndim or any(a < b for a, b in zip(src._data.shape,
                                                               index._data.shape))):
        raise ShapeError(f"{name}: src shape {tuple(src.shape)} must be at least the index "
                         f"shape {tuple(index.shape)} in every dim (its leading index-shaped "
                         f"block is used, as in PyTorch)")


@numpy_names
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """torch.gather: out[i][j] = input[index[i][j]][j] for dim 0, and so on.

    PyTorch
    -------
    ``torch.gather`` (sparse_grad=True, a sparse gradient for input, is not in ember)
    """
    if sparse_grad:
        raise NotInEmberError("gather: sparse_grad=True (a sparse gradient) is not in ember; "
                              "ember's gradients are dense: pass sparse_grad=False")
    result = _gather(input, index, dim)
    return result if out is None else _out.write_out("gather", result, out, (input, index))


def _gather(x: Tensor, index: Tensor, axis: int, name: str = "gather") -> Tensor:
    if index._data.shape and 0 in index._data.shape and x._data.shape and \
            index._dtype.category == D.INT:
        # an empty index gathers nothing: torch checks neither its dims nor its dtype
        norm_dim(axis, x.ndim, name)
        return x.reshape(-1)[:0].reshape(index._data.shape)
    _check_index_dtype(name, index)
    if x.ndim == 0 and index.ndim <= 1:     # one element along dim 0 or -1 (torch's)
        norm_dim(axis, 1, name)
        return _gather(x.reshape(1), index.reshape(-1), 0, name).reshape(index._data.shape)
    axis = norm_dim(axis, x.ndim, name)
    _check_gather(name, x, index, axis)
    xs, ixs = x._data.shape, index._data.shape
    if any(a != b for d, (a, b) in enumerate(zip(ixs, xs)) if d != axis):
        # an index smaller than x outside axis reads x's leading block there (torch's)
        x = x[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(ixs))]
    index = _bounds(name, index.to(D.int64), x._data.shape[axis])
    return run(gather_op, x, index, axis=axis)


@numpy_names
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """torch.scatter_add: a copy of input with src added at index along dim.

    PyTorch
    -------
    ``torch.scatter_add``
    """
    if type(src) is Tensor and type(input) is Tensor and src._dtype is not input._dtype:
        raise EmberTypeError(f"scatter_add(): Expected self.dtype to be equal to src.dtype "
                             f"(got {input._dtype.name} and {src._dtype.name}); cast src "
                             f"with .to(input.dtype)")
    return _scatter_add(input, index, src, dim)


def _scatter_add(x: Tensor, index: Tensor, src: Tensor, axis: int) -> Tensor:
    _check_index_dtype("scatter_add", index)
    if x.ndim == 0 and index.ndim <= 1 and type(src) is Tensor and src.ndim <= 1:
        norm_dim(axis, 1, "scatter_add")    # one element along dim 0 or -1 (torch's)
        return _scatter_add(x.reshape(1), index.reshape(-1), src.reshape(-1)[:index.numel()],
                            0).reshape(())
    axis = norm_dim(axis, x.ndim, "scatter_add")
    _check_gather("scatter_add", x, index, axis, src)
    if type(src) is Tensor and src._data.shape != index._data.shape:
        src = src[tuple(slice(0, n) for n in index._data.shape)]    # torch's leading block
    index = _bounds("scatter_add", index.to(D.int64), x._data.shape[axis])
    return run(scatter_add_op, x, index, src, axis=axis)


def nonzero(x: Tensor, *, as_tuple: bool = False):
    """The indices of the nonzero elements of ``x``: a ``(count, x.ndim)`` int64 tensor, or with
    ``as_tuple=True`` one 1-D index tensor per dim.

    PyTorch
    -------
    ``torch.nonzero``
    """
    if as_tuple and x.ndim == 0:
        # torch treats a 0-d input as 1-D here: (tensor([0]),) when nonzero, else empty
        x = x.reshape(1)
    out = run(nonzero_op, x)
    if as_tuple:
        return tuple(out[:, i] for i in range(x.ndim))
    return out


elementwise.use_nonzero(nonzero)       # where(condition) alone
movement.use_index_select(index_select)    # pad(mode='reflect' | 'replicate' | 'circular')


def argwhere(input: Tensor) -> Tensor:
    """The indices of the nonzero elements of ``input``, one row per element: shape
    ``(count, x.ndim)``, int64.

    PyTorch
    -------
    ``torch.argwhere``
    """
    return nonzero(input)


# --- __getitem__ / __setitem__ ----------------------------------------------------------

def _is_basic(k) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or (
        isinstance(k, (int, np.integer)) and not isinstance(k, bool))


def _expand_key(x: Tensor, key) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis and not (
        type(k) is Tensor and k._dtype is D.bool_) and not isinstance(k, bool)) + sum(
        k.ndim for k in key if type(k) is Tensor and k._dtype is D.bool_)
    ell = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ell) > 1:
        raise EmberIndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise EmberIndexError(f"too many indices for tensor of dimension {x.ndim} "
                              f"(got {consumed})")
    fill = (slice(None),) * (x.ndim - consumed)
    if ell:
        i = ell[0]
        return key[:i] + fill + key[i + 1:]
    return key + fill


def _basic_plan(x: Tensor, key: tuple):
    """Slices per dim, and the final shape, for a key of ints, slices and None."""
    slices, shape, dim = [], [], 0
    xs = x._data.shape
    for k in key:
        if k is None:
            shape.append(1)
            continue
        n = xs[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            shape.append(len(range(start, stop, step)))
            # a negative step running through index 0 has no int stop (-1 means the end)
            slices.append(slice(start, None if stop < 0 else stop, step))
        else:
            i = int(k)
            if not -n <= i < n:
                raise EmberIndexError(f"index {i} is out of bounds for dimension {dim} with "
                                      f"size {n}")
            i %= n
            slices.append(slice(i, i + 1, 1))
        dim += 1
    return tuple(slices), tuple(shape)


def _full(slices, shape) -> bool:
    return all(s.start == 0 and s.step == 1 and s.stop == n for s, n in zip(slices, shape))


def _single_take(x: Tensor, key: tuple):
    """(axis, index tensor) when key is full slices plus one integer tensor, else None."""
    adv = [i for i, k in enumerate(key) if not _is_basic(k)]
    if len(adv) != 1 or any(k is None for k in key):
        return None
    i = adv[0]
    k = key[i]
    if isinstance(k, (list, tuple)):
        if not k or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                            for v in k):
            return None
        k = _index_tensor(k, x, x._data.shape[i])
    if type(k) is not Tensor or k._dtype.category != D.INT:
        return None
    if any(not (isinstance(s, slice) and s == slice(None)) for j, s in enumerate(key)
           if j != i):
        return None
    return i, k


def _index_tensor(k, x, size: int):
    """A list of Python ints as an index tensor on x's device, checked and wrapped on the
    host where its values are (a DataLoader's batch: checked on the device, each batch
    cost two reductions and two waits for it)."""
    values = np.asarray(k, dtype=np.int64)
    lo, hi = int(values.min()), int(values.max())
    _raise_out_of_bounds("take", lo, hi, size)
    if lo < 0:
        values = np.where(values < 0, values + size, values)
    return mark_in_range(tensor(values, dtype=D.int64, device=x._device), size)


def _host_key(key, x):
    """The key with every tensor on the host (for the general advanced-index path)."""
    out = []
    for k in key:
        if type(k) is Tensor:
            h = k.detach()._host()
            if k._dtype.category not in (D.INT, D.BOOL):
                raise EmberIndexError(f"tensors used as indices must be long, int, byte or "
                                      f"bool tensors; got {k._dtype.name}")
            out.append(h)
        elif isinstance(k, list):
            h = np.asarray(k)
            out.append(h.astype(np.int64) if h.size == 0 else h)     # x[[]]: no rows
        else:
            out.append(k)
    return tuple(out)


def _linear_index(x: Tensor, key: tuple) -> Tensor:
    """The flat positions x[key] selects, computed on the host with NumPy's rules (which
    are PyTorch's for these cases), as an int64 tensor on x's device."""
    positions = np.arange(x.numel(), dtype=np.int64).reshape(x._data.shape)
    try:
        lin = positions[_host_key(key, x)]
    except IndexError as exc:
        raise EmberIndexError(f"index {key!r} does not fit a tensor of shape "
                              f"{tuple(x.shape)}: {exc}") from None
    return from_host(c_order(lin), x._device)


def _key_item(k):
    """One entry of a key as torch reads it: a uint8 tensor is a (deprecated) mask, a
    float is refused."""
    if type(k) is Tensor and k._dtype is D.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        return k != 0
    if isinstance(k, (float, np.floating)):
        raise EmberIndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                              f"or byte Variables are valid indices (got {type(k).__name__})")
    return k


def _sequence_as_tuple(key: list) -> bool:
    """torch's legacy rule (treatSequenceAsTuple): a list shorter than 32 holding a
    sequence, slice, Ellipsis, None or tensor is a tuple of indices: x[[[0, 1]]] is
    x[[0, 1]], not x[tensor([[0, 1]])]."""
    return len(key) < 32 and any(
        k is None or k is Ellipsis or type(k) is Tensor or
        isinstance(k, (list, tuple, slice, np.ndarray)) for k in key)


def normalize_key(key):
    if type(key) is list and _sequence_as_tuple(key):
        key = tuple(key)
    if type(key) is tuple:
        return tuple(_key_item(k) for k in key)
    return _key_item(key)


def getitem(x: Tensor, key) -> Tensor:
    tk = type(key)
    if (tk is int or tk is slice) and x._data.shape:
        return _getitem_first_dim(x, key)
    if tk is tuple and not x.requires_grad and x._device.strided_views and \
            dispatch.unwatched():
        out = _basic_view(x, key)
        if out is not None:
            return out
    key = normalize_key(key)
    if type(key) is Tensor or isinstance(key, (list, np.ndarray, bool)) or (
            isinstance(key, tuple) and not all(_is_basic(k) for k in key)):
        key = _expand_key(x, key)
        one = _single_take(x, key)
        if one is not None:
            return take_along(x, one[1], one[0])
        lin = _linear_index(x, key)
        return run(take_op, x.reshape(-1), lin, axis=0)
    key = _expand_key(x, key)
    slices, shape = _basic_plan(x, key)
    if _full(slices, x._data.shape):
        out = x
    elif not x.requires_grad and x._device.strided_views and dispatch.unwatched():
        return _strided_view(x, slices, shape, (x, key))
    else:
        out = slice_view(x, slices)
        out = reshape(out, shape)
        # an in-place op on this view under autograd is replayed on x (see _rebase)
        out._set_meta("view_key", (x, key))
        return out
    return reshape(out, shape)


@functools.lru_cache(maxsize=256)
def _whole(shape: tuple) -> tuple:
    """slice(0, m, 1) for each dim m of shape: the dims a first-dim key leaves whole."""
    return tuple([slice(0, m, 1) for m in shape])


def _getitem_first_dim(x: Tensor, key) -> Tensor:
    """x[i] and x[a:b:c], the most common keys, without the general planning."""
    shape = x._data.shape
    n = shape[0]
    if type(key) is int:
        if not -n <= key < n:
            raise EmberIndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        i = key % n
        first, out_shape = slice(i, i + 1, 1), shape[1:]
    else:
        start, stop, step = key.indices(n)
        if (start, stop, step) == (0, n, 1):
            return x
        first = slice(start, None if stop < 0 else stop, step)
        out_shape = (len(range(start, stop, step)),) + shape[1:]
    index = (first,) + _whole(shape[1:])
    if not x.requires_grad and x._device.strided_views and dispatch.unwatched():
        return _strided_view(x, index, out_shape, (x, key))   # x[i]: 11 -> 4 us
    view = slice_view(x, index)
    if type(key) is int:
        # drops the leading size-1 dim: always a view, already validated (reshape()'s
        # shape resolution and its copied-view check have nothing to add)
        attrs = {"shape": out_shape}
        out = movement._view_of(dispatch.direct(movement.reshape_op, x._device, x._dtype,
                                                (view,), attrs),
                                view, movement.reshape_op, attrs)
    else:
        out = reshape(view, out_shape)
    out._set_meta("view_key", (x, (key,) + (slice(None),) * (len(shape) - 1)))
    return out


def _basic_view(x: Tensor, key: tuple):
    """x[i, j], x[i, a:b], x[a:b, c:d]: a key of Python ints and slices only, no longer than
    x's dims, selecting less than the whole of x, planned by _basic_plan and made by
    _strided_view as the general path does (same view, same key recorded, same errors),
    without its normalizing and expanding (x[i, j] 13 -> ~5 us); None for any other key."""
    shape = x._data.shape
    if len(key) > len(shape) or not all(type(k) is int or type(k) is slice for k in key):
        return None
    key = key + (slice(None),) * (len(shape) - len(key))
    slices, out_shape = _basic_plan(x, key)
    if _full(slices, shape):
        return None                       # all of x: the general path's reshape
    return _strided_view(x, slices, out_shape, (x, key))


_SLICE, _RESHAPE = movement.slice_op.name, movement.reshape_op.name


def _strided_view(x: Tensor, index, out_shape, view_key) -> Tensor:
    """x[index] (slices, one per dim) shaped out_shape (index's int dims dropped, None's
    added: size-1 dims only, so a view) on a backend with strided views, for a tensor
    autograd does not track while nothing watches ops: the slice and reshape kernels as
    dispatch would call them, without its layers (getitem's basic keys and x[i], x[a:b]:
    x[:, 1] 22 -> 14 us)."""
    device = x._device
    kernels = device._kernels or device.kernels
    native = kernels[_SLICE](x._data, index=index)
    if native.shape != out_shape:
        native = kernels[_RESHAPE](native, shape=out_shape)
    # marked as _view_of marks a view on such a backend (its base), with getitem's key
    out = wrap(native, device, x._dtype)
    meta = x._meta
    base = None if meta is None else meta.get("base")
    root = x if base is None else base
    out._meta = {"base": root, "view_key": view_key, "src": x, "step": (None, view_key[1]),
                 "made_from": root.grad_fn}
    return out


def regrow(x: Tensor):
    """x, a view, had its history made from its root's, and an in-place op has since
    given the root a new one: make x's history again from the root as it is now (the
    steps that made x from it: movement ops and getitem keys), as torch regenerates a
    view's grad_fn after its base was modified in place; returns x's new grad_fn.  Without
    this, x would carry the root's old history and its gradient would miss the write."""
    root = x._meta["base"]
    new = root
    for op, attrs in _steps(x):
        new = getitem(new, attrs) if op is None else run(op, new, **attrs)
    x.grad_fn, x.requires_grad = new.grad_fn, new.requires_grad
    x._meta["made_from"] = root.grad_fn
    return x.grad_fn


def slice_view(x, slices):
    return slice_(x, slices)


def setitem(x: Tensor, key, value) -> None:
    if type(value) is not Tensor:
        value = tensor(value, dtype=x._dtype, device=x._device)
    elif value._device is not x._device:
        value = value.to(x._device)
    if value._dtype is not x._dtype:
        value = value.to(x._dtype)
    recording = dispatch.is_grad_enabled() and (x.requires_grad or value.requires_grad)
    key = normalize_key(key)
    if isinstance(key, tuple) and all(_is_basic(k) for k in key) or _is_basic(key):
        key = _expand_key(x, key)
        slices, shape = _basic_plan(x, key)
        sliced_shape = tuple(len(range(*s.indices(n))) for s, n in zip(slices, x._data.shape))
        value = _fit(value, shape, sliced_shape)
        if recording:
            _rebase(x, slice_scatter(x, value, slices))
            return
        target = x if _full(slices, x._data.shape) else slice_view(x, slices)
        _assign(target, value)
        _bump(x)
        return
    key = _expand_key(x, key)
    lin = _linear_index(x, key)
    value = _fit(value, tuple(lin.shape), tuple(lin.shape)).reshape(-1)
    new = run(index_put_op, x.reshape(-1), lin.reshape(-1), value)
    if recording:
        _rebase(x, reshape(new, x._data.shape))
    else:
        _assign(x, new.reshape(x._data.shape))
        _bump(x)


def _fit(value: Tensor, shape, target_shape):
    try:
        broadcast_shapes("setitem", value._data.shape, shape)
    except ShapeError:
        raise ShapeError(f"setitem: a value of shape {tuple(value.shape)} cannot be assigned "
                         f"to an indexed region of shape {shape}") from None
    vs = value._data.shape
    while len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    if len(vs) > len(shape):
        raise ShapeError(f"setitem: a value of shape {tuple(value.shape)} cannot be assigned "
                         f"to an indexed region of shape {shape}")
    return value.reshape(vs).expand(shape).reshape(target_shape)


def _assign(target: Tensor, value) -> None:
    """Write value (a tensor or a scalar) into target's memory, through the assign kernel;
    where target is a view the backend made as a copy, the write goes to its base."""
    chain = target._get_meta("chain")
    if chain is not None:
        _write_back(target, chain, value)
        return
    dispatch.inplace(assign_op, target, value) or _no_assign(target)


def _no_assign(target):
    raise KernelNotFoundError(f"assign: the {target._device.type} backend has no 'assign' "
                              "kernel (a primitive every backend implements)")


def _bump(x: Tensor) -> None:
    """x was written: bump its family's version (tensor.bump_version: x, its base, the root
    it was detached from), and refresh the views of the base that a copying backend made
    (their copies would go stale)."""
    bump_version(x)
    base = x._get_meta("base")
    root = x if base is None else base
    views = root._get_meta("views")
    if views:
        _refresh(root, views)


_out.use_writer(_assign, _bump, elementwise.cast, layout.strides_of)   # what out= uses
_node.use_regrow(regrow)


def writes_through(x: Tensor) -> bool:
    """Whether writing x's own memory reaches every tensor sharing its elements: true on
    backends whose movement kernels make real views, and for any tensor that is no copied
    view of another."""
    return x._get_meta("chain") is None


# --- views on backends whose movement kernels copy (Backend.views) -----------------------
# Such a view keeps `chain`: the (op, attrs) steps from its base, which keeps weak
# references to its views.  A write into the view is scattered back through the chain into
# the base (slice_scatter for slices, the inverse permute/reshape), and after any write
# into the base its views are recomputed from it: no write is lost, either way.

def _derive(root: Tensor, chain) -> list:
    """The tensors root, step 1 of chain applied to it, ... (the last step left out)."""
    steps = [root]
    for op, attrs in chain[:-1]:
        steps.append(dispatch.direct(op, root._device, root._dtype, (steps[-1],), attrs))
    return steps


def _write_back(target: Tensor, chain, value) -> None:
    root = target._get_meta("base")
    with no_grad():
        if type(value) is not Tensor:
            value = full(target._data.shape, value, dtype=target._dtype,
                         device=target._device)
        elif value._data.shape != target._data.shape:
            value = value.expand(target._data.shape)
        if any(op is expand_op for op, _ in chain):
            _write_elements(target, root, value)
            return
        steps = _derive(root, chain)
        new = value
        for (op, attrs), prev in zip(reversed(chain), reversed(steps)):
            if op is slice_op:
                new = run(slice_scatter_op, prev, new, **attrs)
            elif op is permute_op:
                new = dispatch.direct(permute_op, prev._device, prev._dtype, (new,),
                                      {"dims": _inverse(attrs["dims"])})
            elif op is reshape_op:
                new = dispatch.direct(reshape_op, prev._device, prev._dtype, (new,),
                                      {"shape": prev._data.shape})
            else:
                raise EmberValueError(f"in-place write through a {op.name} view is not "
                                      "supported on this backend; clone() it first")
        _assign(root, new)


def _write_elements(target: Tensor, root: Tensor, value: Tensor) -> None:
    """A write through a copied view that expands: the root's elements the target's
    reach (its strides over the root, movement.layout_of) are written with index_put,
    when no two of the target's elements are one of the root's; otherwise it raises, as
    PyTorch and the strided backends' assign do (x.expand(2, 3)[1] = v writes x,
    x.expand(2, 3) += 1 raises)."""
    shape, strides, offset = movement.layout_of(target)
    positions = np.full(shape, offset, dtype=np.int64)
    for d, (n, stride) in enumerate(zip(shape, strides)):
        positions += (np.arange(n, dtype=np.int64) * stride).reshape(
            (n,) + (1,) * (len(shape) - d - 1))
    positions = positions.reshape(-1)
    if np.unique(positions).size != positions.size:
        raise EmberValueError(
            "in-place write into an expanded view: more than one element of the "
            "written-to tensor refers to a single element of its base; clone() it "
            "first (PyTorch refuses this too)")
    if not positions.size:
        return
    dev, dtype = root._device, root._dtype
    flat = dispatch.direct(reshape_op, dev, dtype, (root,), {"shape": (root.numel(),)})
    values = dispatch.direct(reshape_op, dev, dtype, (value,), {"shape": (positions.size,)})
    new = run(index_put_op, flat, from_host(positions, dev), values)
    _assign(root, dispatch.direct(reshape_op, dev, dtype, (new,), {"shape": root._data.shape}))


def _refresh(root: Tensor, views) -> None:
    """Recompute every live copied view of root from root's current values."""
    live = []
    with no_grad():
        for ref in views:
            view = ref()
            if view is None:
                continue
            live.append(ref)
            chain = view._get_meta("chain")
            steps = _derive(root, chain)
            op, attrs = chain[-1]
            view._data = dispatch.direct(op, root._device, root._dtype, (steps[-1],),
                                         attrs)._data
    views[:] = live


def _rebase(x: Tensor, new: Tensor) -> None:
    """x takes new's values and history: an in-place op under autograd."""
    if x.grad_fn is None and x.requires_grad:
        raise_leaf_inplace()
    view_key = x._get_meta("view_key")
    if view_key is not None and (view_key[0].requires_grad or new.requires_grad):
        # x = base[key]: write through base's history, then x is base[key] again
        base, key = view_key
        setitem(base, key, new)
        fresh = getitem(base, key)
        x._data, x.grad_fn, x.requires_grad = fresh._data, fresh.grad_fn, fresh.requires_grad
        x._version += 1
        x._meta["made_from"] = x._meta["base"].grad_fn       # made from the root as it is
        return
    base = x._get_meta("base")
    if base is not None and (base.requires_grad or new.requires_grad):
        _rebase_view(x, base, new)
        return
    _assign(x, new)
    _bump(x)
    x.grad_fn = new.grad_fn
    x.requires_grad = new.requires_grad


def _steps(x: Tensor) -> list:
    """The (op, attrs) steps that made the view x from its root, root first (op None: a
    getitem key)."""
    steps = []
    v = x
    while True:
        m = v._meta
        steps.append(m["step"])
        src = m["src"]
        if src._meta is None or "step" not in src._meta:
            return steps[::-1]
        v = src


def _put(t: Tensor, steps: list, value: Tensor) -> Tensor:
    """A copy of t with the part `steps` make of it replaced by value, with history (the
    out-of-place form of writing value through the view)."""
    if not steps:
        return value
    (op, attrs), rest = steps[0], steps[1:]
    inner = getitem(t, attrs) if op is None else run(op, t, **attrs)
    value = _put(inner, rest, value)
    if op is None:                                 # a getitem key: t with t[key] = value
        out = t.clone()
        setitem(out, attrs, value)
        return out
    if op is slice_op:
        return slice_scatter(t, value, attrs["index"])
    if op is reshape_op:
        return reshape(value, t._data.shape)
    if op is permute_op:
        return run(permute_op, value, dims=_inverse(attrs["dims"]))
    raise AutogradError(
        f"an in-place operation on a view made by {op.name} of a tensor that is part of an "
        "autograd graph: its elements repeat (or the view is not one ember can write back); "
        "use the out-of-place op on a clone instead")


def _rebase_view(x: Tensor, root: Tensor, new: Tensor) -> None:
    """x, a view of root, takes new's values and history, as torch's in-place op on a view
    of a tensor in the graph: root becomes root with x's part replaced by new (its history
    a scatter of new into root's), and x's history is made again from root's new one
    (regrow).  Views of root taken earlier pick up the new history when next used."""
    if root.grad_fn is None and root.requires_grad:
        raise AutogradError("a view of a leaf Variable that requires grad is being used "
                            "in an in-place operation; write into a clone, or into the "
                            "leaf under `with ember.no_grad():`")
    whole = _put(root, _steps(x), new)
    _assign(root, whole)
    _bump(x)
    root.grad_fn, root.requires_grad = whole.grad_fn, whole.requires_grad
    regrow(x)


def check_inplace_target(x: Tensor) -> None:
    """torch's refusals of an in-place write with grad mode on (the in-place methods,
    copy_ and setitem call this first): into a leaf that requires grad, or into a view of
    one taken before the leaf required it (the write would change the leaf behind
    autograd's back; views taken after require grad themselves and _rebase refuses)."""
    if x.requires_grad:
        if x.grad_fn is None:
            raise_leaf_inplace()
        return
    meta = x._meta
    if meta is not None:
        base = meta.get("base")
        if base is not None and base.requires_grad and base.grad_fn is None:
            raise AutogradError("a view of a leaf Variable that requires grad is being used "
                                "in an in-place operation; write into a clone, or into the "
                                "leaf under `with ember.no_grad():`")


def raise_leaf_inplace():
    raise AutogradError("a leaf Variable that requires grad is being used in an in-place "
                        "operation; wrap it in `with ember.no_grad():` or use the "
                        "out-of-place op")
