"""Tensor methods for the functions of functional_math (atan2, lgamma, digamma, erfinv,
histc, quantile, mode, ...), bound once at import next to _methods_extra2."""
from __future__ import annotations

from . import functional as FM
from ._methods import _inplace
from .tensor import Tensor

for _name in ("atan2", "arctan2", "lgamma", "digamma", "erfinv", "sinc", "xlog1py", "histc",
              "quantile", "nanquantile", "mode"):
    setattr(Tensor, _name, getattr(FM, _name))
for _name in ("atan2", "arctan2", "lgamma", "digamma", "erfinv", "sinc", "xlog1py"):
    setattr(Tensor, _name + "_", _inplace(getattr(FM, _name)))
