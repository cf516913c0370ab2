"""Conformance rows of the in-place ops (add_, sub_, mul_, div_ and the operators +=, //=)."""
from __future__ import annotations

from ._table import ALL_FLOATS, Input, M, Rows, S

ROWS = Rows("inplace")
case = ROWS.case


def _inplace_case(x, z, ember=True):
    y = x * 1 if ember else x.copy()
    if ember:
        y.add_(z).sub_(z, alpha=2).mul_(z).div_(z + 1)
    else:
        y += z
        y -= 2 * z
        y *= z
        y /= z + 1
    return y


case("add_", lambda E, x, z: _inplace_case(x, z), lambda np, x, z: _inplace_case(x, z, False),
     Input(M), Input((3, 4), "p"), dtypes=ALL_FLOATS, ops=("add_", "sub_", "mul_", "div_"))
case("add_:int", lambda E, x, z: _inplace_int(x, z), lambda np, x, z: _inplace_int(x, z, False),
     Input(S, "i"), Input(S, "n"), dtypes=("int64", "int32", "uint8"), grad=False,
     ops=("add_", "sub_", "mul_"))


def _inplace_int(x, z, ember=True):
    y = x + 0 if ember else x.copy()
    y += z
    y *= 2
    y -= z
    y //= z
    return y
