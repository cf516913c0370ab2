"""Movement primitives: reshape, permute, expand, slice (with steps), slice_scatter, flip,
pad, concatenate, contiguous.

Kernel signatures (shapes fully resolved, dims non-negative):
reshape(x, *, shape); permute(x, *, dims); expand(x, *, shape); slice(x, *, index) where
index is a tuple of one builtin slice per dim with concrete start/stop/step (step may be
negative, and then stop may be None: the slice runs through index 0);
slice_scatter(base, src, *, index) -> a copy of base with base[index] = src;
flip(x, *, axes); pad(x, *, pads, value) with pads a tuple of (before, after) per dim;
concatenate(*xs, axis); contiguous(x) -> a copy in row-major order.
"""
from __future__ import annotations

import weakref

from .. import amp_policy
from ..amp_policy import active as _amp
from ..backend import optional
from ..dispatch import direct, run
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..signatures import numpy_names
from ..tensor import Tensor
from . import _out
from ._op import declare, rule_first, rule_same, shape_attr, shape_first
from ._util import as_shape, norm_dim, norm_dims, resolve_reshape, spread_or_keyword
from .creation import from_host

__all__ = ["cat", "chunk", "contiguous", "expand", "flatten", "flip", "movedim", "pad", "permute",
           "reshape", "split", "squeeze", "stack", "transpose", "unsqueeze"]


_index_select = None     # ops/index.py hands it down: pad's non-constant modes gather rows


def use_index_select(fn) -> None:
    global _index_select
    _index_select = fn


def _view_of(out: Tensor, x: Tensor, op, attrs) -> Tensor:
    """Mark out as a view of x's base: in-place writes through it bump the base's version,
    and on a backend whose movement kernels may return copies (Backend.views), the view
    remembers how it was made from the base, so that writes through it reach the base and
    writes into the base reach it (index.write)."""
    base = x._get_meta("base")
    root = x if base is None else base
    out._set_meta("base", root)
    # how out was made (from x, by op): index.regrow makes its history again from the
    # root's after an in-place op gave the root a new one (torch regenerates a view's
    # grad_fn when its base's history changed)
    m = out._meta
    m["src"], m["step"], m["made_from"] = x, (op, attrs), root.grad_fn
    if not x._device.strided_views:
        track_view(out, x, root, op, attrs)
    return out


def track_view(out: Tensor, x: Tensor, root: Tensor, op, attrs) -> None:
    chain = x._get_meta("chain") or ()
    out._set_meta("chain", chain + ((op, attrs),))
    views = root._get_meta("views")
    if views is None:
        views = []
        root._set_meta("views", views)
    views[:] = [r for r in views if r() is not None]
    views.append(weakref.ref(out))


def _row_major(shape) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def view_strides(shape, strides, new) -> tuple | None:
    """The strides of a reshape of (shape, strides) to `new` as a view of the same
    elements, or None where no view can be (the reshape copies).  PyTorch's rule
    (aten computeStride): the dims folded together must be contiguous with each other."""
    if not shape:
        return (1,) * len(new)
    numel = 1
    for n in shape:
        numel *= n
    if numel == 0:
        return _row_major(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    base, tensor_numel, view_numel = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(out) if view_d == -1 else None


def layout_of(x: Tensor) -> tuple:
    """(shape, strides, offset) of x in elements of its base's memory, as PyTorch would
    have them: a copied view's (from its chain, see track_view; worked out when first
    asked), a tensor of its own row-major."""
    layout = x._get_meta("layout")
    if layout is None:
        chain = x._get_meta("chain")
        shape = x._get_meta("base")._data.shape if chain else x._data.shape
        layout = shape, _row_major(shape), 0
        for op, attrs in chain or ():
            layout = step_layout(layout, op, attrs)     # a chain holds views only
        if chain:
            x._set_meta("layout", layout)
    return layout


def step_layout(layout, op, attrs) -> tuple | None:
    """The layout of op (one movement step) applied to a tensor laid out as `layout`;
    None where the result is no view (a reshape that strides cannot express)."""
    shape, strides, offset = layout
    if op is slice_op:
        new_shape, new_strides = [], []
        for s, n, st in zip(attrs["index"], shape, strides):
            start, stop, step = s.indices(n)
            m = len(range(start, stop, step))
            if m:
                offset += start * st
            new_shape.append(m)
            new_strides.append(st * step)
        return tuple(new_shape), tuple(new_strides), offset
    if op is permute_op:
        dims = attrs["dims"]
        return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims), offset
    if op is expand_op:
        new = attrs["shape"]
        lead = len(new) - len(shape)
        return new, (0,) * lead + tuple(0 if n == 1 and m != 1 else st for n, m, st in
                                        zip(shape, new[lead:], strides)), offset
    if op is reshape_op:
        strides = view_strides(shape, strides, attrs["shape"])
        return None if strides is None else (attrs["shape"], strides, offset)
    return None


