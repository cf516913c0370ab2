"""torch.linalg.lstsq: least-squares solutions of A X = B through the SVD."""
from __future__ import annotations

from collections import namedtuple

from .. import dtypes as D
from .. import ops
from ..dtypes import finfo
from ..errors import EmberValueError, ShapeError
from ..tensor import Tensor
from .decompositions import _float, pinv, svdvals

__all__ = ["lstsq"]

LstsqResult = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(input: Tensor, b: Tensor, rcond: float | None = None, *, driver: str | None = None):
    """The least-squares (for a rank-deficient A, minimum-norm) solution X of A X = B, A of
    shape (*, m, n), B (*, m, k) or a batch of vectors (*, m), batch dimensions broadcast.
    Computed from A's SVD for every driver; what is filled in follows the driver as in
    torch on the CPU (default 'gelsy'): ``rank`` (singular values above ``rcond`` times the
    largest; rcond defaults to eps * max(m, n)) for gelsy/gelsd/gelss, ``singular_values``
    for gelsd/gelss, ``residuals`` (squared, per column) for m > n and a full-rank A with
    any driver but gelsy; the rest are empty tensors.

    PyTorch
    -------
    ``torch.linalg.lstsq``
    """
    name = "linalg.lstsq"
    drv = "gelsy" if driver is None else driver
    if drv not in _DRIVERS:
        raise EmberValueError(f"{name}: parameter `driver` should be one of (gels, gelsy, "
                              f"gelsd, gelss), got {driver!r}")
    input, b = _float(name, input), _float(name, b)
    if input.ndim < 2:
        raise ShapeError(f"{name}: input must have at least 2 dimensions, got shape "
                         f"{tuple(input.shape)}")
    if input.dtype is not b.dtype:
        raise EmberValueError(f"{name}: expected A and B to have the same dtype, got "
                              f"{input.dtype.name} and {b.dtype.name}")
    vector = b.ndim == input.ndim - 1
    Bm = b.unsqueeze(-1) if vector else b
    m, n = input.shape[-2], input.shape[-1]
    if Bm.ndim < 2 or Bm.shape[-2] != m:
        raise ShapeError(f"{name}: A of shape {tuple(input.shape)} needs B of shape (*, {m}, k) "
                         f"or (*, {m}), got {tuple(b.shape)}")
    if rcond is None:
        rcond = finfo(input.dtype).eps * max(m, n)
    # the solution through pinv (torch's lstsq gradient is pinv's, FunctionsManual's
    # linalg_lstsq_backward): pinv(A) B is the minimum-norm least-squares solution, with
    # singular values at or below rcond * largest counted as zero
    X = pinv(input, rtol=rcond) @ Bm
    S = svdvals(input)
    largest = S.detach().amax(-1, keepdim=True) if S.shape[-1] else S.detach()
    keep = S.detach() > largest * rcond
    rank = keep.sum(-1).to(D.int64)
    # the empty fields stay in the graph as torch's do (slices of S)
    empty = S.reshape(-1)[:0]
    residuals = empty
    if m > n and drv != "gelsy" and bool((rank == n).all().item()):
        r = input @ X - Bm
        residuals = (r * r).sum(-2)           # (*, k); a vector B keeps k = 1, as torch
    return LstsqResult(X.squeeze(-1) if vector else X, residuals,
                       rank if drv != "gels" else ops.zeros(0, dtype=D.int64, device=input.device),
                       S if drv in ("gelsd", "gelss") else empty)
