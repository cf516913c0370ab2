"""Op declarations by family; this module gathers their public functions.

REGISTRY (name -> Op) holds every declaration; OPS the primitives every backend
implements, KERNELS the declared kernels a backend may implement (see _op.py).
"""
from __future__ import annotations

from . import decompositions  # noqa: F401  (declares inv, solve, det, cholesky, eigh)
from ._op import KERNELS, OPS, REGISTRY, Op, declared_names, describe
from .creation import (
                       Generator,
                       arange,
                       as_tensor,
                       bernoulli_mask,  # noqa: F401  (ember.ops.bernoulli_mask: dropout)
                       empty,
                       empty_like,
                       eye,
                       from_host,  # noqa: F401  (ember.ops.from_host, not public)
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
                       getitem,  # noqa: F401  (Tensor.__getitem__)
                       index_add,
                       index_select,
                       nonzero,
                       scatter_add,
                       setitem,  # noqa: F401  (Tensor.__setitem__)
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
from .scan import cumprod, cumsum, logcumsumexp
from .sorting import argsort, kthvalue, median, msort, sort, topk, unique

globals().update(UNARY)              # ember.exp, ember.sigmoid, ... one per declaration
globals().update(BINARY)             # ember.add, ember.eq, ...
subtract, multiply, divide, true_divide = sub, mul, div, div  # noqa: F821
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # noqa: F821

_FUNCTIONS = ("arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full",
              "full_like", "get_rng_state", "initial_seed", "linspace", "manual_seed", "normal",
              "ones", "ones_like", "rand", "randint", "randn", "randperm", "set_rng_state",
              "tensor", "uniform", "zeros", "zeros_like", "Generator", "cast", "relu", "where",
              "argwhere", "gather", "index_add", "index_select", "nonzero", "scatter_add",
              "take", "matmul", "cat", "chunk", "contiguous", "expand", "flatten", "flip",
              "movedim", "pad", "permute", "reshape", "slice_scatter", "split", "squeeze",
              "stack", "transpose", "unsqueeze", "fold", "unfold", "all", "amax", "amin", "any",
              "argmax", "argmin", "prod", "sum", "subtract", "multiply", "divide",
              "true_divide", "greater", "greater_equal", "less", "less_equal", "not_equal",
              # scans and sorting (scan.py, sorting.py)
              "cumsum", "cumprod", "logcumsumexp", "argsort", "sort", "topk", "kthvalue",
              "median", "msort", "unique")
# the public op functions (what `from ember.ops import *` and ember.* re-export): the
# elementwise ones from their declarations, the rest listed; registries and helpers stay
# inside ember.ops
__all__ = sorted({*UNARY, *BINARY, *_FUNCTIONS})
