"""Bit operations as declared kernels: bitwise_and/or/xor/not and the two shifts.

ember.functional (bitwise_and, ..., the & | ^ ~ << >> operators) and ember.array_api run
them; a backend with a kernel runs each in one pass (NumPy and CuPy: backends/array_api.py;
OpenCL: backends/opencl/codegen.py).  Without one the decomposition below runs: integer
arithmetic, so every device has it.

The decompositions: a two's-complement integer's bits are arithmetic: its low byte is
x mod 256 (floor semantics, so negative numbers work too) and the rest is floor(x / 256).
and/or/xor go one byte at a time through a 256 x 256 table of the operation (one gather
per byte: 8 for int64); shifts multiply or floor-divide by a power of two read from a
table; not is -1 - x (255 - x for uint8).  Work happens in int64 and the result is cast
back, which wraps like the hardware would.

Kernel contract: inputs of one integer (or, for and/or/xor/not, bool) dtype; the output
has that dtype.  A shift count of the bit width or more, or a negative one, shifts every
bit out: 0 from a left shift, the sign (0 or -1) from a right shift, as NumPy and PyTorch.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from . import elementwise as E
from ._op import declare, rule_same, shape_broadcast, shape_first
from .creation import from_host
from .index import take

__all__: list = []        # ember.functional's bitwise_* are the public functions

_BIT_TABLES: dict = {}      # (what, device) -> an int64 tensor, built once per device


def _bit_table(what: str, device) -> Tensor:
    key = (what, device)
    t = _BIT_TABLES.get(key)
    if t is None:
        if what == "powers":          # 2**k for k < 63, then 2**63 wrapped, then 0
            host = np.array([1 << k for k in range(63)] + [-(1 << 63), 0], dtype=np.int64)
        else:
            b = np.arange(256, dtype=np.int64)
            host = getattr(np, f"bitwise_{what}").outer(b, b).reshape(-1)
        t = _BIT_TABLES[key] = from_host(host, device)
    return t


def bytewise(what: str, a: Tensor, b: Tensor) -> Tensor:
    """a and/or/xor b for two tensors of one integer or bool dtype, byte by byte."""
    dtype = a._dtype
    if dtype is D.bool_:
        return getattr(E, f"logical_{what}")(a, b)
    table = _bit_table(what, a._device)
    a, b = a.to(D.int64), b.to(D.int64)
    out = None
    for k in range(dtype.itemsize):
        last = k == dtype.itemsize - 1
        byte = take(table, (a % 256) * 256 + b % 256)
        if last and dtype.is_signed:
            byte = E.where(byte >= 128, byte - 256, byte)    # the sign lives in this byte
        term = byte * (1 << (8 * k)) if k else byte
        out = term if out is None else out + term
        if not last:
            a, b = E.floor_divide(a, 256), E.floor_divide(b, 256)
    return out.to(dtype)


def invert(x: Tensor) -> Tensor:
    """~x: every bit flipped (logical not for bool)."""
    if x._dtype is D.bool_:
        return E.logical_not(x)
    return 255 - x if x._dtype is D.uint8 else -1 - x


def _count(s: Tensor) -> Tensor:
    """A shift count in int64, a negative one as 64 (past every width: NumPy and PyTorch
    shift a negative count out entirely)."""
    s = s.to(D.int64)
    return E.where(s < 0, 64, E.minimum(s, 64))


def left_shift(a: Tensor, s: Tensor) -> Tensor:
    """a * 2**s, wrapping; shifting by the bit width or more (or a negative count) gives 0."""
    powers = _bit_table("powers", a._device)
    return (a.to(D.int64) * take(powers, _count(s))).to(a._dtype)


def right_shift(a: Tensor, s: Tensor) -> Tensor:
    """floor(a / 2**s), the sign copied in (arithmetic shift); by the width or more (or a
    negative count) only the sign is left."""
    powers = _bit_table("powers", a._device)
    s = _count(s)
    wide = a.to(D.int64)
    out = E.floor_divide(wide, take(powers, E.minimum(s, 62)))
    # 2**63 does not fit an int64: a shift by 63 or more leaves only the sign
    out = E.where(s >= 63, E.where(wide < 0, -1, 0), out)
    return out.to(a._dtype)


def _declare_bytewise(what: str, sym: str):
    return declare(f"bitwise_{what}", "composite", rule_same, sig="x, y",
                   shape=shape_broadcast,
                   doc=f"x {sym} y, bit by bit (logical {what} for bool; one integer dtype)",
                   decompose=lambda x, y: bytewise(what, x, y))


bitwise_and_op = _declare_bytewise("and", "&")
bitwise_or_op = _declare_bytewise("or", "|")
bitwise_xor_op = _declare_bytewise("xor", "^")
bitwise_not_op = declare("bitwise_not", "composite", rule_same, sig="x", shape=shape_first,
                         doc="~x: every bit flipped (logical not for bool)", decompose=invert)
bitwise_left_shift_op = declare(
    "bitwise_left_shift", "composite", rule_same, sig="x, s", shape=shape_broadcast,
    doc="x << s, wrapping; a count past the width (or negative) gives 0",
    decompose=left_shift)
bitwise_right_shift_op = declare(
    "bitwise_right_shift", "composite", rule_same, sig="x, s", shape=shape_broadcast,
    doc="x >> s, arithmetic; a count past the width (or negative) leaves the sign",
    decompose=right_shift)
