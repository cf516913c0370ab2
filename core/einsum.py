"""einsum: subscripts parsed once, then diagonals, sums, permutes and batched matmuls.

Forms: explicit ('ij,jk->ik') and implicit output ('ij,jk': the letters used once, in
alphabetical order), '...' for broadcast dims, a letter repeated within one operand (a
diagonal: 'ii->i', trace 'ii'), any number of operands (contracted left to right, each
pair as one matmul).  Everything is ember ops, so gradients and every backend come free.
"""
from __future__ import annotations

from .errors import EmberValueError, ShapeError
from .tensor import Tensor

_ELLIPSIS = "."          # one placeholder per broadcast dim, made unique below


def einsum(equation: str, *operands) -> Tensor:
    """torch.einsum(equation, *operands) (operands may also come as one list)."""
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
    from .functional_extra import diagonal
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
