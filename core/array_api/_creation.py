"""Creation functions of the array API standard, on any ember device."""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .. import ops
from ..device import as_device
from ..errors import EmberValueError
from ..tensor import Tensor
from ._dtypes import as_dtype, need


def _dtype(dtype):
    return None if dtype is None else as_dtype(dtype)


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def asarray(obj, /, *, dtype=None, device=None, copy: bool | None = None) -> Tensor:
    """An ember tensor from a tensor, a NumPy array, a DLPack producer, a buffer, a Python
    scalar or nested sequences; copy=None shares memory where it can, False insists.

    PyTorch
    -------
    ``torch.asarray``
    """
    dtype = _dtype(dtype)
    if type(obj) is Tensor:
        out = obj.to(device=device or obj._device, dtype=dtype or obj._dtype)
        if out is not obj and copy is False:
            raise EmberValueError(
                f"ember.array_api.asarray: copy=False, but moving a {obj._dtype.name} tensor on "
                f"{obj._device} to {dtype or obj._dtype} on {device or obj._device} needs a "
                "copy; pass copy=None to allow it")
        return out.clone() if copy and out is obj else out
    if not isinstance(obj, (np.ndarray, np.generic, list, tuple, int, float, bool)) and \
            hasattr(obj, "__dlpack__"):
        from ..utils.dlpack import from_dlpack
        return asarray(from_dlpack(obj, copy=copy), dtype=dtype, device=device,
                       copy=False if copy is False else None)
    dev = as_device(device)
    if isinstance(obj, (np.ndarray, np.generic)) or (
            not isinstance(obj, (list, tuple, int, float)) and _has_buffer(obj)):
        array = np.asarray(obj)
        if dtype is None and array.dtype.kind == "f" and array.dtype.itemsize > 8:
            raise EmberValueError("ember.array_api.asarray: long double arrays have no ember "
                                  "dtype; convert them to float64 first")
        shared = dtype is None or array.dtype == dtype.np
        if copy is False and (dev.type != "cpu" or not shared):
            raise EmberValueError(
                f"ember.array_api.asarray: copy=False, but a {array.dtype} NumPy array on "
                f"the host cannot become a {(dtype or D.from_numpy_dtype(array.dtype)).name} "
                f"tensor on {dev} without a copy; pass copy=None")
        if dtype is not None:
            array = array.astype(dtype.np, copy=False)
        if dev.type == "cpu" and not copy:
            return ops.from_numpy(array if isinstance(array, np.ndarray) else np.asarray(array))
        return ops.tensor(array, device=dev)
    if copy is False:
        raise EmberValueError(f"ember.array_api.asarray: copy=False, but a "
                              f"{type(obj).__name__} must be copied into a new tensor; pass "
                              "copy=None")
    return ops.tensor(obj, dtype=dtype, device=dev)


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Evenly spaced values in [start, stop); integers unless a float is given.

    PyTorch
    -------
    ``torch.arange``
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise EmberValueError("ember.array_api.arange: step must be nonzero")
    if (stop - start) * step <= 0:           # the standard's empty range, not an error
        d = _dtype(dtype) or (D.get_default_dtype() if any(
            isinstance(v, float) for v in (start, stop, step)) else D.int64)
        return ops.zeros(0, dtype=d, device=device)
    return ops.arange(start, stop, step, dtype=_dtype(dtype), device=device)


def empty(shape, *, dtype=None, device=None) -> Tensor:
    """An array of ``shape`` filled with zeros, never uninitialised memory (the array API
    standard's ``empty``).

    PyTorch
    -------
    ``torch.empty``; ember's values are zeros rather than uninitialised memory.
    """
    return ops.empty(_shape(shape), dtype=_dtype(dtype), device=device)


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    """An array of ``shape`` filled with zeros (the array API standard's ``zeros``).

    PyTorch
    -------
    ``torch.zeros``
    """
    return ops.zeros(_shape(shape), dtype=_dtype(dtype), device=device)


def ones(shape, *, dtype=None, device=None) -> Tensor:
    """An array of ``shape`` filled with ones (the array API standard's ``ones``).

    PyTorch
    -------
    ``torch.ones``
    """
    return ops.ones(_shape(shape), dtype=_dtype(dtype), device=device)


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    """An array of ``shape`` filled with ``fill_value`` (the array API standard's ``full``).

    PyTorch
    -------
    ``torch.full``
    """
    if dtype is None and isinstance(fill_value, float):
        dtype = D.get_default_dtype()
    return ops.full(_shape(shape), fill_value, dtype=_dtype(dtype), device=device)


