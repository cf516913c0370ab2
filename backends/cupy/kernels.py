"""CuPy's kernel table: array_api.kernels(cupy) plus the LIBRARY_SPECIFIC kernels, per device.

Signatures are those of ember.ops (see core/ops/index.py for the indexing ones).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import array_api


def table(cupy) -> dict[str, Callable[..., Any]]:
    """The device-independent table: the shared one with xp = cupy, plus CuPy's extras."""
    kernels = array_api.numpy_like(cupy)
    kernels.update(cupy_extras(cupy))
    return kernels


def cupy_extras(cupy) -> dict[str, Callable[..., Any]]:
    """The kernels array_api.LIBRARY_SPECIFIC names, written with CuPy and cupyx."""
    import cupyx
    from cupyx.scipy import special

    # dtypes CUDA's atomicAdd serves directly (cupyx.scatter_add raises for the others;
    # HIP has no float16 atomicAdd, so float16 always goes through float32)
    atomic = {cupy.dtype(t) for t in ("int32", "uint32", "uint64", "float32", "float64")}
    int64, uint64 = cupy.dtype("int64"), cupy.dtype("uint64")

    def add_at(out, where, src):
        """out[where] += src with repeated indices accumulating; returns the result."""
        dt = out.dtype
        if dt in atomic:
            cupyx.scatter_add(out, where, cupy.asarray(src, dtype=dt))
            return out
        if dt == int64:
            # two's-complement addition is the same bits as unsigned: no int64 atomicAdd needed
            src = cupy.asarray(src, dtype=int64)
            cupyx.scatter_add(out.view(uint64), where, src.view(uint64))
            return out
        wide = cupy.float32 if dt.kind == "f" else cupy.int32
        acc = out.astype(wide)
        cupyx.scatter_add(acc, where, cupy.asarray(src, dtype=wide))
        # bool: NumPy's add.at on bool is a logical or; narrow ints wrap like NumPy's
        return acc != 0 if dt.kind == "b" else acc.astype(dt)

    def erf(x):
        return special.erf(x).astype(x.dtype, copy=False)

    def index_add(x, index, src, *, axis):
        return add_at(x.copy(), (slice(None),) * axis + (index,), src)

    def scatter_add(x, index, src, *, axis):
        grids = tuple(index if d == axis else
                      cupy.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1))
                      for d, n in enumerate(index.shape))
        return add_at(x.copy(), grids, src)

    def index_put(x, index, values):
        out = x.copy()
        if not isinstance(values, cupy.ndarray) or values.ndim == 0 or index.size < 2:
            out[index] = values
            return out
        # CuPy leaves the winner of repeated indices undefined; ember's contract is "last
        # write wins", so keep only each index's last occurrence
        flat = cupy.where(index < 0, index + x.shape[0], index).reshape(-1)
        values = cupy.broadcast_to(values, index.shape).reshape(-1)
        order = cupy.arange(flat.size, dtype=cupy.int32 if flat.size < 2**31 else cupy.uint64)
        last = cupy.zeros(x.shape[0], dtype=order.dtype)    # only indexed slots are read
        cupyx.scatter_max(last, flat, order)
        keep = last[flat] == order
        out[flat[keep]] = values[keep]
        return out

    def assign(dst, src):
        dst[...] = src

    import numpy as np

    def on_host(kernel):
        # CuPy has no geev (general eigenproblem): NumPy's LAPACK on a host copy
        return lambda a: cupy.asarray(kernel(cupy.asnumpy(a)))

    return {"erf": erf, "index_add": index_add, "scatter_add": scatter_add,
            "index_put": index_put, "assign": assign,
            **{name: on_host(k) for name, k in array_api.eig_kernels(np).items()}}


def on_device(kernels: dict, device) -> dict:
    """The same table, each kernel run with `device` (a cupy.cuda.Device) current.

    CuPy allocates and launches on the current device; without this, an op on cuda:1
    issued while cuda:0 is current would put its output on cuda:0.
    """
    def bind(fn):
        def kernel(*args, **kwargs):
            with device:
                return fn(*args, **kwargs)
        kernel.__name__ = getattr(fn, "__name__", "kernel")
        return kernel
    return {name: bind(fn) for name, fn in kernels.items()}
