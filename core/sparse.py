"""torch.sparse: a COO sparse tensor (Tensor.to_sparse), its products, and the constructors.

`x.to_sparse()` gives a SparseTensor in torch's sparse_coo layout: int64 indices
(ndim, nnz) and the nnz nonzero values, memory and product cost in proportion to nnz.  It
multiplies dense matrices and vectors from either side (`s @ d`, `d @ s`, torch.mm,
torch.matmul, torch.spmm / torch.sparse.mm), with gradients to the dense operand and to
the stored values (as torch.sparse.mm's: torch's mm/@ also give the absent entries of a
to_sparse() source a gradient); it converts back (`to_dense()`), moves and casts
(`to(device/dtype)`), coalesces (`coalesce()`: repeated indices summed), and answers
torch's questions
(is_sparse, layout, indices()/values(), _nnz(), sparse_dim()...).  Other ops take its
to_dense() first.  Hybrid tensors (sparse_dim below ndim) and the compressed layouts
(CSR, CSC, BSR, BSC) raise NotInEmberError.

`sparse_coo_tensor` still builds the dense tensor its entries describe (repeated indices
summing, as coalescing does): programs add it to dense tensors and index it, which
SparseTensor does not do; `is_sparse` says False for it.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import ops
from .errors import EmberError, EmberIndexError, EmberTypeError, NotInEmberError, ShapeError
from .tensor import Size, Tensor

__all__ = ["sparse_coo_tensor", "spmm", "mm", "sum", "SparseTensor"]


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants=None,
                      is_coalesced=None) -> Tensor:
    """The dense tensor with values[i] at indices[:, i] (repeats add up).

    check_invariants=True checks the indices against size up front, with torch's messages
    (without it an index out of range fails as the dense tensor is built).  is_coalesced
    is a promise about the indices that building a dense tensor never relies on.

    PyTorch
    -------
    ``torch.sparse_coo_tensor``
    """
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


class SparseTensor:
    """A tensor in torch's sparse COO layout: indices (sparse_dim, nnz) int64 and values
    (nnz,), on one device.  See the module docstring for what it does."""

    is_sparse = True
    is_sparse_csr = False
    layout = "torch.sparse_coo"
    __slots__ = ("_i", "_v", "_shape", "_coalesced")

    def __init__(self, indices: Tensor, values: Tensor, shape, coalesced: bool = False):
        self._i, self._v = indices, values
        self._shape = tuple(int(n) for n in shape)
        self._coalesced = coalesced

    # -- what it is ----------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._shape[dim]

    def dim(self) -> int:
        return len(self._shape)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    def sparse_dim(self) -> int:
        return len(self._shape)

    def dense_dim(self) -> int:
        return 0

    def _nnz(self) -> int:
        return self._v._data.shape[0]

    def _indices(self) -> Tensor:
        return self._i

    def _values(self) -> Tensor:
        return self._v

    def is_coalesced(self) -> bool:
        return self._coalesced

    def indices(self) -> Tensor:
        self._need_coalesced("indices")
        return self._i

    def values(self) -> Tensor:
        self._need_coalesced("values")
        return self._v

    def _need_coalesced(self, what: str) -> None:
        if not self._coalesced:
            raise EmberError(f"Cannot get {what} on an uncoalesced tensor, please call "
                             ".coalesce() first")

    def __repr__(self) -> str:
        return (f"tensor(indices={self._i!r},\n       values={self._v!r},\n       "
                f"size={self._shape}, nnz={self._nnz()}, layout=torch.sparse_coo)")

    # -- conversions -------------------------------------------------------------------
    def _flat(self) -> Tensor:
        """Each entry's row-major position in the dense tensor."""
        flat = None
        stride = 1
        for d in range(len(self._shape) - 1, -1, -1):
            term = self._i[d] * stride
            flat = term if flat is None else flat + term
            stride *= self._shape[d]
        return flat if flat is not None else ops.zeros(self._nnz(), dtype=D.int64,
                                                       device=self._i.device)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor (repeated indices add up), differentiable in the values: its
        gradient reaches the stored entries only (torch's masked_grad=True, the default)."""
        if masked_grad is False:
            raise NotInEmberError("SparseTensor.to_dense(masked_grad=False): ember's sparse "
                                  "tensors take gradients in their stored values only (the "
                                  "masked gradient, torch's default); leave masked_grad out")
        values = self._v if dtype is None else self._v.to(dtype)
        dense = ops.zeros(self.numel(), dtype=values.dtype, device=values.device)
        if self._nnz():
            dense = ops.index_add(dense, 0, self._flat(), values)
        return dense.reshape(self._shape)

    def coalesce(self) -> SparseTensor:
        """Entries sorted by position, repeats summed (torch's coalesce)."""
        if self._coalesced:
            return self
        if not self._nnz():
            return SparseTensor(self._i, self._v, self._shape, True)
        positions, inverse = ops.unique(self._flat(), return_inverse=True)
        values = ops.zeros((positions._data.shape[0],), dtype=self._v.dtype,
                           device=self._v.device)
        values = ops.index_add(values, 0, inverse, self._v)
        rows, rest = [], positions
        for d in range(len(self._shape) - 1, -1, -1):
            rows.append(rest % self._shape[d])
            rest = rest // self._shape[d]
        return SparseTensor(ops.stack(rows[::-1]), values, self._shape, True)

    def to(self, *args, **kwargs) -> SparseTensor:
        """Moved and/or cast as Tensor.to (the dtype applies to the values)."""
        values = self._v.to(*args, **kwargs)
        indices = self._i.to(values.device)
        return SparseTensor(indices, values, self._shape, self._coalesced)

    def cpu(self) -> SparseTensor:
        return self.to("cpu")

    def float(self) -> SparseTensor:  # noqa: A003  (torch's name)
        return self.to(D.float32)

    def double(self) -> SparseTensor:
        return self.to(D.float64)

    def detach(self) -> SparseTensor:
        return SparseTensor(self._i, self._v.detach(), self._shape, self._coalesced)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._v.requires_grad_(requires_grad)
        return self

    def t(self) -> SparseTensor:
        if len(self._shape) != 2:
            raise ShapeError(f"t(): expected a 2-D sparse tensor, got {len(self._shape)}-D")
        return SparseTensor(ops.stack([self._i[1], self._i[0]]), self._v,
                            self._shape[::-1], False)

    # -- products ---------------------------------------------------------------------
    def __matmul__(self, other):
        """sparse (M, K) @ dense (K, N) or (K,)."""
        if type(other) is not Tensor:
            return NotImplemented
        if len(self._shape) != 2 or other.ndim not in (1, 2) or \
                other._data.shape[0] != self._shape[1]:
            raise ShapeError(f"sparse @ dense: expected a 2-D sparse matrix and a matrix or "
                             f"vector with {self._shape[1] if len(self._shape) == 2 else '?'} "
                             f"rows, got {self._shape} and {tuple(other.shape)}")
        return _spmm(self._shape[0], self._i[0], self._i[1], self._v, other)

    def __rmatmul__(self, other):
        """dense (M, K) @ sparse (K, N): (sparse^T @ dense^T)^T."""
        if type(other) is not Tensor:
            return NotImplemented
        if len(self._shape) != 2 or other.ndim not in (1, 2) or \
                other._data.shape[-1] != self._shape[0]:
            raise ShapeError(f"dense @ sparse: expected a matrix or vector with "
                             f"{self._shape[0] if len(self._shape) == 2 else '?'} columns and "
                             f"a 2-D sparse matrix, got {tuple(other.shape)} and "
                             f"{self._shape}")
        dense = other.mT if other.ndim == 2 else other
        out = _spmm(self._shape[1], self._i[1], self._i[0], self._v, dense)
        return out.mT if other.ndim == 2 else out

    matmul = __matmul__

    def mm(self, mat2):
        return self @ mat2


def _spmm(rows_out: int, rows: Tensor, cols: Tensor, values: Tensor, dense: Tensor) -> Tensor:
    """out[rows[k]] += values[k] * dense[cols[k]] for each entry k: nnz rows of work."""
    d2 = dense if dense.ndim == 2 else dense.unsqueeze(1)
    dtype = D.result_type(values, d2)
    picked = d2.index_select(0, cols).to(dtype) * values.to(dtype).unsqueeze(1)
    out = ops.zeros((rows_out, d2._data.shape[1]), dtype=dtype, device=d2.device)
    out = ops.index_add(out, 0, rows, picked)
    return out if dense.ndim == 2 else out.squeeze(1)


def to_sparse(x: Tensor, sparse_dim=None, *, layout=None, blocksize=None,
              dense_dim=None) -> SparseTensor:
    """Tensor.to_sparse(): the COO sparse tensor of x's nonzero entries (nan counts)."""
    if type(x) is not Tensor:
        raise EmberTypeError(f"to_sparse: expected a Tensor, got {type(x).__name__}")
    if layout is not None and not str(layout).endswith("sparse_coo"):
        raise NotInEmberError(f"Tensor.to_sparse(layout={layout}): ember has the sparse COO "
                              "layout only (no CSR, CSC, BSR, BSC); drop layout=")
    if blocksize is not None or dense_dim not in (None, 0) or \
            sparse_dim not in (None, x.ndim):
        raise NotInEmberError(f"Tensor.to_sparse: ember has no hybrid or blocked sparse "
                              f"tensors (sparse_dim={sparse_dim}, dense_dim={dense_dim}, "
                              f"blocksize={blocksize}); keep every dim sparse: to_sparse()")
    if x.ndim == 0:
        raise ShapeError("to_sparse: a 0-d tensor has no sparse form; use a 1-D one")
    nonzero = ops.nonzero(x.detach())                  # (nnz, ndim), row-major order
    indices = nonzero.mT.contiguous()
    flat = None
    stride = 1
    for d in range(x.ndim - 1, -1, -1):
        term = indices[d] * stride
        flat = term if flat is None else flat + term
        stride *= x._data.shape[d]
    values = x.reshape(-1).index_select(0, flat)
    return SparseTensor(indices, values, x._data.shape, coalesced=True)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """sparse @ dense: a matrix product (a dense input too, as torch.mm).

    PyTorch
    -------
    ``torch.spmm``
    """
    from .functional.products import mm as _mm
    return _mm(input, mat2)


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """sparse @ dense (a dense mat1 too, as torch.mm); torch's `reduce` (sum, mean, amax,
    amin over each row's entries) exists only for sparse CSR tensors, which ember does not
    have: it raises NotInEmberError.

    PyTorch
    -------
    ``torch.sparse.mm``
    """
    if reduce is not None:
        raise NotInEmberError(f"sparse.mm(reduce={reduce!r}): torch takes reduce= only for a "
                              "sparse CSR mat1, and ember has the sparse COO layout only (no "
                              "CSR); drop reduce= (the product sums, as reduce='sum') or "
                              "compute the reduction on the dense product")
    return spmm(mat1, mat2)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:       # noqa: A001  (torch.sparse.sum)
    return input.sum(dim, dtype=dtype) if dim is not None else input.sum(dtype=dtype)
