"""Op declarations by family; this module gathers their public functions.

OPS (name -> Op) is the registry of primitives every backend implements.
"""
from __future__ import annotations

import types as _types

from ._op import COMPOSITES, OPS, Op
from .creation import (
                       Generator,
                       arange,
                       as_tensor,
                       bernoulli_mask,
                       empty,
                       empty_like,
                       eye,
                       from_host,
                       from_numpy,
                       full,
                       full_like,
                       get_rng_state,
                       initial_seed,
                       linspace,
                       manual_seed,
                       normal,
                       ones,
                       ones_like,
                       rand,
                       randint,
                       randn,
                       randperm,
                       set_rng_state,
                       tensor,
                       uniform,
                       zeros,
                       zeros_like,
)
from .elementwise import BINARY, UNARY, cast, relu, where
from .index import (
                       argwhere,
                       gather,
                       getitem,
                       index_add,
                       index_select,
                       nonzero,
                       scatter_add,
                       setitem,
                       take,
                       take_along,
)
from .linalg import matmul
from .movement import (
                       cat,
                       chunk,
                       contiguous,
                       expand,
                       flatten,
                       flip,
                       movedim,
                       pad,
                       permute,
                       reshape,
                       slice_scatter,
                       split,
                       squeeze,
                       stack,
                       transpose,
                       unsqueeze,
)
from .nn import fold, unfold
from .reduce import all, amax, amin, any, argmax, argmin, prod, sum

neg = UNARY["neg"]
abs = UNARY["abs"]
sign = UNARY["sign"]
exp = UNARY["exp"]
log = UNARY["log"]
log1p = UNARY["log1p"]
expm1 = UNARY["expm1"]
sqrt = UNARY["sqrt"]
rsqrt = UNARY["rsqrt"]
sin = UNARY["sin"]
cos = UNARY["cos"]
tanh = UNARY["tanh"]
sigmoid = UNARY["sigmoid"]
erf = UNARY["erf"]
floor = UNARY["floor"]
ceil = UNARY["ceil"]
round = UNARY["round"]
reciprocal = UNARY["reciprocal"]
logical_not = UNARY["logical_not"]
isnan = UNARY["isnan"]
isinf = UNARY["isinf"]
isfinite = UNARY["isfinite"]

add = BINARY["add"]
sub = BINARY["sub"]
mul = BINARY["mul"]
div = BINARY["div"]
pow = BINARY["pow"]
maximum = BINARY["maximum"]
minimum = BINARY["minimum"]
remainder = BINARY["remainder"]
floor_divide = BINARY["floor_divide"]
eq = BINARY["eq"]
ne = BINARY["ne"]
lt = BINARY["lt"]
le = BINARY["le"]
gt = BINARY["gt"]
ge = BINARY["ge"]
logical_and = BINARY["logical_and"]
logical_or = BINARY["logical_or"]
logical_xor = BINARY["logical_xor"]
subtract, multiply, divide, true_divide = sub, mul, div, div
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

# functions only: the family modules (ops.nn, ...) must not shadow ember.nn on `import *`
__all__ = sorted(k for k, v in globals().items()
                 if not k.startswith("_") and not isinstance(v, _types.ModuleType))