def _like(x, dtype, device):
    need("*_like", x)
    return dict(dtype=_dtype(dtype) or x._dtype, device=device or x._device)


def empty_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """An array of zeros (never uninitialised) with ``x``'s shape, dtype and device unless given.

    PyTorch
    -------
    ``torch.empty_like``
    """
    return ops.zeros(x._data.shape, **_like(x, dtype, device))


def zeros_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """An array of zeros with ``x``'s shape, dtype and device unless given.

    PyTorch
    -------
    ``torch.zeros_like``
    """
    return ops.zeros(x._data.shape, **_like(x, dtype, device))


def ones_like(x: Tensor, /, *, dtype=None, device=None) -> Tensor:
    """An array of ones with ``x``'s shape, dtype and device unless given.

    PyTorch
    -------
    ``torch.ones_like``
    """
    return ops.ones(x._data.shape, **_like(x, dtype, device))


def full_like(x: Tensor, /, fill_value, *, dtype=None, device=None) -> Tensor:
    """An array with ``x``'s shape filled with ``fill_value``.

    PyTorch
    -------
    ``torch.full_like``
    """
    return ops.full(x._data.shape, fill_value, **_like(x, dtype, device))


def _band(n_rows: int, n_cols: int, k: int, device, upper: bool) -> Tensor:
    """The (n_rows, n_cols) mask of j - i >= k (upper) or j - i <= k, built on the device."""
    rows = ops.arange(n_rows, device=device).reshape(n_rows, 1)
    cols = ops.arange(n_cols, device=device).reshape(1, n_cols)
    return cols - rows >= k if upper else cols - rows <= k


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype=None,
        device=None) -> Tensor:
    """Ones on the k-th diagonal, zeros elsewhere.

    PyTorch
    -------
    ``torch.eye``
    """
    n_cols = n_rows if n_cols is None else n_cols
    dtype = _dtype(dtype) or D.get_default_dtype()
    dev = as_device(device)
    diag = _band(n_rows, n_cols, k, dev, True) & _band(n_rows, n_cols, k, dev, False)
    return diag.to(dtype)


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """x with the elements above the k-th diagonal set to zero (batched over leading dims).

    PyTorch
    -------
    ``torch.tril``
    """
    return _triangle("tril", x, k, upper=False)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """x with the elements below the k-th diagonal set to zero.

    PyTorch
    -------
    ``torch.triu``
    """
    return _triangle("triu", x, k, upper=True)


def _triangle(name, x, k, upper):
    need(name, x)
    if x.ndim < 2:
        raise EmberValueError(f"ember.array_api.{name}: expected an array with at least 2 "
                              f"dims, got shape {tuple(x.shape)}")
    n, m = x._data.shape[-2:]
    zero = False if x._dtype is D.bool_ else 0
    return ops.where(_band(n, m, k, x._device, upper), x, zero)


def linspace(start, stop, /, num: int, *, dtype=None, device=None,
             endpoint: bool = True) -> Tensor:
    """num evenly spaced values from start to stop (computed in float64 on the host).

    PyTorch
    -------
    ``torch.linspace``
    """
    dtype = _dtype(dtype) or D.get_default_dtype()
    host = np.linspace(start, stop, num, endpoint=endpoint, dtype=np.float64)
    return ops.from_host(host.astype(dtype.np), as_device(device))


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list:
    """Coordinate matrices from 1-D arrays ('xy': Cartesian, 'ij': matrix indexing).

    PyTorch
    -------
    ``torch.meshgrid``
    """
    if indexing not in ("xy", "ij"):
        raise EmberValueError(f"ember.array_api.meshgrid: indexing must be 'xy' or 'ij', got "
                              f"{indexing!r}")
    for a in arrays:
        if need("meshgrid", a).ndim != 1:
            raise EmberValueError(f"ember.array_api.meshgrid: expected 1-D arrays, got shape "
                                  f"{tuple(a.shape)}")
    if len({a._dtype for a in arrays}) > 1:
        raise EmberValueError("ember.array_api.meshgrid: the arrays must share one dtype")
    sizes = [a._data.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        shape = [1] * len(arrays)
        shape[axis] = a._data.shape[0]
        out.append(a.reshape(shape).expand(sizes))
    return out
