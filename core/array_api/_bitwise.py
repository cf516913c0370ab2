"""Bitwise functions of the array API standard, from integer arithmetic (every device).

ember has no bitwise primitives, but a two's-complement integer's bits are arithmetic:
its low byte is x mod 256 (floor semantics, so negative numbers work too) and the rest is
floor(x / 256).  and/or/xor go one byte at a time through a 256 x 256 table of the
operation (one gather per byte: 8 for int64); shifts multiply or floor-divide by a power
of two read from a table; invert is -1 - x (255 - x for uint8).  Work happens in int64
and the result is cast back, which wraps like the hardware would.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .. import ops
from ..tensor import Tensor
from ._dtypes import need, promote

_TABLES: dict = {}      # (what, device) -> an int64 tensor, built once per device


def _table(what: str, device) -> Tensor:
    key = (what, device)
    t = _TABLES.get(key)
    if t is None:
        if what == "powers":          # 2**k for k < 63, then 2**63 wrapped, then 0
            host = np.array([1 << k for k in range(63)] + [-(1 << 63), 0], dtype=np.int64)
        else:
            b = np.arange(256, dtype=np.int64)
            host = getattr(np, f"bitwise_{what}").outer(b, b).reshape(-1)
        t = _TABLES[key] = ops.from_host(host, device)
    return t


def _pair(name, x1, x2):
    x1, x2 = promote(name, x1, x2, "integer or boolean")
    like = x1 if type(x1) is Tensor else x2
    return [x if type(x) is Tensor else ops.full((), x, dtype=like._dtype, device=like._device)
            for x in (x1, x2)]


def _bytewise(what: str, x1, x2) -> Tensor:
    a, b = _pair(f"bitwise_{what}", x1, x2)
    dtype = a._dtype
    if dtype is D.bool_:
        return getattr(ops, f"logical_{what}")(a, b)
    table = _table(what, a._device)
    a, b = a.to(D.int64), b.to(D.int64)
    out = None
    for k in range(dtype.itemsize):
        last = k == dtype.itemsize - 1
        byte = ops.take(table, (a % 256) * 256 + b % 256)
        if last and dtype.is_signed:
            byte = ops.where(byte >= 128, byte - 256, byte)    # the sign lives in this byte
        term = byte * (1 << (8 * k)) if k else byte
        out = term if out is None else out + term
        if not last:
            a, b = ops.floor_divide(a, 256), ops.floor_divide(b, 256)
    return out.to(dtype)


def bitwise_and(x1, x2, /) -> Tensor:
    """x1 & x2 (logical and for bool)."""
    return _bytewise("and", x1, x2)


def bitwise_or(x1, x2, /) -> Tensor:
    """x1 | x2 (logical or for bool)."""
    return _bytewise("or", x1, x2)


def bitwise_xor(x1, x2, /) -> Tensor:
    """x1 ^ x2 (logical xor for bool)."""
    return _bytewise("xor", x1, x2)


def bitwise_invert(x: Tensor, /) -> Tensor:
    """~x: every bit flipped (logical not for bool)."""
    need("bitwise_invert", x, "integer or boolean")
    if x._dtype is D.bool_:
        return ops.logical_not(x)
    return 255 - x if x._dtype is D.uint8 else -1 - x


def _shift_amount(name, x1, x2):
    a, b = _pair(name, x1, x2)
    if a._dtype is D.bool_:
        need(name, a, "integer")
    return a, ops.maximum(b.to(D.int64), 0)     # negative shifts: the standard leaves them


def bitwise_left_shift(x1, x2, /) -> Tensor:
    """x1 << x2: x1 * 2**x2, wrapping; shifting by the bit width or more gives 0."""
    a, s = _shift_amount("bitwise_left_shift", x1, x2)
    powers = _table("powers", a._device)
    return (a.to(D.int64) * ops.take(powers, ops.minimum(s, 64))).to(a._dtype)


def bitwise_right_shift(x1, x2, /) -> Tensor:
    """x1 >> x2: floor(x1 / 2**x2), the sign copied in (arithmetic shift)."""
    a, s = _shift_amount("bitwise_right_shift", x1, x2)
    powers = _table("powers", a._device)
    wide = a.to(D.int64)
    out = ops.floor_divide(wide, ops.take(powers, ops.minimum(s, 62)))
    # 2**63 does not fit an int64: a shift by 63 or more leaves only the sign
    out = ops.where(s >= 63, ops.where(wide < 0, -1, 0), out)
    return out.to(a._dtype)
