"""Shape helpers shared by op declarations and backends: dims, broadcasting, reshape sizes."""
from __future__ import annotations

from ..errors import EmberIndexError, EmberTypeError, ShapeError


def norm_dim(dim, ndim: int, op: str) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        if hasattr(dim, "__index__"):
            dim = dim.__index__()
        else:
            raise EmberTypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise EmberIndexError(
            f"{op}: dim {dim} is out of range for a tensor with {ndim} dimension(s); "
            f"expected a dim in [{-n}, {n - 1}]")
    return dim % n


def norm_dims(dims, ndim: int, op: str) -> tuple:
    """A sorted tuple of distinct non-negative dims; None means every dim."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, (list, tuple)):
        out = tuple(sorted(norm_dim(d, ndim, op) for d in dims))
        if len(set(out)) != len(out):
            raise ShapeError(f"{op}: dim {tuple(dims)} names a dimension twice; expected "
                             "distinct dims")
        return out if ndim else ()
    return (norm_dim(dims, ndim, op),) if ndim else ()


def _broadcast2(a: tuple, b: tuple):
    """The broadcast of two shapes, or None if they do not broadcast (the common case of
    broadcast_shapes, without generators: it runs on every broadcasting op)."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    lead = len(a) - len(b)
    for i, n in enumerate(b):
        m = out[lead + i]
        if m == 1:
            out[lead + i] = n
        elif n != 1 and n != m:
            return None
    return tuple(out)


def broadcast_shapes(op: str, *shapes) -> tuple:
    if len(shapes) == 2:
        out = _broadcast2(shapes[0], shapes[1])
        if out is not None:
            return out
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            m = out[i]
            if m == 1:
                out[i] = n
            elif n != 1 and n != m:
                raise ShapeError(
                    f"{op}: shapes {' and '.join(str(tuple(x)) for x in shapes)} do not "
                    f"broadcast: dimension {i - ndim} is {m} in one and {n} in another; "
                    "expected equal sizes or 1 (reshape or unsqueeze one of them)")
    return tuple(out)


def as_shape(shape, op: str) -> tuple:
    """Accept f(2, 3), f((2, 3)), f([2, 3]) and Size; return a tuple of ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if type(shape) is tuple and all(type(s) is int for s in shape):
        return shape                          # the common case, already plain ints
    out = []
    for s in shape:
        if hasattr(s, "__index__") and not isinstance(s, bool):
            out.append(s.__index__())
        else:
            raise EmberTypeError(f"{op}: expected a shape of ints, got {tuple(shape)!r}")
    return tuple(out)


def spread_or_keyword(spread: tuple, keyword, op: str, name: str) -> tuple:
    """The ints of f(2, 3) / f((2, 3)), or of torch's keyword for them (x.reshape(shape=...),
    x.permute(dims=...)), never both."""
    if keyword is None:
        return spread
    if spread:
        raise EmberTypeError(f"{op}() got multiple values for argument '{name}'")
    return (keyword,)


def resolve_reshape(op: str, shape: tuple, new: tuple) -> tuple:
    """`new` with its -1 (at most one) resolved against shape's element count; one pass."""
    numel = 1
    for s in shape:
        numel *= s
    known, unknown, bad = 1, -1, False
    for i, s in enumerate(new):
        if s >= 0:
            known *= s
        elif s == -1 and unknown < 0:
            unknown = i
        else:
            bad = True
    if bad:
        raise ShapeError(f"{op}: bad shape {new}: at most one -1 and no other negative size")
    if unknown < 0:
        if known == numel:
            return new                        # fully given and consistent: nothing to do
        raise ShapeError(f"{op}: shape {new} is invalid for input of size {numel} (shape "
                         f"{shape}); expected sizes whose product is {numel}")
    if known == 0 or numel % known:
        raise ShapeError(f"{op}: shape {new} is invalid for input of size {numel} "
                         f"(shape {shape})")
    return new[:unknown] + (numel // known,) + new[unknown + 1:]


def prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n
