"""Dynamic dimensions: Dim (what a user declares) and Expr (a size written in terms of them).

An exported graph's kernels carry sizes baked in at capture (reshape's `shape`, slice
bounds, the `n` of a mean).  Where such a size follows a dynamic dimension it is stored as
an Expr, `coef * prod(dim ** power) + offset` (powers +1 or -1), found by capturing the
function at other sizes of each dimension and fitting what changed (trace.py); evaluated
for the sizes of each call.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import EmberValueError

MAX_SIZE = 2**62


@dataclass(frozen=True)
class Dim:
    """A dynamic dimension (torch.export.Dim): its name and the sizes it may take.

    PyTorch
    -------
    ``torch.export.Dim``
    """

    name: str
    min: int = 1
    max: int = MAX_SIZE

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name.isidentifier()):
            raise EmberValueError(f"export.Dim: the name must be an identifier, got "
                                  f"{self.name!r}")
        if not (isinstance(self.min, int) and isinstance(self.max, int)
                and 0 <= self.min <= self.max <= MAX_SIZE):
            raise EmberValueError(f"export.Dim({self.name!r}): expected integers "
                                  f"0 <= min <= max <= 2**62, got min={self.min!r}, "
                                  f"max={self.max!r}")

    def __repr__(self) -> str:
        return f"Dim({self.name!r}, min={self.min}, max={self.max})"


class Expr:
    """coef * prod(dim ** power) + offset over named dimensions; ints stay ints.

    PyTorch
    -------
    ``torch.export.Dim`` is the nearest (ember's symbolic size expression).
    """

    __slots__ = ("coef", "powers", "offset")

    def __init__(self, coef, powers: dict, offset=0):
        self.coef = coef
        self.powers = dict(sorted(powers.items()))
        self.offset = offset

    @classmethod
    def dim(cls, name: str) -> Expr:
        return cls(1, {name: 1})

    @property
    def dims(self) -> tuple:
        return tuple(self.powers)

    @property
    def is_int(self) -> bool:
        return (isinstance(self.coef, int) and isinstance(self.offset, int)
                and all(p > 0 for p in self.powers.values()))

    @property
    def plain(self) -> str | None:
        """The dimension's name when the Expr is exactly one dimension."""
        if self.coef == 1 and self.offset == 0 and len(self.powers) == 1:
            (name, power), = self.powers.items()
            return name if power == 1 else None
        return None

    def evaluate(self, sizes: dict):
        value = self.coef
        for name, power in self.powers.items():
            value = value * sizes[name] if power > 0 else value / sizes[name]
        return value + self.offset

    def __eq__(self, other) -> bool:
        return isinstance(other, Expr) and (self.coef, self.powers, self.offset) == (
            other.coef, other.powers, other.offset)

    def __hash__(self) -> int:
        return hash((self.coef, tuple(self.powers.items()), self.offset))

    def __repr__(self) -> str:
        top = [n for n, p in self.powers.items() if p > 0]
        bottom = [n for n, p in self.powers.items() if p < 0]
        text = "*".join(([] if self.coef == 1 and top else [repr(self.coef)]) + top)
        if bottom:
            text += "/" + ("*".join(bottom) if len(bottom) == 1 else f"({'*'.join(bottom)})")
        if self.offset:
            text += f" {'+' if self.offset > 0 else '-'} {abs(self.offset)!r}"
        return text

    def to_json(self) -> dict:
        return {"coef": self.coef, "powers": self.powers, "offset": self.offset}


def fit(base, variants: dict, sizes: dict, changed: dict):
    """The Expr (or constant) that gives `base` at `sizes` and variants[d] when dimension d
    alone takes changed[d]; None when no such expression fits."""
    moved = {d: v for d, v in variants.items() if v != base}
    if not moved:
        return base
    if isinstance(base, bool) or not isinstance(base, (int, float)):
        return None
    powers = {}
    for d, v in moved.items():
        ratio = changed[d] / sizes[d]
        if base != 0 and math.isclose(v / base, ratio, rel_tol=1e-9):
            powers[d] = 1
        elif base != 0 and math.isclose(v / base, 1 / ratio, rel_tol=1e-9):
            powers[d] = -1
        else:
            powers = None
            break
    if powers is not None:
        scale = math.prod(sizes[d] ** p for d, p in powers.items())
        coef = base / scale
        if isinstance(base, int) and all(p > 0 for p in powers.values()):
            if base % scale:
                return None
            coef = base // scale
        return Expr(coef, powers)
    if len(moved) == 1 and isinstance(base, int):       # a * d + b: a bound, an offset
        (d, v), = moved.items()
        step, rest = divmod(v - base, changed[d] - sizes[d])
        if rest:
            return None
        return Expr(step, {d: 1}, base - step * sizes[d])
    return None


def evaluate(value, sizes: dict):
    """value with every Expr in it (nested in tuples, lists, slices) evaluated."""
    if isinstance(value, Expr):
        out = value.evaluate(sizes)
        return int(out) if value.is_int else float(out)
    if isinstance(value, tuple):
        return tuple(evaluate(v, sizes) for v in value)
    if isinstance(value, list):
        return [evaluate(v, sizes) for v in value]
    if isinstance(value, slice):
        return slice(evaluate(value.start, sizes), evaluate(value.stop, sizes),
                     evaluate(value.step, sizes))
    return value


def has_expr(value) -> bool:
    if isinstance(value, Expr):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_expr(v) for v in value)
    if isinstance(value, slice):
        return has_expr((value.start, value.stop, value.step))
    return False
