"""Bitwise functions of the array API standard: the standard's promotion and errors over
ember's declared bit kernels (ops/bitwise.py: one pass where the backend has them, integer
arithmetic on every device)."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..ops import bitwise as B
from ..tensor import Tensor
from ._dtypes import need, promote


def _pair(name, x1, x2):
    x1, x2 = promote(name, x1, x2, "integer or boolean")
    like = x1 if type(x1) is Tensor else x2
    return [x if type(x) is Tensor else ops.full((), x, dtype=like._dtype, device=like._device)
            for x in (x1, x2)]


def bitwise_and(x1, x2, /) -> Tensor:
    """x1 & x2 (logical and for bool).

    PyTorch
    -------
    ``torch.bitwise_and``
    """
    return run(B.bitwise_and_op, *_pair("bitwise_and", x1, x2))


def bitwise_or(x1, x2, /) -> Tensor:
    """x1 | x2 (logical or for bool).

    PyTorch
    -------
    ``torch.bitwise_or``
    """
    return run(B.bitwise_or_op, *_pair("bitwise_or", x1, x2))


def bitwise_xor(x1, x2, /) -> Tensor:
    """x1 ^ x2 (logical xor for bool).

    PyTorch
    -------
    ``torch.bitwise_xor``
    """
    return run(B.bitwise_xor_op, *_pair("bitwise_xor", x1, x2))


def bitwise_invert(x: Tensor, /) -> Tensor:
    """~x: every bit flipped (logical not for bool).

    PyTorch
    -------
    ``torch.bitwise_not``
    """
    need("bitwise_invert", x, "integer or boolean")
    return run(B.bitwise_not_op, x)


def _shift_amount(name, x1, x2):
    a, b = _pair(name, x1, x2)
    if a._dtype is D.bool_:
        need(name, a, "integer")
    return a, b      # a negative count (the standard leaves it open): as NumPy, all out


def bitwise_left_shift(x1, x2, /) -> Tensor:
    """x1 << x2: x1 * 2**x2, wrapping; shifting by the bit width or more gives 0.

    PyTorch
    -------
    ``torch.bitwise_left_shift``
    """
    return run(B.bitwise_left_shift_op, *_shift_amount("bitwise_left_shift", x1, x2))


def bitwise_right_shift(x1, x2, /) -> Tensor:
    """x1 >> x2: floor(x1 / 2**x2), the sign copied in (arithmetic shift).

    PyTorch
    -------
    ``torch.bitwise_right_shift``
    """
    return run(B.bitwise_right_shift_op, *_shift_amount("bitwise_right_shift", x1, x2))
