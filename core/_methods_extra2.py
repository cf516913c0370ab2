"""Tensor methods and operators for the functions of functional_extra2 (bit operations on
integers, index and mask writes, scans of extremes, rounding to decimals).

Bound once at import (core/__init__.py imports this next to _methods_extra).
"""
from __future__ import annotations

from . import dtypes as D
from . import functional as FX2
from ._methods import _inplace
from .functional._util import _INTS
from .tensor import Tensor

for _name in ("tensor_split", "diff", "heaviside", "cummax", "cummin", "aminmax",
              "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
              "bitwise_right_shift", "index_put", "masked_scatter"):
    setattr(Tensor, _name, getattr(FX2, _name))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
              "bitwise_right_shift", "index_put", "masked_scatter", "heaviside"):
    setattr(Tensor, _name + "_", _inplace(getattr(FX2, _name)))
Tensor.round = FX2.round
Tensor.round_ = _inplace(FX2.round)


def _integer(x) -> bool:
    dtype = x._dtype if type(x) is Tensor else D.scalar_dtype(x)
    return dtype in _INTS


def _with_integers(bool_form, bit_form, reflected=False):
    # bool tensors keep _methods' logical form (and its error for floats); integers get bits
    def method(self, other):
        if _integer(self) and (_integer(other) or type(other) is bool):
            return bit_form(other, self) if reflected else bit_form(self, other)
        return bool_form(self, other)
    return method


for _symbol, _form in (("and", FX2.bitwise_and), ("or", FX2.bitwise_or),
                       ("xor", FX2.bitwise_xor)):
    _bool_form = getattr(Tensor, f"__{_symbol}__")
    setattr(Tensor, f"__{_symbol}__", _with_integers(_bool_form, _form))
    setattr(Tensor, f"__r{_symbol}__", _with_integers(_bool_form, _form, reflected=True))
_bool_invert = Tensor.__invert__
Tensor.__invert__ = lambda self: (FX2.bitwise_not(self) if _integer(self)
                                  else _bool_invert(self))
Tensor.__lshift__ = lambda self, other: FX2.bitwise_left_shift(self, other)
Tensor.__rlshift__ = lambda self, other: FX2.bitwise_left_shift(other, self)
Tensor.__rshift__ = lambda self, other: FX2.bitwise_right_shift(self, other)
Tensor.__rrshift__ = lambda self, other: FX2.bitwise_right_shift(other, self)
