"""Movement: reshape, permute, expand and slice are views (new shape/strides/offset over the
same buffer); flip, pad, concatenate and slice_scatter copy through the elementwise copy."""
from __future__ import annotations

from .copies import assign, contiguous
from .elementwise import full
from .runtime import CLArray, contiguous_strides


def reshape(x: CLArray, *, shape) -> CLArray:
    """A view wherever the strides allow one (NumPy's rule: x[1:][::-2][:, 2] is a view,
    and a write through it must reach x), else a contiguous copy."""
    strides = contiguous_strides(shape) if x.is_contiguous else view_strides(
        x.shape, x.strides, shape)
    if strides is None:
        x = contiguous(x)
        strides = contiguous_strides(shape)
    return x.view(shape, strides, x.offset)


def view_strides(shape, strides, new_shape):
    """Strides under which new_shape reads the same elements in row-major order, or None
    (NumPy's attempt_nocopy_reshape): each group of old dims that merges or splits into new
    dims must be contiguous within itself."""
    old = [(n, st) for n, st in zip(shape, strides) if n != 1]
    if not old or 0 in new_shape:
        return contiguous_strides(new_shape)
    out = [0] * len(new_shape)
    oi = ni = 0
    while oi < len(old) and ni < len(new_shape):
        oj, nj = oi + 1, ni + 1
        op, np_ = old[oi][0], new_shape[ni]
        while op != np_:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(oi, oj - 1)):
            return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new_shape[k]
        oi, ni = oj, nj
    return tuple(out)


def permute(x: CLArray, *, dims) -> CLArray:
    return x.view(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims), x.offset)


def expand(x: CLArray, *, shape) -> CLArray:
    lead = len(shape) - x.ndim
    strides = tuple(0 if i < lead or (x.shape[i - lead] == 1 and n != 1)
                    else x.strides[i - lead] for i, n in enumerate(shape))
    return x.view(tuple(shape), strides, x.offset)


def slice_view(x: CLArray, index) -> CLArray:
    offset, shape, strides = x.offset, [], []
    for s, n, st in zip(index, x.shape, x.strides):
        start, stop, step = s.indices(n)
        length = len(range(start, stop, step))
        if length:
            offset += start * st
        shape.append(length)
        strides.append(st * step)
    return x.view(tuple(shape), tuple(strides), offset)


def flip(x: CLArray, *, axes) -> CLArray:
    # a negative-stride view, copied: PyTorch's flip returns new storage
    index = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))
    return contiguous(slice_view(x, index))


def pad(x: CLArray, *, pads, value) -> CLArray:
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pads))
    out = full(x.runtime, shape=shape, value=value, dtype=x.dtype)
    inner = tuple(slice(lo, lo + n) for n, (lo, hi) in zip(x.shape, pads))
    assign(slice_view(out, inner), x)
    return out


def concatenate(*xs: CLArray, axis: int) -> CLArray:
    first = xs[0]
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = first.runtime.empty(tuple(shape), first.dtype)
    start = 0
    for x in xs:
        n = x.shape[axis]
        index = tuple(slice(start, start + n) if d == axis else slice(None)
                      for d in range(len(shape)))
        assign(slice_view(out, index), x)
        start += n
    return out


def slice_scatter(base: CLArray, src, *, index) -> CLArray:
    out = contiguous(base)
    assign(slice_view(out, index), src)
    return out


def table() -> dict:
    return {"reshape": reshape, "permute": permute, "expand": expand, "slice": slice_view,
            "flip": flip, "pad": pad, "concatenate": concatenate,
            "slice_scatter": slice_scatter}

