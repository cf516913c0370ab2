"""ember.array_api: the Python array API standard (2023.12) over ember tensors, every device.

`x.__array_namespace__()` returns this module, so array-API consumers (scikit-learn with
array_api_dispatch, SciPy with SCIPY_ARRAY_API=1, array_api_compat) take ember tensors.
Functions follow the standard's signatures, dtype rules and promotion (0-d arrays promote
like any array; see _dtypes.py), and are written with ember ops, so they run on every
device.  What is not covered, and what still takes a host round trip, is listed in
docs/array-api.md.
"""
from __future__ import annotations

import math

from .. import dtypes as _D
from ..utils.dlpack import from_dlpack
from . import fft, linalg
from ._bitwise import (
                       bitwise_and,
                       bitwise_invert,
                       bitwise_left_shift,
                       bitwise_or,
                       bitwise_right_shift,
                       bitwise_xor,
)
from ._creation import (
                       arange,
                       asarray,
                       empty,
                       empty_like,
                       eye,
                       full,
                       full_like,
                       linspace,
                       meshgrid,
                       ones,
                       ones_like,
                       tril,
                       triu,
                       zeros,
                       zeros_like,
)
from ._dtypes import astype, can_cast, finfo, iinfo, isdtype, result_type
from ._elementwise import (
                       abs,
                       acos,
                       acosh,
                       add,
                       asin,
                       asinh,
                       atan,
                       atan2,
                       atanh,
                       ceil,
                       clip,
                       conj,
                       copysign,
                       cos,
                       cosh,
                       divide,
                       equal,
                       exp,
                       expm1,
                       floor,
                       floor_divide,
                       greater,
                       greater_equal,
                       hypot,
                       imag,
                       isfinite,
                       isinf,
                       isnan,
                       less,
                       less_equal,
                       log,
                       log1p,
                       log2,
                       log10,
                       logaddexp,
                       logical_and,
                       logical_not,
                       logical_or,
                       logical_xor,
                       maximum,
                       minimum,
                       multiply,
                       negative,
                       not_equal,
                       positive,
                       pow,
                       real,
                       reciprocal,
                       remainder,
                       round,
                       sign,
                       signbit,
                       sin,
                       sinh,
                       sqrt,
                       square,
                       subtract,
                       tan,
                       tanh,
                       trunc,
)
from ._info import __array_namespace_info__
from ._manipulation import (
                       broadcast_arrays,
                       broadcast_shapes,
                       broadcast_to,
                       expand_dims,
                       flip,
                       moveaxis,
                       permute_dims,
                       repeat,
                       reshape,
                       roll,
                       squeeze,
                       stack,
                       take,
                       take_along_axis,
                       tile,
                       unstack,
)
from ._sorting import (
                       argmax,
                       argmin,
                       argsort,
                       isin,
                       nonzero,
                       searchsorted,
                       sort,
                       unique_all,
                       unique_counts,
                       unique_inverse,
                       unique_values,
                       where,
)
from ._statistical import (
                       all,
                       any,
                       count_nonzero,
                       cumulative_prod,
                       cumulative_sum,
                       diff,
                       max,
                       mean,
                       min,
                       prod,
                       std,
                       sum,
                       var,
)
from ._util import concat
from .linalg import matmul, matrix_transpose, tensordot, vecdot

__array_api_version__ = "2023.12"

bool = _D.bool_  # noqa: A001
int8, int16, int32, int64, uint8 = _D.int8, _D.int16, _D.int32, _D.int64, _D.uint8
float32, float64 = _D.float32, _D.float64
complex64, complex128 = _D.complex64, _D.complex128
float16, bfloat16 = _D.float16, _D.bfloat16          # extensions: not standard dtypes

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

__all__ = [
    "__array_api_version__", "__array_namespace_info__", "fft", "linalg",
    # dtypes and constants
    "bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
    "float64", "complex64", "complex128", "e", "pi", "inf", "nan", "newaxis",
    # creation
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    # data types
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    # elementwise
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal",
    "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
    "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "multiply", "negative", "not_equal", "positive", "pow", "real", "reciprocal",
    "remainder", "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract",
    "tan", "tanh", "trunc",
    # linear algebra in the main namespace
    "matmul", "matrix_transpose", "tensordot", "vecdot",
    # manipulation and indexing
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
    "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "take",
    "take_along_axis", "tile", "unstack",
    # searching, sorting, sets
    "argmax", "argmin", "argsort", "isin", "nonzero", "searchsorted", "sort", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "where",
    # statistical and utility
    "all", "any", "count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "max",
    "mean", "min", "prod", "std", "sum", "var",
]
