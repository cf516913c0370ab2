"""torch.linalg's functions of a matrix: matrix_exp, and the condition number cond."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import EmberValueError, ShapeError
from ..ops import decompositions as P
from ..tensor import Tensor
from .decompositions import _float, _out, inv_ex, svdvals
from .norms import matrix_norm

__all__ = ["matrix_exp", "cond"]

def matrix_exp(input: Tensor) -> Tensor:
    """exp(A) of each square matrix: scaling and squaring over the [13/13] Pade
    approximant (Higham 2005), each matrix of a batch scaled by its own power of two; the
    gradient is PyTorch's (the exponential of a block matrix); float16 and bfloat16
    compute in float32.

    PyTorch
    -------
    ``torch.linalg.matrix_exp``, ``torch.matrix_exp``
    """
    input = _float("matrix_exp", input)
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise ShapeError(f"linalg.matrix_exp: expected a square matrix or a batch of them "
                         f"(shape (*, n, n)), got shape {tuple(input.shape)}")
    if input.dtype in (D.float16, D.bfloat16):
        return matrix_exp(input.float()).to(input.dtype)
    if input.numel() == 0:
        return input * 0.0
    return run(P.matrix_exp_op, input)


_NORMS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(input: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number of each matrix in the norm p: the ratio of the extreme
    singular values for p None, 2 (largest / smallest) and -2 (smallest / largest), any
    shape; else ||A||_p ||A^-1||_p for square matrices, p 'fro', 'nuc', inf, -inf, 1, -1,
    inf where A is singular (as PyTorch's: it does not raise; torch 2.13's 'nuc' gives a
    huge rounding-dependent number there instead, from LAPACK's inverse of it).

    PyTorch
    -------
    ``torch.linalg.cond``
    """
    _out(out, "cond")
    input = _float("cond", input)
    if p not in _NORMS or isinstance(p, bool):
        raise EmberValueError(f"linalg.cond: expected p in {list(_NORMS)}, got {p!r}")
    if input.ndim < 2:
        raise ShapeError(f"linalg.cond: expected a matrix or a batch of them (shape "
                         f"(*, m, n)), got shape {tuple(input.shape)}")
    if p in (None, 2, -2):
        if 0 in tuple(input.shape[-2:]):            # torch: the cond of an empty matrix is 0
            return ops.zeros(tuple(input.shape[:-2]), dtype=input.dtype.to_real(),
                             device=input.device)
        s = svdvals(input)
        top, bottom = s[..., 0], s[..., -1]
        return top / bottom if p != -2 else bottom / top
    if input.shape[-1] != input.shape[-2]:
        raise ShapeError(f"linalg.cond: p={p!r} needs square matrices (shape (*, n, n)), "
                         f"got shape {tuple(input.shape)}; p=2 or None take any shape")
    if input.shape[-1] == 0:
        return ops.zeros(tuple(input.shape[:-2]), dtype=input.dtype.to_real(), device=input.device)
    inverse, info = inv_ex(input)
    # the singular matrices' inverses are nan: their cond is inf, as torch's
    good = ops.where((info == 0)[..., None, None], inverse, 0.0)
    value = matrix_norm(input, p) * matrix_norm(good, p)
    return ops.where(info == 0, value, math.inf)
