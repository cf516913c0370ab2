"""torch.linalg's decompositions and solvers: inv, solve, det, slogdet, cholesky, eigh, eig, svd,
qr."""
from __future__ import annotations

import math
from collections import namedtuple

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..dtypes import finfo
from ..errors import DtypeNotSupportedError, EmberValueError, NotInEmberError, ShapeError
from ..ops import decompositions as P
from ..tensor import Tensor

__all__ = ["inv", "solve", "det", "slogdet", "cholesky", "eigh", "eigvalsh",
           "matrix_power", "multi_dot", "inv_ex", "cholesky_ex", "svd", "svdvals", "pinv",
           "qr", "solve_ex", "solve_triangular", "vander", "tensorinv", "tensorsolve",
           "matrix_rank", "eig", "eigvals"]

SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
EighResult = namedtuple("eigh", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
InvExResult = namedtuple("inv_ex", ["inverse", "info"])
CholeskyExResult = namedtuple("cholesky_ex", ["L", "info"])
SVDResult = namedtuple("svd", ["U", "S", "Vh"])
QRResult = namedtuple("qr", ["Q", "R"])


def _float(name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise ShapeError(f"linalg.{name}: expected a tensor, got {type(x).__name__}")
    if x._dtype.category < D.FLOAT:
        raise DtypeNotSupportedError(f"linalg.{name}: expected a floating point or complex "
                                     f"tensor, got {x._dtype.name}; call .float() first")
    return x


def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of each matrix over the last two dims; raises if one is singular.

    PyTorch
    -------
    ``torch.linalg.inv``
    """
    _out(out, "inv")
    return run(P.inv_op, _float("inv", A))


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> InvExResult:
    """inv with `info` per matrix: 0, or nonzero for a singular one (its inverse is then
    nan), raising only with check_errors, as PyTorch's.

    PyTorch
    -------
    ``torch.linalg.inv_ex``
    """
    _out(out, "inv_ex")
    A = _float("inv_ex", A)
    return InvExResult(*_ex(inv, A, check_errors, lambda a: det(a) == 0))


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (left=False: X A = B); B a vector (*, n) or matrices (*, n, k), its
    batch dims broadcast against A's.

    PyTorch
    -------
    ``torch.linalg.solve``
    """
    _out(out, "solve")
    A, B = _float("solve", A), _float("solve", B)
    if not left:
        return solve(A.mT, B.mT).mT
    if A.ndim < 2:
        raise ShapeError(f"linalg.solve: A must be (*, n, n), got shape {tuple(A.shape)}")
    n = A.shape[-1]
    # torch: B is a batch of vectors when B.ndim == 1 or (B.ndim == A.ndim - 1 and B's
    # shape is A's without the last dim)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = B.unsqueeze(-1) if vector else B
    if b.ndim < 2 or b.shape[-2] != n:
        raise ShapeError(f"linalg.solve: B must be (*, {n}) or (*, {n}, k) for A of shape "
                         f"{tuple(A.shape)}, got {tuple(B.shape)}")
    batch = _broadcast(A.shape[:-2], b.shape[:-2])
    A = A.expand(batch + tuple(A.shape[-2:])) if tuple(A.shape[:-2]) != batch else A
    b = b.expand(batch + tuple(b.shape[-2:])) if tuple(b.shape[:-2]) != batch else b
    if A.dtype != b.dtype:
        dt = D.result_type(A, b)
        A, b = A.to(dt), b.to(dt)
    x = run(P.solve_op, A, b)
    return x.squeeze(-1) if vector else x


def det(A: Tensor, *, out=None) -> Tensor:
    """The determinant of a square matrix (or a batch of them).

    PyTorch
    -------
    ``torch.det``, ``torch.linalg.det``
    """
    _out(out, "det")
    return run(P.det_op, _float("det", A))


def slogdet(A: Tensor, *, out=None) -> SlogdetResult:
    """(sign, log |det|) of each matrix; log |det| does not overflow where det would.

    PyTorch
    -------
    ``torch.slogdet``, ``torch.linalg.slogdet``
    """
    _out(out, "slogdet")
    A = _float("slogdet", A)
    # the sign from rows scaled to max |entry| 1 (a positive factor per row): their det
    # neither underflows nor overflows where A's own would; a row holding an infinity stays
    # as it is (inf / inf would make the sign of an infinite det nan: PyTorch's is +-1)
    if A.ndim >= 2 and A._data.shape[-1] == 0:
        # the determinant of a 0x0 matrix is 1: sign 1, log 0 (in the graph, as torch's)
        none = A.sum((-2, -1)) * 0.0
        return SlogdetResult(none + 1.0, none.real if A._dtype.category == D.COMPLEX else none)
    scale = A.detach().abs().amax(-1, keepdim=True)
    # the sign is in the graph with a zero gradient (sign's), as torch's
    rows = A / ops.where((scale == 0).logical_or(ops.isinf(scale)), 1.0, scale)
    if A._dtype.category == D.COMPLEX:
        # sign det / |det| (complex, torch's sgn) and log |det| through det: both in the
        # graph with torch's gradients (log |det(rows)| + the log row scales, as above)
        d = run(P.det_op, rows)
        s = d.sgn()
        fixed = ops.where((scale == 0).logical_or(ops.isinf(scale)), 1.0, scale)
        return SlogdetResult(s, d.abs().log() + fixed.log().sum((-2, -1)))
    return SlogdetResult(run(P.det_op, rows).sign(), run(P.logabsdet_op, A))


def cholesky(input: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """The lower (upper=True: upper) Cholesky factor of A, read from A's lower (upper)
    triangle as PyTorch's; raises if A is not positive-definite or holds inf or nan there.

    PyTorch
    -------
    ``torch.linalg.cholesky``
    """
    _out(out, "cholesky")
    input = _float("cholesky", input)
    if upper:                     # U = L(A^T)^T: the upper triangle is the one read
        return run(P.cholesky_op, input.mT).mT
    return run(P.cholesky_op, input)


def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False,
                out=None) -> CholeskyExResult:
    """cholesky with `info` per matrix: 0, or nonzero where one is not positive-definite
    (its factor is then nan), raising only with check_errors, as PyTorch's.

    PyTorch
    -------
    ``torch.linalg.cholesky_ex``
    """
    _out(out, "cholesky_ex")
    input = _float("cholesky_ex", input)
    # failed: not positive-definite, or inf/nan in the triangle read (eigenvalues nan)
    uplo = "U" if upper else "L"
    return CholeskyExResult(*_ex(lambda a: cholesky(a, upper=upper), input, check_errors,
                                 lambda a: ~(eigvalsh(a, uplo).amin(-1) > 0)))


def _ex(fn, A: Tensor, check_errors: bool, failed):
    """(fn(A), info): the matrices `failed` marks are replaced by the identity to compute
    the others, then their results set to nan (LAPACK's info says which failed)."""
    try:
        return fn(A), ops.zeros(tuple(A.shape[:-2]), dtype=D.int32, device=A.device)
    except EmberValueError:
        if check_errors:
            raise
    bad = failed(A.detach())
    eye = ops.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    result = fn(ops.where(bad[..., None, None], eye, A))
    return ops.where(bad[..., None, None], float("nan"), result), bad.to(D.int32)


def _uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise EmberValueError(f"linalg.{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


def eigh(input: Tensor, UPLO: str = "L", *, out=None) -> EighResult:
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix.

    PyTorch
    -------
    ``torch.linalg.eigh``
    """
    _out(out, "eigh")
    input = _float("eigh", input)
    UPLO = _uplo("eigh", UPLO)
    return EighResult(run(P.eigvalsh_op, input, UPLO=UPLO), run(P.eigh_op, input, UPLO=UPLO))


def eigvalsh(input: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues, ascending, of a symmetric matrix (``UPLO``: which triangle is read).

    PyTorch
    -------
    ``torch.linalg.eigvalsh``
    """
    _out(out, "eigvalsh")
    return run(P.eigvalsh_op, _float("eigvalsh", input), UPLO=_uplo("eigvalsh", UPLO))


def eig(input: Tensor, *, out=None) -> EigResult:
    """(eigenvalues, eigenvectors as columns) of each square matrix, complex (LAPACK geev:
    each eigenvector of unit norm with its largest component real, as PyTorch's on the
    CPU; where two components are equally large, LAPACK builds may pick another one, so
    a vector can differ from torch's by a unit phase).  Gradients need distinct
    eigenvalues, as in PyTorch.

    PyTorch
    -------
    ``torch.linalg.eig``
    """
    _out(out, "eig")
    input = _float("eig", input)
    return EigResult(run(P.eigvals_op, input), run(P.eig_op, input))


def eigvals(input: Tensor, *, out=None) -> Tensor:
    """The eigenvalues of each square matrix, complex, in LAPACK geev's order.

    PyTorch
    -------
    ``torch.linalg.eigvals``
    """
    _out(out, "eigvals")
    return run(P.eigvals_op, _float("eigvals", input))


def matrix_power(input: Tensor, n: int, *, out=None) -> Tensor:
    """A^n by repeated squaring (n < 0: inv(A)^-n, n == 0: the identity).

    PyTorch
    -------
    ``torch.matrix_power``, ``torch.linalg.matrix_power``
    """
    _out(out, "matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise EmberValueError(f"linalg.matrix_power: n must be an int, got {n!r}")
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: expected square matrices (*, n, n), got "
                         f"shape {tuple(input.shape)}")
    if n == 0:
        # A * 0 keeps the result in A's graph (a zero gradient, as PyTorch's)
        return input * 0 + ops.eye(input.shape[-1], dtype=input.dtype, device=input.device)
    if n < 0:
        input, n = inv(input), -n
    result, base = None, input
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices (first may be 1-D, last may be 1-D), multiplied
    in the order that costs the fewest scalar multiplications.

    PyTorch
    -------
    ``torch.linalg.multi_dot``
    """
    _out(out, "multi_dot")
    ts = list(tensors)
    if len(ts) < 2:
        raise EmberValueError(f"linalg.multi_dot: expected at least 2 tensors, got {len(ts)}")
    for i, t in enumerate(ts):
        want = (1, 2) if i in (0, len(ts) - 1) else (2,)
        if t.ndim not in want:
            raise ShapeError(f"linalg.multi_dot: tensor {i} must be "
                             f"{' or '.join(f'{d}-D' for d in want)}, got {t.ndim}-D")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i in range(len(ts) - 1):
        if ts[i].shape[-1] != ts[i + 1].shape[0]:
            raise ShapeError(f"linalg.multi_dot: tensors {i} and {i + 1} cannot be multiplied "
                             f"({tuple(ts[i].shape)} and {tuple(ts[i + 1].shape)})")
    dims = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    order = _chain_order(dims)
    r = _multiply(ts, order, 0, len(ts) - 1)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return r


def _chain_order(p):
    """The matrix-chain split table (dynamic programming, CLRS 15.2)."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return _multiply(ts, split, i, k) @ _multiply(ts, split, k + 1, j)


def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None) -> SVDResult:
    """(U, S, Vh) with A = U diag(S) Vh, S descending; LAPACK's signs (as PyTorch's on the
    CPU).  Gradients need distinct, nonzero singular values, as in PyTorch.

    PyTorch
    -------
    ``torch.linalg.svd``
    """
    _out(out, "svd")
    A = _float("svd", A)
    return SVDResult(P.run_svd_u(A, bool(full_matrices)), P.run_svdvals(A),
                     P.run_svd_vh(A, bool(full_matrices)))


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values of a matrix, descending.

    PyTorch
    -------
    ``torch.linalg.svdvals``
    """
    _out(out, "svdvals")
    return P.run_svdvals(_float("svdvals", A))


def pinv(input: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None) -> Tensor:
    """The pseudo-inverse through the SVD: singular values at or below
    max(atol, rtol * largest) count as zero (rtol defaults to eps * max(m, n) when neither
    is given, as PyTorch's).

    PyTorch
    -------
    ``torch.linalg.pinv``
    """
    _out(out, "pinv")
    input = _float("pinv", input)
    if input.ndim < 2:
        raise ShapeError(f"linalg.pinv: expected a matrix or a batch of them, got shape "
                         f"{tuple(input.shape)}")
    if 0 in input._data.shape[-2:]:
        return input.mT * 0.0                   # the pseudo-inverse of an empty matrix is empty
    for name, value in (("atol", atol), ("rtol", rtol)):
        if type(value) is Tensor and value.numel() != 1:
            raise NotInEmberError(f"linalg.pinv: {name} as a tensor of one tolerance per "
                                  f"matrix (shape {tuple(value.shape)}) is not supported; "
                                  f"pass one number (or pinv each matrix)")
    atol = None if atol is None else float(atol)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            finfo(input.dtype).eps * max(input.shape[-2:])
    # hermitian: torch's eigh of the lower triangle (|eigenvalues| as singular values);
    # the gradient is torch's pinv_backward either way
    return P.run_pinv(input, float(0.0 if atol is None else atol), float(rtol), bool(hermitian))


def qr(A: Tensor, mode: str = "reduced", *, out=None) -> QRResult:
    """(Q, R) with A = Q R, R upper triangular, LAPACK's signs (PyTorch's on the CPU); mode
    'reduced', 'complete' or 'r' (Q empty).

    PyTorch
    -------
    ``torch.linalg.qr``
    """
    _out(out, "qr")
    A = _float("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise EmberValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got "
                              f"{mode!r}")
    if mode == "r":
        return QRResult(ops.zeros(0, dtype=A.dtype, device=A.device),
                        P.run_qr_r(A, "reduced"))
    return QRResult(P.run_qr_q(A, mode), P.run_qr_r(A, mode))


def _broadcast(a, b) -> tuple:
    from ..ops._util import broadcast_shapes
    return broadcast_shapes("linalg.solve (batch dims)", tuple(a), tuple(b))


def _out(out, name):
    if out is not None:
        raise EmberValueError(f"linalg.{name}: out= is not supported by ember; assign the "
                              "result instead")
















SolveExResult = namedtuple("solve_ex", ["result", "info"])


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None) -> SolveExResult:
    """solve with torch's info tensor (0: solved; a singular A raises, as ember's solve
    does, whether or not check_errors asks for it).

    PyTorch
    -------
    ``torch.linalg.solve_ex``
    """
    _out(out, "solve_ex")
    del check_errors          # ember's solve always checks: info is 0 when it returns
    x = solve(A, B, left=left)
    info = x.new_zeros(tuple(A.shape[:-2]), dtype=D.int32)
    return SolveExResult(x, info)


def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """X with T X = B (X T = B with left=False) for T the upper or lower triangle of A (its
    diagonal taken as ones with unitriangular): the other triangle is never read.

    PyTorch
    -------
    ``torch.linalg.solve_triangular``
    """
    _out(out, "solve_triangular")
    T = input.triu() if upper else input.tril()
    if unitriangular:
        n = input.shape[-1]
        eye = ops.eye(n, dtype=input.dtype, device=input.device)
        T = T * (1 - eye) + eye
    if not left:
        return solve(T.mT, B.mT).mT
    return solve(T, B)


def vander(x: Tensor, *, N=None) -> Tensor:
    """The Vandermonde matrix: x's powers 0 .. N-1 along a new last dim (increasing).

    PyTorch
    -------
    ``torch.linalg.vander``
    """
    if x.ndim == 0:                 # torch: a 0-d x is one point
        x = x.reshape(1)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise EmberValueError(f"linalg.vander: N must be greater than 1, got {n}")
    powers = [ops.ones_like(x)]
    for _ in range(1, n):
        powers.append(powers[-1] * x)
    return ops.stack(powers, -1)


def tensorinv(input: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A for tensordot over its first `ind` dims.

    PyTorch
    -------
    ``torch.linalg.tensorinv``
    """
    _out(out, "tensorinv")
    if ind <= 0:
        raise EmberValueError(f"linalg.tensorinv: expected a strictly positive integer for "
                              f"'ind', but got {ind}")
    front, back = tuple(input.shape[:ind]), tuple(input.shape[ind:])
    rows = math.prod(front)
    if rows != math.prod(back):
        raise ShapeError(f"linalg.tensorinv: expected self to satisfy the requirement "
                         f"prod(self.shape[ind:]) == prod(self.shape[:ind]), got "
                         f"{tuple(input.shape)}")
    return inv(input.reshape(rows, rows)).reshape(back + front)


def tensorsolve(input: Tensor, other: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B.

    PyTorch
    -------
    ``torch.linalg.tensorsolve``
    """
    _out(out, "tensorsolve")
    if dims is not None:
        nd = input.ndim
        dims = [d % nd for d in dims]
        input = input.permute([d for d in range(nd) if d not in dims] + dims)
    rest = tuple(input.shape[other.ndim:])
    n = math.prod(tuple(other.shape))
    if n != math.prod(rest):
        raise ShapeError(f"linalg.tensorsolve: expected prod(A.shape[B.ndim:]) == B.numel(), "
                         f"got A {tuple(input.shape)} and B {tuple(other.shape)}")
    return solve(input.reshape(n, n), other.reshape(n)).reshape(rest)


def matrix_rank(input: Tensor, *, atol=None, rtol=None, hermitian: bool = False,
                out=None) -> Tensor:
    """The number of singular values (|eigenvalues| with hermitian) above
    max(atol, rtol * the largest); rtol defaults to eps * max(m, n) when neither is given.

    PyTorch
    -------
    ``torch.linalg.matrix_rank``
    """
    _out(out, "matrix_rank")
    input = _float("matrix_rank", input)
    if hermitian:
        s = eigvalsh(input).abs()
    else:
        s = svdvals(input)
    m, n = input.shape[-2], input.shape[-1]
    if atol is None and rtol is None:
        rtol = finfo(input.dtype).eps * max(m, n)
    top = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    tol = 0.0
    if rtol is not None:
        tol = top * (rtol if type(rtol) is not Tensor else rtol.unsqueeze(-1))
    if atol is not None:
        a = atol if type(atol) is not Tensor else atol.unsqueeze(-1)
        tol = ops.maximum(tol if type(tol) is Tensor else ops.full_like(top, tol),
                          a if type(a) is Tensor else ops.full_like(top, a))
    return ops.sum((s > tol).to(D.int64), -1)
