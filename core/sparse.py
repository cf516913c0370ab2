"""torch.sparse's constructors and products, over dense tensors.

ember has no sparse layout: `sparse_coo_tensor` builds the dense tensor those entries
describe (repeated indices summing, as coalescing does), `to_dense()` / `coalesce()` return
the tensor itself, and `spmm` / `sparse.mm` are matrix products.  The numbers are
PyTorch's; the memory is that of a dense tensor, and `is_sparse` says False.
`Tensor.to_sparse()` raises NotInEmberError: it would have to return a tensor in a sparse
layout, which ember does not have.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import ops
from .errors import EmberIndexError, ShapeError
from .tensor import Tensor

__all__ = ["sparse_coo_tensor", "spmm", "mm", "sum"]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None,
                      is_coalesced=None) -> Tensor:
    """The dense tensor with values[i] at indices[:, i] (repeats add up).

    check_invariants=True checks the indices against size up front, with torch's messages
    (without it an index out of range fails as the dense tensor is built).  is_coalesced
    is a promise about the indices that building a dense tensor never relies on."""
    index = indices if type(indices) is Tensor else ops.tensor(np.asarray(indices),
                                                                 device=device)
    index = index.to(D.int64)
    vals = values if type(values) is Tensor else ops.tensor(values, device=index.device)
    if dtype is not None:
        vals = vals.to(dtype)
    if index.ndim != 2 or index._data.shape[1] != vals._data.shape[0]:
        raise ShapeError(f"sparse_coo_tensor: indices must be (ndim, nnz) with nnz = "
                         f"len(values); got {tuple(index.shape)} and {tuple(vals.shape)}")
    sparse_dims = index._data.shape[0]
    if size is None:
        high = index.amax(1).tolist() if index.numel() else [-1] * sparse_dims
        size = tuple(h + 1 for h in high) + tuple(vals._data.shape[1:])
    size = tuple(int(s) for s in size)
    if check_invariants and index.numel():
        _check_indices(index, size)
    lead = size[:sparse_dims]
    strides = [1] * sparse_dims
    for d in range(sparse_dims - 2, -1, -1):
        strides[d] = strides[d + 1] * lead[d + 1]
    flat = index[0] * strides[0]
    for d in range(1, sparse_dims):
        flat = flat + index[d] * strides[d]
    n = 1
    for s in lead:
        n *= s
    dense = ops.zeros((n,) + size[sparse_dims:], dtype=vals.dtype, device=index.device)
    out = ops.index_add(dense, 0, flat, vals).reshape(size)
    return out.requires_grad_(True) if requires_grad else out


def _check_indices(index: Tensor, size: tuple) -> None:
    low, high = index.amin(1).tolist(), index.amax(1).tolist()
    for d, (lo, hi) in enumerate(zip(low, high)):
        if lo < 0:
            raise EmberIndexError(f"sparse_coo_tensor: found negative index {lo} for dim {d}")
        if d < len(size) and hi >= size[d]:
            raise EmberIndexError(f"sparse_coo_tensor: size is inconsistent with indices: "
                                  f"for dim {d}, size is {size[d]} but found index {hi}")


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """sparse @ dense: a matrix product (every ember tensor is dense)."""
    from .functional.products import mm as _mm
    return _mm(input, mat2)


mm = spmm


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:       # noqa: A001  (torch.sparse.sum)
    return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