def _slice_shape(inputs, attrs):
    return tuple(len(range(*s.indices(n))) for s, n in zip(attrs["index"],
                                                           inputs[0]._data.shape))


def _pad_shape(inputs, attrs):
    return tuple(n + lo + hi for n, (lo, hi) in zip(inputs[0]._data.shape, attrs["pads"]))


def _concat_shape(inputs, attrs):
    axis = attrs["axis"]
    shape = list(inputs[0]._data.shape)
    shape[axis] = sum(x._data.shape[axis] for x in inputs)
    return tuple(shape)


def _inverse(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


_VIEW = " (a view of x where the backend can, see Backend.views)"
reshape_op = declare("reshape", "movement", rule_first, sig="x, *, shape: tuple[int]",
                     shape=shape_attr, doc="x's elements in row-major order, in a new shape"
                     + _VIEW,
                     vjp=lambda g, out, x, *, shape: (g.reshape(x._data.shape),), uses=())
permute_op = declare("permute", "movement", rule_first, sig="x, *, dims: tuple[int]",
                     shape=lambda inputs, attrs: tuple(inputs[0]._data.shape[d]
                                                       for d in attrs["dims"]),
                     doc="x with its dims reordered" + _VIEW,
                     vjp=lambda g, out, x, *, dims: (g.permute(_inverse(dims)),), uses=())
# the engine sums the gradient back to x's shape: expand's rule is the identity
expand_op = declare("expand", "movement", rule_first, sig="x, *, shape: tuple[int]",
                    shape=shape_attr, doc="x broadcast to shape (size-1 dims repeat)" + _VIEW,
                    vjp=lambda g, out, x, *, shape: (g,), uses=())
slice_op = declare("slice", "movement", rule_first, sig="x, *, index: tuple[slice]",
                   shape=_slice_shape,
                   doc="x[index]: one builtin slice per dim with int start/step (step may be "
                       "negative, and then stop may be None)" + _VIEW,
                   vjp=lambda g, out, x, *, index: (
                       slice_scatter(g.new_zeros(x._data.shape), g, index),), uses=())
slice_scatter_op = declare(
    "slice_scatter", "movement", rule_first, promote=(0, 1),
    sig="base, src: array|scalar, *, index: tuple[slice]", shape=shape_first,
    doc="a copy of base with base[index] = src (src broadcasts to the sliced shape)",
    vjp=lambda g, out, base, src, *, index: (
        slice_scatter(g, g.new_zeros(src._data.shape), index) if type(base) is Tensor
        else None, run(slice_op, g, index=index)), uses=())
flip_op = declare("flip", "movement", rule_first, sig="x, *, axes: tuple[int]",
                  shape=shape_first, doc="a copy of x reversed along axes (never a view)",
                  vjp=lambda g, out, x, *, axes: (run(flip_op, g, axes=axes),), uses=())
pad_op = declare("pad", "movement", rule_first,
                 sig="x, *, pads: tuple[tuple[int, int]], value: scalar", shape=_pad_shape,
                 doc="x with (before, after) elements of value added around each dim",
                 vjp=lambda g, out, x, *, pads, value: (run(slice_op, g, index=tuple(
                     slice(lo, lo + n, 1) for (lo, hi), n in zip(pads, x._data.shape))),), uses=())


def _concat_vjp(g, out, *xs, axis):
    grads, start = [], 0
    for x in xs:
        n = x._data.shape[axis]
        index = tuple(slice(start, start + n, 1) if i == axis else slice(0, s, 1)
                      for i, s in enumerate(g._data.shape))
        grads.append(run(slice_op, g, index=index))
        start += n
    return tuple(grads)


concatenate_op = declare("concatenate", "movement", rule_same, sig="*xs, axis: int",
                         shape=_concat_shape, vjp=_concat_vjp, uses=(),
                         doc="the inputs joined along axis (same shape elsewhere)")
contiguous_op = declare("contiguous", "movement", rule_first, sig="x", shape=shape_first,
                        doc="a row-major copy of x (new memory, whatever x's layout)",
                        vjp=lambda g, out, x: (g,), uses=())


_NOATTRS: dict = {}
_SWAP = ((1, 0), (-1, -2), (1, -2), (-1, 0))
_T = {"dims": (1, 0)}


def reshape(input: Tensor, *sizes, shape=None) -> Tensor:
    """``input`` with a new shape of the same number of elements (a view where possible);
    one dim may be -1.

    PyTorch
    -------
    ``torch.reshape``
    """
    if shape is not None:
        sizes = spread_or_keyword(sizes, shape, "reshape", "shape")
    return reshape_to(input, resolve_reshape("reshape", input._data.shape,
                                             as_shape(sizes, "reshape")))


def reshape_to(input: Tensor, new: tuple) -> Tensor:
    """reshape to `new`, a tuple of ints already resolved against input's shape (no -1; the
    same number of elements): view(), flatten, squeeze and unsqueeze come here directly."""
    if new == input._data.shape:
        return input
    # validated by the caller: the rest of the dispatcher's checks have nothing to add
    attrs = {"shape": new}
    out = direct(reshape_op, input._device, input._dtype, (input,), attrs)
    meta = input._meta                  # a "chain": a view a copying backend made (track_view)
    if meta is not None and "chain" in meta and [n for n in new if n != 1] != [
            n for n in input._data.shape if n != 1]:
        # a copied view reshaped beyond adding or dropping size-1 dims (always a view):
        # where no strides reach its elements as one view, new memory, as PyTorch's
        # reshape of a non-contiguous tensor (the backend's kernel copied them)
        old, strides, _ = layout_of(input)
        if view_strides(old, strides, new) is None:
            if optional(input._device.backend, "views") != "none":
                # "positive-steps": the kernel may have made a view of a copy the backend
                # made earlier in the chain (a negative step), shared with other tensors
                out = direct(contiguous_op, input._device, input._dtype, (out,), _NOATTRS)
            return out
    return _view_of(out, input, reshape_op, attrs)


def permute(input: Tensor, *order, dims=None) -> Tensor:
    """A view of ``input`` with its dims reordered as ``dims``.

    PyTorch
    -------
    ``torch.permute``
    """
    dims = order if dims is None else spread_or_keyword(order, dims, "permute", "dims")
    if len(dims) == 1 and type(dims[0]) is tuple:
        dims = dims[0]
    if len(dims) == 2 and len(input._data.shape) == 2 and dims in _SWAP:  # .T, .mT of matrices
        return _view_of(direct(permute_op, input._device, input._dtype, (input,), _T), input,
                        permute_op, _T)
    dims = as_shape(dims, "permute")
    if len(dims) != input.ndim:
        raise ShapeError(f"permute: expected {input.ndim} dims for a tensor of shape "
                         f"{tuple(input.shape)}, got {dims}")
    nd = tuple(norm_dim(d, input.ndim, "permute") for d in dims)
    if sorted(nd) != list(range(input.ndim)):
        raise ShapeError(f"permute: dims {dims} repeat a dimension; expected a permutation "
                         f"of 0..{input.ndim - 1}")
    if nd == tuple(range(input.ndim)):
        return input
    attrs = {"dims": nd}
    return _view_of(direct(permute_op, input._device, input._dtype, (input,), attrs), input,
                    permute_op, attrs)


def expand(input: Tensor, *sizes, size=None) -> Tensor:
    """A view of ``input`` broadcast to ``shape`` without copying; -1 keeps a dim's size.

    PyTorch
    -------
    ``torch.Tensor.expand`` (a method in PyTorch; ember also has it as ``ember.expand``).
    """
    shape = as_shape(spread_or_keyword(sizes, size, "expand", "size"), "expand")
    old = input._data.shape
    if len(shape) < len(old):
        raise ShapeError(f"expand: the target shape {shape} has fewer dims than the tensor "
                         f"{tuple(old)}")
    lead = len(shape) - len(old)
    new = []
    for i, s in enumerate(shape):
        cur = old[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise ShapeError(f"expand: -1 is not allowed for the new leading dim {i}")
            s = cur
        if cur != 1 and s != cur:
            raise ShapeError(
                f"expand: the expanded size {s} must match the existing size {cur} at "
                f"non-singleton dimension {i}; target {shape}, tensor {tuple(old)}")
        new.append(s)
    new = tuple(new)
    if new == old:
        return input
    attrs = {"shape": new}
    return _view_of(direct(expand_op, input._device, input._dtype, (input,), attrs), input,
                    expand_op, attrs)


def slice_(x: Tensor, index: tuple) -> Tensor:
    """x[index] for a tuple of concrete slices, one per dim (a view where the backend can)."""
    attrs = {"index": index}
    return _view_of(direct(slice_op, x._device, x._dtype, (x,), attrs), x, slice_op, attrs)


def slice_scatter(base: Tensor, src: Tensor, index: tuple) -> Tensor:
    """A copy of ``base`` with ``src`` written at ``base[index]`` (``index`` a tuple of slices
    and ints).

    PyTorch
    -------
    ``torch.slice_scatter``, which takes one ``dim``/``start``/``end``/``step``; ember's
    takes a whole index tuple.
    """
    return run(slice_scatter_op, base, src, index=index)


@numpy_names
def flip(input: Tensor, dims) -> Tensor:
    """``input`` with the order of elements reversed along ``dims``.

    PyTorch
    -------
    ``torch.flip``
    """
    axes = norm_dims(dims, input.ndim, "flip")
    if not axes:
        return run(contiguous_op, input)          # still new memory, as PyTorch's flip
    return run(flip_op, input, axes=axes)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """torch.nn.functional.pad: pad lists (left, right) pairs from the last dim backwards.

    reflect, replicate and circular gather along each padded dim with an index made from
    the sizes alone (index_select: every device, and its gradient sums where rows repeat).

    PyTorch
    -------
    ``torch.nn.functional.pad``
    """
    if _amp and amp_policy.on("pad"):      # autocast (amp_policy.py)
        return amp_policy.call("pad", _pad, input, pad, mode, value)
    if mode not in _PAD_MODES:
        raise EmberValueError(f"pad: mode {mode!r} is not supported; expected one of "
                              f"{', '.join(_PAD_MODES)}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ShapeError(f"pad: expected an even number of pads, at most 2 per dim "
                         f"({2 * input.ndim} for this tensor), got {len(pad)}")
    pairs = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pairs[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if all(p == (0, 0) for p in pairs):
        return run(contiguous_op, input)          # a new tensor, as PyTorch's pad
    for dim, (lo, hi) in enumerate(pairs):    # negative pads crop (torch's)
        if input._data.shape[dim] + lo + hi < 0 or (
                (lo < 0 or hi < 0) and input._data.shape[dim] + lo + hi == 0
                and mode != "constant"):
            raise ShapeError(f"pad: dim {dim} of size {input._data.shape[dim]} padded by "
                             f"({lo}, {hi}) would have a negative size")
    if mode == "constant":
        grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pairs)
        out = input if all(g == (0, 0) for g in grow) else run(
            pad_op, input, pads=grow, value=0.0 if value is None else value)
        crop = tuple(slice(-min(lo, 0), out._data.shape[d] + min(hi, 0))
                     for d, (lo, hi) in enumerate(pairs))
        return run(contiguous_op, run(slice_op, out, index=crop))
    if value:
        raise EmberValueError(f"pad: mode {mode!r} takes no value (got {value}); use "
                              "mode='constant' to pad with a number")
    out = input
    for dim, (lo, hi) in enumerate(pairs):
        if mode == "circular" and (lo < 0 or hi < 0):
            # torch's circular pad wraps around what is left after the crop
            n = out._data.shape[dim]
            out = run(slice_op, out, index=(slice(None),) * dim + (
                slice(-min(lo, 0), n + min(hi, 0)),) + (slice(None),) * (input.ndim - dim - 1))
            lo, hi = max(lo, 0), max(hi, 0)
        if lo or hi:
            out = _index_select(out, dim, _pad_index(mode, out._data.shape[dim], lo, hi,
                                                    input._device))
    return out if out._get_meta("base") is None else run(contiguous_op, out)


_pad = pad      # what pad hands autocast (its own name is taken by its argument)


def _pad_index(mode, n, lo, hi, device):
    """The source position of every padded position along one dim."""
    import numpy as np

    if mode == "reflect" and (lo >= n or hi >= n):
        raise EmberValueError(f"pad: reflect padding ({lo}, {hi}) must be smaller than the "
                              f"dim's size {n}")
    if mode == "circular" and (lo > n or hi > n):
        raise EmberValueError(f"pad: circular padding ({lo}, {hi}) must be at most the dim's "
                              f"size {n}")
    if n == 0:
        raise EmberValueError(f"pad: mode {mode!r} cannot pad an empty dim")
    where = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1) if n > 1 else 1
        where = np.abs(where) % period
        where = np.where(where >= n, period - where, where)
    elif mode == "replicate":
        where = np.clip(where, 0, n - 1)
    else:
        where = where % n
    return from_host(where.astype(np.int64), device)


@numpy_names
def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """The tensors joined along the existing dim ``dim``; their other dims must match.

    Examples
    --------
    >>> import ember
    >>> ember.cat([ember.zeros(2, 3), ember.ones(1, 3)]).shape
    ember.Size([3, 3])

    PyTorch
    -------
    ``torch.cat``
    """
    if type(tensors) is Tensor or not isinstance(tensors, (list, tuple)):
        raise EmberTypeError(f"cat(): argument 'tensors' must be a tuple or list of Tensors, "
                             f"not {type(tensors).__name__}; wrap it: cat([t, ...])")
    tensors = [t for t in tensors]
    if not tensors:
        raise EmberValueError("cat: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if type(t) is not Tensor:
            raise EmberTypeError(f"cat(): expected a sequence of Tensors, but element {i} is "
                                 f"{type(t).__name__}")
    if out is not None:
        return _out.write_out("cat", cat(tensors, dim), out, tensors)
    # PyTorch skips 1-D empty tensors in cat (legacy behaviour users rely on)
    kept = [t for t in tensors if t._data.shape != (0,)] or tensors[:1]
    ref = kept[0]
    shape = ref._data.shape
    axis = norm_dim(dim, len(shape), "cat")
    head, tail = shape[:axis], shape[axis + 1:]
    for i, t in enumerate(kept):
        s = t._data.shape
        if len(s) != len(shape) or s[:axis] != head or s[axis + 1:] != tail:
            raise ShapeError(
                f"cat: sizes of tensors must match except in dimension {axis}; tensor 0 has "
                f"shape {tuple(ref.shape)} and tensor {i} has shape {tuple(t.shape)}")
    return run(concatenate_op, *kept, axis=axis)      # one tensor too: new memory


def contiguous(x: Tensor) -> Tensor:
    """``x`` in the backend's row-major layout (``x`` itself when it already is).

    PyTorch
    -------
    ``torch.Tensor.contiguous`` (a method in PyTorch).
    """
    return run(contiguous_op, x)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``input`` with the dims ``start_dim`` .. ``end_dim`` merged into one.

    PyTorch
    -------
    ``torch.flatten``
    """
    if input.ndim == 0:
        return input.reshape(1)
    s = norm_dim(start_dim, input.ndim, "flatten")
    e = norm_dim(end_dim, input.ndim, "flatten")
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = input._data.shape
    n = 1
    for v in shape[s:e + 1]:
        n *= v
    return reshape_to(input, shape[:s] + (n,) + shape[e + 1:])


@numpy_names
def squeeze(input: Tensor, dim=None) -> Tensor:
    """``input`` without its size-1 dims (or only ``dim``, which may be a tuple).

    PyTorch
    -------
    ``torch.squeeze``
    """
    shape = input._data.shape
    if dim is None:
        return reshape_to(input, tuple(n for n in shape if n != 1))
    dims = norm_dims(dim, input.ndim, "squeeze")
    return reshape_to(input, tuple(n for i, n in enumerate(shape)
                                   if not (i in dims and n == 1)))


@numpy_names
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view of ``input`` with a new size-1 dim at ``dim``.

    PyTorch
    -------
    ``torch.unsqueeze``
    """
    d = norm_dim(dim, input.ndim + 1, "unsqueeze")
    shape = input._data.shape
    return reshape_to(input, shape[:d] + (1,) + shape[d:])


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view of ``input`` with dims ``dim0`` and ``dim1`` swapped.

    PyTorch
    -------
    ``torch.transpose``
    """
    if input.ndim == 0:
        return input
    if input.ndim == 2 and dim0 != dim1 and -2 <= dim0 < 2 and -2 <= dim1 < 2:
        return permute(input, (1, 0))
    a, b = norm_dim(dim0, input.ndim, "transpose"), norm_dim(dim1, input.ndim, "transpose")
    dims = list(range(input.ndim))
    dims[a], dims[b] = dims[b], dims[a]
    return permute(input, dims)


@numpy_names
def stack(tensors, dim: int = 0) -> Tensor:
    """The tensors (all of one shape) joined along a new dim ``dim``.

    PyTorch
    -------
    ``torch.stack``
    """
    if type(tensors) is Tensor or not isinstance(tensors, (list, tuple)):
        raise EmberTypeError(f"stack(): argument 'tensors' must be a tuple or list of "
                             f"Tensors, not {type(tensors).__name__}; wrap it: stack([t, ...])")
    tensors = list(tensors)
    if not tensors:
        raise EmberValueError("stack: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if type(t) is not Tensor:
            raise EmberTypeError(f"stack(): expected a sequence of Tensors, but element {i} is "
                                 f"{type(t).__name__}")
    shape = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise ShapeError(f"stack: expects each tensor to be equal size, but got "
                             f"{tuple(shape)} at entry 0 and {tuple(t.shape)} at entry {i}")
    d = norm_dim(dim, len(shape) + 1, "stack")
    new = shape[:d] + (1,) + shape[d:]               # each one unsqueezed at d, checked above
    return cat([reshape_to(t, new) for t in tensors], d)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0):
    """``tensor`` split along ``dim`` into pieces of ``split_size_or_sections`` elements (an int) or
    of the given sizes (a list): a tuple of views.

    PyTorch
    -------
    ``torch.split``
    """
    axis = norm_dim(dim, tensor.ndim, "split")
    n = tensor._data.shape[axis]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0:
            raise EmberValueError(f"split: split_size must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
        if n == 0:
            sizes = [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ShapeError(f"split: sections {sizes} sum to {sum(sizes)} but dim {axis} "
                             f"has size {n}")
    out, start = [], 0
    for s in sizes:
        index = tuple(slice(start, start + s, 1) if i == axis else slice(0, m, 1)
                      for i, m in enumerate(tensor._data.shape))
        out.append(slice_(tensor, index))
        start += s
    return tuple(out)


@numpy_names
def chunk(input: Tensor, chunks: int, dim: int = 0):
    """``input`` split into ``chunks`` pieces along ``dim`` (the last may be smaller): a tuple of
    views.

    PyTorch
    -------
    ``torch.chunk``
    """
    if chunks <= 0:
        raise EmberValueError(f"chunk: chunks must be positive, got {chunks}")
    n = input._data.shape[norm_dim(dim, input.ndim, "chunk")]
    size = max(1, -(-n // chunks))
    return split(input, size, dim)


def movedim(input: Tensor, source, destination) -> Tensor:
    """x with dims `source` (an int or a sequence) moved to `destination`, the others
    keeping their order (torch.movedim).

    PyTorch
    -------
    ``torch.movedim``
    """
    if isinstance(source, int) and isinstance(destination, int):
        s = norm_dim(source, input.ndim, "movedim")
        d = norm_dim(destination, input.ndim, "movedim")
        dims = [i for i in range(input.ndim) if i != s]
        dims.insert(d, s)
        return permute(input, dims)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ShapeError(f"movedim: source and destination need as many dims, got {len(src)} "
                         f"({src}) and {len(dst)} ({dst})")
    src = [norm_dim(s, input.ndim, "movedim") for s in src]
    dst = [norm_dim(d, input.ndim, "movedim") for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"movedim: repeated dim in source {src} or destination {dst}")
    order = [None] * input.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(input.ndim) if i not in src)
    return permute(input, [o if o is not None else next(rest) for o in order])


