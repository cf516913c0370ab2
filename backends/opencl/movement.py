"""Movement: reshape, permute, expand and slice are views (new shape/strides/offset over the
same buffer); flip, pad, concatenate and slice_scatter copy through the elementwise copy."""
from __future__ import annotations

from .elementwise import assign, contiguous, full
from .runtime import CLArray, contiguous_strides


def reshape(x: CLArray, *, shape) -> CLArray:
    if not x.is_contiguous:
        x = contiguous(x)
    return x.view(shape, contiguous_strides(shape), x.offset)


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

