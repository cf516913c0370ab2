"""torch.* creation composites: logspace, tril_indices, triu_indices, scalar_tensor,
empty_strided, empty_permuted."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from .._torch_gaps import only_default
from ..errors import EmberTypeError, EmberValueError, ShapeError
from ..ops._util import as_shape
from ..tensor import Tensor

__all__ = ["logspace", "tril_indices", "triu_indices", "scalar_tensor", "empty_strided",
           "empty_permuted"]


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** v`` for ``v`` evenly spaced from ``start`` to ``end``.

    PyTorch
    -------
    ``torch.logspace``
    """
    # the exponents in float64 whatever the dtype (torch: logspace(0, 10, 5, dtype=int64)
    # is 10 ** 2.5 = 316 in its second place, not 10 ** 2)
    exponents = ops.linspace(start, end, steps, dtype=D.float64, device="cpu")
    out = (base ** exponents).to(dtype or D.get_default_dtype())
    out = out.to(device) if device is not None else out
    return out.requires_grad_(True) if requires_grad else out


def _triangle_indices(name, row, col, offset, dtype, device, lower: bool) -> Tensor:
    if row < 0 or col < 0:
        raise EmberValueError(f"{name}: row and col must be non-negative, got {row}, {col}")
    dtype = D.get_dtype(dtype) if dtype is not None else D.int64
    if dtype not in (D.int32, D.int64):
        raise EmberTypeError(f"{name}: expected dtype int32 or int64, got {dtype.name}")
    rows = ops.arange(row, dtype=D.int64, device=device).reshape(row, 1).expand(row, col)
    cols = ops.arange(col, dtype=D.int64, device=device).reshape(1, col).expand(row, col)
    keep = (cols - rows <= offset) if lower else (cols - rows >= offset)
    # boolean selection is row-major, the order PyTorch lists the coordinates in
    return ops.stack([rows[keep], cols[keep]]).to(dtype)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix.

    PyTorch
    -------
    ``torch.tril_indices``
    """
    only_default("tril_indices", "layout", layout, ("strided",))
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a row x col matrix.

    PyTorch
    -------
    ``torch.triu_indices``
    """
    only_default("triu_indices", "layout", layout, ("strided",))
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding the number s (the default float dtype unless dtype is given).

    PyTorch
    -------
    ``torch.scalar_tensor``
    """
    only_default("scalar_tensor", "layout", layout, ("strided",))
    if pin_memory:
        only_default("scalar_tensor", "pin_memory", pin_memory)
    if type(s) is Tensor:
        s = s.item()
    out = ops.full((), s, dtype=dtype or D.get_default_dtype(), device=device)
    return out.requires_grad_(True) if requires_grad else out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of the given size whose values are not set (zeros in ember, as empty's).
    stride is checked (one non-negative stride per dim) but not kept: ember's tensors share
    no storage by strides, so each has its backend's own (contiguous) layout.

    PyTorch
    -------
    ``torch.empty_strided``
    """
    only_default("empty_strided", "layout", layout, ("strided",))
    if pin_memory:
        only_default("empty_strided", "pin_memory", pin_memory)
    size = as_shape(size, "empty_strided")
    stride = tuple(int(v) for v in stride)
    if len(stride) != len(size):
        raise ShapeError(f"empty_strided: expected one stride per dim of size {tuple(size)} "
                         f"({len(size)}), got {len(stride)} strides {stride}")
    if any(v < 0 for v in stride):
        raise EmberValueError(f"empty_strided: strides must be non-negative, got {stride}")
    return ops.empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of the given size whose values are not set (zeros in ember, as empty's),
    laid out in memory in the order ``physical_layout`` names its dims, outermost first:
    ``t.stride(physical_layout[i])`` is the i-th contiguous stride of the permuted size
    ((0, 2, 3, 1) is NHWC for an NCHW size).

    PyTorch
    -------
    ``torch.empty_permuted``
    """
    only_default("empty_permuted", "layout", layout, ("strided",))
    if pin_memory:
        only_default("empty_permuted", "pin_memory", pin_memory)
    size = as_shape(size, "empty_permuted")
    order = tuple(int(v) for v in physical_layout)
    if len(order) != len(size):
        raise ShapeError(f"empty_permuted: Number of dimensions in size does not match the "
                         f"length of the physical_layout: size {tuple(size)} has {len(size)}, "
                         f"physical_layout {order} has {len(order)}")
    if any(not 0 <= d < len(size) for d in order):       # negative dims too, as torch
        raise EmberValueError(f"empty_permuted: Dimension out of range: physical_layout "
                              f"{order} must name dims 0 to {len(size) - 1}")
    if len(set(order)) != len(order):
        raise EmberValueError(f"empty_permuted: Duplicate dim not allowed in physical_layout "
                              f"{order}; give each dim once")
    physical = ops.empty(tuple(size[d] for d in order), dtype=dtype, device=device)
    out = physical.permute(tuple(order.index(d) for d in range(len(order))))
    return out.requires_grad_(True) if requires_grad else out
