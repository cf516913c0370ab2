"""torch.* products: mm, bmm, addmm, outer, kron, tensordot, einsum, linear; triangles and
diagonals (tril, triu, diag, trace), cross.
"""
from __future__ import annotations

import builtins

from .. import amp_policy, dispatch, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..errors import (
    EmberTypeError,
    EmberValueError,
    ShapeError,
)
from ..ops._util import broadcast_shapes as _broadcast
from ..ops._util import norm_dim
from ..ops.nn import linear_op
from ..signatures import numpy_names
from ..tensor import Tensor
from ._util import _need
from .movement import select

__all__ = ["linear", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
           "baddbmm", "addbmm", "tril", "triu", "diagonal", "diag_embed", "diag", "diagflat",
           "trace", "cross", "tensordot", "kron", "einsum", "addr"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias (torch.nn.functional.linear).

    PyTorch
    -------
    ``torch.nn.functional.linear``
    """
    inputs = (input, weight) if bias is None else (input, weight, bias)
    if type(input) is Tensor and type(weight) is Tensor:
        # matmul's fast path: one dtype and device (a bias too), no casts to plan
        dtype, device = input._dtype, input._device
        if weight._dtype is dtype and weight._device is device and dtype is not D.bool_ and \
                dtype is not D.bfloat16 and (bias is None or (
                    type(bias) is Tensor and bias._dtype is dtype and bias._device is device)):
            linear_op.check(inputs, _NOATTRS)
            return dispatch.direct(linear_op, device, dtype, inputs, _NOATTRS)
    return dispatch.run(linear_op, *inputs)


_NOATTRS: dict = {}


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """input @ mat2 for two matrices.

    PyTorch
    -------
    ``torch.mm``
    """
    if _amp and amp_policy.on("mm"):      # autocast (amp_policy.py)
        return amp_policy.call("mm", mm, input, mat2)
    if type(input) is not Tensor or type(mat2) is not Tensor:
        return ops.matmul(input, mat2)               # a sparse operand (Tensor.to_sparse)
    _need("mm", input, 2)
    _need("mm", mat2, 2)
    return ops.matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched input @ mat2 for (b, n, m) and (b, m, p) tensors (no broadcasting).

    PyTorch
    -------
    ``torch.bmm``
    """
    if _amp and amp_policy.on("bmm"):      # autocast (amp_policy.py)
        return amp_policy.call("bmm", bmm, input, mat2)
    _need("bmm", input, 3)
    _need("bmm", mat2, 3)
    if input._data.shape[0] != mat2._data.shape[0]:
        raise ShapeError(f"bmm(): batch sizes differ: {tuple(input.shape)} and "
                         f"{tuple(mat2.shape)}; expected equal first dims")
    return ops.matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector.

    PyTorch
    -------
    ``torch.mv``
    """
    if _amp and amp_policy.on("mv"):      # autocast (amp_policy.py)
        return amp_policy.call("mv", mv, input, vec)
    _need("mv", input, 2)
    _need("mv", vec, 1)
    return ops.matmul(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The inner product of two 1-D tensors.

    PyTorch
    -------
    ``torch.dot``, ``torch.vdot``
    """
    if _amp and amp_policy.on("dot"):      # autocast (amp_policy.py)
        return amp_policy.call("dot", dot, input, tensor)
    _need("dot", input, 1)
    _need("dot", tensor, 1)
    if input._dtype is not tensor._dtype:
        raise EmberTypeError(f"dot: expected both vectors to have the same dtype, got "
                             f"{input._dtype.name} and {tensor._dtype.name} (torch does not "
                             "promote here); cast one, e.g. other.to(input.dtype)")
    return ops.matmul(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of conj(input) and other (1-D tensors; dot for real ones).

    PyTorch
    -------
    ``torch.vdot``
    """
    if type(input) is Tensor and input._dtype.category == D.COMPLEX:
        input = input.conj()
    return dot(input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sums over the last dims: shape input.shape[:-1] + other.shape[:-1].

    PyTorch
    -------
    ``torch.inner``
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    k = input._data.shape[-1]
    out = ops.matmul(input.reshape(-1, k), other.reshape(-1, k).mT)
    return out.reshape(input._data.shape[:-1] + other._data.shape[:-1])


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors.

    PyTorch
    -------
    ``torch.outer``, ``torch.ger``
    """
    _need("outer", input, 1)
    _need("outer", vec2, 1)
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def _scaled(input, product, beta, alpha):
    if product._dtype.category == D.INT and input._dtype.category == D.INT:
        # torch's addmm/addmv/baddbmm/addbmm on integer tensors take float scalars as the
        # tensors' integer type: truncated (beta=1.7, alpha=2.9 act as 1 and 2)
        beta = int(beta) if isinstance(beta, float) else beta
        alpha = int(alpha) if isinstance(alpha, float) else alpha
    if alpha != 1:
        product = product * alpha
    if beta == 0:                      # PyTorch ignores input then (nan and inf included)
        return product.expand(_broadcast("addmm", input._data.shape,
                                               product._data.shape))
    return (input * beta if beta != 1 else input) + product


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2).

    PyTorch
    -------
    ``torch.addmm``
    """
    if _amp and amp_policy.on("addmm"):      # autocast (amp_policy.py)
        return amp_policy.call("addmm", addmm, input, mat1, mat2, beta=beta, alpha=alpha)
    return _scaled(input, mm(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    PyTorch
    -------
    ``torch.addmv``
    """
    if _amp and amp_policy.on("addmv"):      # autocast (amp_policy.py)
        return amp_policy.call("addmv", addmv, input, mat, vec, beta=beta, alpha=alpha)
    return _scaled(input, mv(mat, vec), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices.

    PyTorch
    -------
    ``torch.baddbmm``
    """
    if _amp and amp_policy.on("baddbmm"):      # autocast (amp_policy.py)
        return amp_policy.call("baddbmm", baddbmm, input, batch1, batch2, beta=beta, alpha=alpha)
    return _scaled(input, bmm(batch1, batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * sum_b batch1[b] @ batch2[b].

    PyTorch
    -------
    ``torch.addbmm``
    """
    if _amp and amp_policy.on("addbmm"):      # autocast (amp_policy.py)
        return amp_policy.call("addbmm", addbmm, input, batch1, batch2, beta=beta, alpha=alpha)
    return _scaled(input, bmm(batch1, batch2).sum(0), beta, alpha)


def _offsets(x: Tensor) -> Tensor:
    """cols - rows for the last two dims of x, as an int64 (n, m) tensor on x's device."""
    n, m = x._data.shape[-2:]
    rows = ops.arange(n, device=x._device).reshape(n, 1)
    cols = ops.arange(m, device=x._device).reshape(1, m)
    return cols - rows


def _zero(x: Tensor):
    return False if x._dtype is D.bool_ else 0.0 if x._dtype.category == D.FLOAT else 0


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with col - row <= diagonal).

    PyTorch
    -------
    ``torch.tril``
    """
    _need("tril", input)
    if input.ndim < 2:
        raise ShapeError(f"tril: expected a tensor of at least 2 dims, got {tuple(input.shape)}")
    return ops.where(_offsets(input) <= diagonal, input, _zero(input))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with col - row >= diagonal).

    PyTorch
    -------
    ``torch.triu``
    """
    _need("triu", input)
    if input.ndim < 2:
        raise ShapeError(f"triu: expected a tensor of at least 2 dims, got {tuple(input.shape)}")
    return ops.where(_offsets(input) >= diagonal, input, _zero(input))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims dim1 and dim2 (moved last), shifted by offset.

    PyTorch
    -------
    ``torch.diagonal``
    """
    _need("diagonal", input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal: expected a tensor of at least 2 dims, got "
                         f"{tuple(input.shape)}")
    a, b = norm_dim(dim1, input.ndim, "diagonal"), norm_dim(dim2, input.ndim, "diagonal")
    if a == b:
        raise ShapeError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
    rest = [d for d in range(input.ndim) if d not in (a, b)]
    x = input.permute(rest + [a, b])
    n, m = x._data.shape[-2:]
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else
                          builtins.min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = x.reshape(x._data.shape[:-2] + (n * m,))
    index = ops.arange(start, start + length * (m + 1), m + 1, device=input._device) \
        if length else ops.zeros(0, dtype=D.int64, device=input._device)
    return ops.index_select(flat, -1, index)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose diagonals (of dims dim1, dim2) hold input's last dim.

    PyTorch
    -------
    ``torch.diag_embed``
    """
    _need("diag_embed", input)
    n = input._data.shape[-1] if input.ndim else 1
    size = n + builtins.abs(offset)
    x = input.reshape(1) if input.ndim == 0 else input
    if offset >= 0:        # row i holds x[i] at column i + offset
        line = ops.pad(x, (0, offset)).unsqueeze(-1)
    else:                  # column j holds x[j] at row j - offset
        line = ops.pad(x, (0, -offset)).unsqueeze(-2)
    eye = ops.arange(size, device=x._device)
    mask = (eye.reshape(1, size) - eye.reshape(size, 1)) == offset
    out = ops.where(mask, line, _zero(x))
    nd = out.ndim
    a, b = norm_dim(dim1, nd, "diag_embed"), norm_dim(dim2, nd, "diag_embed")
    if (a, b) == (nd - 2, nd - 1):
        return out
    if a == b:
        raise ShapeError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    dims = list(range(nd - 2))
    for d, src in sorted([(a, nd - 2), (b, nd - 1)]):
        dims.insert(d, src)
    return out.permute(dims)         # output dim i is out's dim dims[i]


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input on the diagonal of a square matrix, or a matrix's diagonal as 1-D.

    PyTorch
    -------
    ``torch.diag``
    """
    _need("diag", input)
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal)
    raise ShapeError(f"diag(): expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``.

    PyTorch
    -------
    ``torch.diagflat``
    """
    return diag_embed(input.reshape(-1), offset)


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal.

    PyTorch
    -------
    ``torch.trace``
    """
    if _amp and amp_policy.on("trace"):      # autocast (amp_policy.py)
        return amp_policy.call("trace", trace, input)
    _need("trace", input, 2)
    return diagonal(input).sum()


@numpy_names
def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """The 3-D cross product along dim (default: the first dim of size 3).

    PyTorch
    -------
    ``torch.cross``
    """
    shape = _broadcast("cross", input._data.shape, other._data.shape)
    if dim is None:
        dims = [d for d, n in enumerate(shape) if n == 3]
        if not dims:
            raise ShapeError(f"cross: no dimension of size 3 in shape {shape}")
        dim = dims[0]
    axis = norm_dim(dim, len(shape), "cross")
    if shape[axis] != 3:
        raise ShapeError(f"cross: dimension {dim} has size {shape[axis]}; expected 3")
    a, b = ops.expand(input, shape), ops.expand(other, shape)
    a0, a1, a2 = (select(a, axis, i) for i in range(3))
    b0, b1, b2 = (select(b, axis, i) for i in range(3))
    return ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract the last `dims` dims of a with the first of b (or the listed pairs).

    PyTorch
    -------
    ``torch.tensordot``
    """
    if _amp and amp_policy.on("tensordot"):      # autocast (amp_policy.py)
        return amp_policy.call("tensordot", tensordot, a, b, dims)
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [norm_dim(d, a.ndim, "tensordot") for d in da]
    db = [norm_dim(d, b.ndim, "tensordot") for d in db]
    if len(da) != len(db):
        raise ShapeError(f"tensordot: both sides need as many contracted dims, got {da} and "
                         f"{db}")
    for i, j in zip(da, db):
        # torch broadcasts a contracted dim of size 1 against the other side's: the
        # product then sums the other side over that dim
        m, n = a._data.shape[i], b._data.shape[j]
        if m != n:
            if m == 1:
                b = ops.sum(b, j, keepdim=True)
            elif n == 1:
                a = ops.sum(a, i, keepdim=True)
            else:
                raise ShapeError(f"tensordot: contracted dims {i} of a and {j} of b have sizes "
                                 f"{m} and {n}; expected equal sizes (or 1)")
    ra = [d for d in range(a.ndim) if d not in da]
    rb = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a._data.shape[d]
    left = a.permute(ra + da).reshape(-1, k)
    right = b.permute(db + rb).reshape(k, -1)
    shape = tuple(a._data.shape[d] for d in ra) + tuple(b._data.shape[d] for d in rb)
    return ops.matmul(left, right).reshape(shape)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product of ``input`` and ``other``.

    PyTorch
    -------
    ``torch.kron``
    """
    nd = builtins.max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + input._data.shape)
    b = other.reshape((1,) * (nd - other.ndim) + other._data.shape)
    inter_a = tuple(v for n in a._data.shape for v in (n, 1))
    inter_b = tuple(v for n in b._data.shape for v in (1, n))
    out = a.reshape(inter_a) * b.reshape(inter_b)
    return out.reshape(tuple(m * n for m, n in zip(a._data.shape, b._data.shape)))


_ELLIPSIS = "."          # one placeholder per broadcast dim, made unique below


def einsum(equation: str, *operands) -> Tensor:
    """torch.einsum(equation, *operands) (operands may also come as one list).

    PyTorch
    -------
    ``torch.einsum``
    """
    if _amp and amp_policy.on("einsum"):      # autocast (amp_policy.py)
        return amp_policy.call("einsum", einsum, equation, *operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise EmberValueError("einsum(): expected at least one operand")
    inputs, output = _parse(equation.replace(" ", ""), operands)
    terms = [_diagonals(x, labels) for x, labels in zip(operands, inputs)]
    sizes = _sizes(terms, equation)
    # contract left to right; a label is kept while the output or a later term needs it
    x, labels = terms[0]
    for i in range(1, len(terms)):
        later = set(output).union(*(t[1] for t in terms[i + 1:]))
        x, labels = _pair(x, labels, *terms[i], later, sizes)
    x, labels = _sum_out(x, labels, set(output))
    if labels != output:
        x = x.permute([labels.index(c) for c in output])
    return x


def _parse(eq: str, operands):
    if "->" in eq:
        lhs, out = eq.split("->")
        if "->" in out:
            raise EmberValueError(f"einsum(): equation {eq!r} has more than one '->'")
    else:
        lhs, out = eq, None
    specs = lhs.split(",")
    if len(specs) != len(operands):
        raise EmberValueError(f"einsum(): the equation names {len(specs)} operand(s) but "
                              f"{len(operands)} were given")
    # each broadcast dim becomes a placeholder character no letter uses
    ell = max((x.ndim - len(s.replace("...", "")) for s, x in zip(specs, operands)
               if "..." in s), default=0)
    marks = [chr(0x100 + i) for i in range(ell)]
    inputs = []
    for s, x in zip(specs, operands):
        if type(x) is not Tensor:
            raise EmberValueError(f"einsum(): operands must be tensors, got {type(x).__name__}")
        for c in s.replace("...", ""):
            if not c.isalpha():
                raise EmberValueError(f"einsum(): invalid subscript {c!r} in {eq!r}; expected "
                                      "letters, ',', '->' and '...'")
        if "..." in s:
            n = x.ndim - len(s.replace("...", ""))
            if n < 0:
                raise ShapeError(f"einsum(): subscripts {s!r} name more dims than the operand "
                                 f"has ({tuple(x.shape)})")
            s = s.replace("...", "".join(marks[ell - n:]))
        if len(s) != x.ndim:
            raise ShapeError(f"einsum(): subscripts {s!r} name {len(s)} dims but the operand "
                             f"has shape {tuple(x.shape)}")
        inputs.append(s)
    if out is None:
        counts: dict = {}
        for s in inputs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(marks) + "".join(sorted(c for c, k in counts.items()
                                              if k == 1 and c not in marks))
    else:
        out = out.replace("...", "".join(marks))
        for c in out:
            if out.count(c) > 1 or not any(c in s for s in inputs):
                raise EmberValueError(f"einsum(): output subscript {c!r} appears twice or in "
                                      f"no input of {eq!r}")
    return inputs, out


def _diagonals(x: Tensor, labels: str):
    """A label repeated within one operand: take that diagonal (it moves to the end)."""
    while True:
        repeated = next((c for c in labels if labels.count(c) > 1), None)
        if repeated is None:
            return x, labels
        a = labels.index(repeated)
        b = labels.index(repeated, a + 1)
        x = diagonal(x, 0, a, b)
        labels = "".join(c for i, c in enumerate(labels) if i not in (a, b)) + repeated


def _sizes(terms, eq):
    sizes: dict = {}
    for x, labels in terms:
        for c, n in zip(labels, x._data.shape):
            m = sizes.get(c, 1)
            if n != 1 and m != 1 and n != m:
                raise ShapeError(f"einsum(): subscript {c!r} has size {m} in one operand and "
                                 f"{n} in another in {eq!r}")
            sizes[c] = max(n, m) if n != 1 else m
    return sizes


def _sum_out(x, labels, keep):
    gone = [i for i, c in enumerate(labels) if c not in keep]
    if gone:
        x = x.sum(gone)
        labels = "".join(c for c in labels if c in keep)
    return x, labels


def _pair(a, la, b, lb, later, sizes):
    """a and b contracted over the labels they share that nothing later needs."""
    a, la = _sum_out(a, la, set(lb) | later)
    b, lb = _sum_out(b, lb, set(la) | later)
    batch = [c for c in la if c in lb and c in later]
    contract = [c for c in la if c in lb and c not in later]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]

    def arrange(x, labels, order):
        x = x.permute([labels.index(c) for c in order]) if list(labels) != order else x
        return x.expand(tuple(sizes[c] for c in order))
    a = arrange(a, la, batch + left + contract)
    b = arrange(b, lb, batch + contract + right)
    nb, nl, nc, nr = (_prod(sizes[c] for c in group) for group in (batch, left, contract,
                                                                    right))
    out = a.reshape(nb, nl, nc) @ b.reshape(nb, nc, nr)
    labels = batch + left + right
    return out.reshape(tuple(sizes[c] for c in labels)), "".join(labels)


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2) (for bool tensors: input or (vec1 and
    vec2), as torch's).

    PyTorch
    -------
    ``torch.addr``
    """
    for x in (input, vec1, vec2):
        if type(x) is not Tensor:
            raise EmberTypeError(f"addr(): expected Tensors, got {type(x).__name__}")
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(f"addr: expected 1-D vectors, got shapes {tuple(vec1.shape)} and "
                         f"{tuple(vec2.shape)}")
    if input._dtype is D.bool_ and vec1._dtype is D.bool_ and vec2._dtype is D.bool_:
        prod = vec1.reshape(-1, 1).logical_and(vec2.reshape(1, -1))
        if not alpha:
            prod = prod.logical_and(prod.logical_not())
        shape = _broadcast("addr", input._data.shape, prod._data.shape)
        return prod.expand(shape) if not beta else prod.logical_or(input).expand(shape)
    if input._dtype.category != D.FLOAT and (isinstance(beta, float) or
                                             isinstance(alpha, float)):
        raise EmberTypeError("addr(): for integral input tensors, beta and alpha must not be "
                             "floating point numbers")
    return _scaled(input, outer(vec1, vec2), beta, alpha)
