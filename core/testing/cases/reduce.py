"""Conformance rows of the reductions, and of softmax, log_softmax and logsumexp."""
from __future__ import annotations

import math

import numpy as np

from ._references import _lse, _softmax
from ._table import ALL_FLOATS, INTS, Input, M, Rows, S, _method

ROWS = Rows("reduce")
case = ROWS.case

for _name, _ref in [("sum", np.sum), ("prod", np.prod), ("amax", np.max), ("amin", np.min)]:
    _op = {"amax": "max", "amin": "min"}.get(_name, _name)
    case(_name + ":all", _method(_name), (lambda r: lambda np, x: r(x))(_ref), Input(M),
         dtypes=ALL_FLOATS, ops=(_op,))
    case(_name + ":dim", (lambda n: lambda E, x: getattr(x, n)(1))(_name),
         (lambda r: lambda np, x: r(x, axis=1))(_ref), Input(M), ops=(_op,))
    case(_name + ":dims_keepdim", (lambda n: lambda E, x: getattr(x, n)((0, 2), keepdim=True))(
        _name), (lambda r: lambda np, x: r(x, axis=(0, 2), keepdims=True))(_ref), Input(M),
        ops=(_op,))
    case(_name + ":int", (lambda n: lambda E, x: (getattr(x, n)(0), getattr(x, n)()))(_name),
         (lambda r: lambda np, x: (r(x, axis=0), r(x)))(_ref), Input(S, "i"), dtypes=INTS,
         grad=False, out_dtype=None if _name in ("amax", "amin") else "int64", ops=(_op,))
    case(_name + ":special", (lambda n: lambda E, x: getattr(x, n)(1))(_name),
         (lambda r: lambda np, x: r(x, axis=1))(_ref),
         Input((4, 3), "f", (math.nan, 1.0, 2.0, math.inf, -1.0, 2.0, -math.inf, math.inf,
                             0.0, 1.0, math.nan, -math.inf)), grad=False, ops=(_op,))
case("sum:bool", lambda E, x: (x.sum(), x.sum(0), x.prod(1)),
     lambda np, x: (x.sum(), x.sum(0), x.astype(np.int64).prod(1)), Input(S, "b"),
     dtypes=("bool",), grad=False, out_dtype="int64", ops=("sum", "prod"))
case("amax:bool", lambda E, x: (x.amax(1), x.amin()), lambda np, x: (x.max(1), x.min()),
     Input(S, "b"), dtypes=("bool",), grad=False, ops=("max", "min"))
case("sum:long", lambda E, x: x.sum(), lambda np, x: x.astype(np.float64).sum(),
     Input((1000,), "f"), dtypes=ALL_FLOATS, grad=False, layouts=False, atol=1e-3, rtol=1e-3)
case("sum:empty", lambda E, x: (x.sum(0), x.sum(), x.prod(0), x.amax(1)),
     lambda np, x: (x.sum(0), x.sum(), x.prod(0), x.max(1)), Input((0, 3)), grad=False,
     ops=("sum", "prod", "max"))
case("prod:with_zeros", lambda E, x: x.prod(1), lambda np, x: x.prod(1),
     Input((3, 3), "f", (0.0, 2.0, 3.0, 0.0, 0.0, 1.5, 1.0, 2.0, -1.0)), ops=("prod",))
case("amax:ties", lambda E, x: x.amax(1), lambda np, x: x.max(1),
     Input((2, 3), "f", (1.0, 3.0, 3.0, 2.0, 2.0, 1.0)), ops=("max",), full_jacobian=True,
     gradgrad=False)     # the gradient jumps at a tie: no second derivative there
case("max:dim_values_indices", lambda E, x: tuple(x.max(1)),
     lambda np, x: (x.max(1), x.argmax(1)), Input(M), out_dtype=("same", "int64"),
     ops=("max", "argmax", "gather"))
case("min:dim_keepdim", lambda E, x: x.min(-1, keepdim=True)[0],
     lambda np, x: x.min(-1, keepdims=True), Input(M), ops=("min", "argmin", "gather"))
case("argmax", lambda E, x: (x.argmax(), x.argmax(1), x.argmax(-1, keepdim=True)),
     lambda np, x: (x.argmax(), x.argmax(1), x.argmax(-1)[..., None]), Input(M), grad=False,
     out_dtype="int64")
case("argmin", lambda E, x: (x.argmin(), x.argmin(0)), lambda np, x: (x.argmin(), x.argmin(0)),
     Input(M), grad=False, out_dtype="int64")
case("argmax:int", lambda E, x: (x.argmax(), x.argmin(1)),
     lambda np, x: (x.argmax(), x.argmin(1)), Input(S, "i"), dtypes=("uint8", "int64", "bool"),
     grad=False, out_dtype="int64", ops=("argmax", "argmin"))
case("argmax:special", lambda E, x: (x.argmax(1), x.argmin(1)),
     lambda np, x: (x.argmax(1), x.argmin(1)),
     Input((2, 4), "f", (1.0, math.nan, 3.0, math.nan, math.inf, -math.inf, 2.0, math.inf)),
     grad=False, out_dtype="int64", ops=("argmax", "argmin"))
case("argmax:ties", lambda E, x: (x.argmax(1), x.argmin(1)),
     lambda np, x: (x.argmax(1), x.argmin(1)),
     Input((2, 4), "i", (1, 3, 3, 0, 2, 2, 2, 2)), dtypes=("int64", "float32"), grad=False,
     out_dtype="int64", ops=("argmax", "argmin"))
case("any", lambda E, x: (x.any(), x.all(1), x.any(0, keepdim=True)),
     lambda np, x: (x.any(), x.all(1), x.any(0, keepdims=True)), Input(S, "b"),
     dtypes=("bool",), grad=False, ops=("any", "all"))
case("any:numbers", lambda E, x: (x.any(), x.all(1), E.any(x, 0)),
     lambda np, x: (x.any(), x.all(1), x.any(0)), Input(S, "i"),
     dtypes=("uint8", "int64", "float32"), grad=False, out_dtype="bool", ops=("any", "all"))
case("any:special", lambda E, x: (x.any(1), x.all(1)), lambda np, x: (x.any(1), x.all(1)),
     Input((3, 4), "s"), grad=False, out_dtype="bool", ops=("any", "all"))
case("mean", lambda E, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdim=True)),
     lambda np, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdims=True)), Input(M),
     dtypes=ALL_FLOATS)
case("var", lambda E, x: (x.var(), x.var(1), x.std(0, keepdim=True), x.var(1, correction=0)),
     lambda np, x: (x.var(ddof=1), x.var(1, ddof=1), x.std(0, ddof=1, keepdims=True),
                    x.var(1)), Input(M), ops=("var", "std"))
case("var_mean", lambda E, x: E.var_mean(x, 1), lambda np, x: (x.var(1, ddof=1), x.mean(1)),
     Input(M))
case("logsumexp", lambda E, x: (x.logsumexp(1), E.logsumexp(x, (0, 2), keepdim=True)),
     lambda np, x: (_lse(x, 1), np.log(np.exp(x).sum((0, 2), keepdims=True))), Input(M))
case("logsumexp:inf", lambda E, x: x.logsumexp(1), lambda np, x: np.logaddexp.reduce(x, 1),
     Input((3, 2), "f", (-np.inf, -np.inf, -np.inf, 0.0, np.inf, 1.0)), grad=False)
case("softmax", lambda E, x: x.softmax(-1), lambda np, x: _softmax(x, -1), Input(M),
     dtypes=ALL_FLOATS)
case("softmax:dim0", lambda E, x: E.softmax(x, 0), lambda np, x: _softmax(x, 0), Input(M))
case("softmax:extremes", lambda E, x: x.softmax(1), lambda np, x: _softmax(x, 1),
     Input((2, 3), "f", (1000.0, 0.0, -1000.0, -np.inf, 0.0, 1.0)), grad=False)
case("log_softmax", lambda E, x: x.log_softmax(1), lambda np, x: np.log(_softmax(x, 1)),
     Input(M), dtypes=ALL_FLOATS)

# --- nan-skipping reductions, covariance, trapezoidal integrals, renorm ------------------
case("nansum", lambda E, x: (E.nansum(x, 1), x.nanmean(), E.nanmedian(x, 1)[0]),
     lambda np, x: (np.nansum(x, 1), np.nanmean(x), _lower_nanmedian(np, x)),
     Input(S, "f", (1.0, np.nan, 3.0, -2.0, 5.0, 6.0, np.nan, 0.5, np.nan, np.nan, np.nan,
                    np.nan)), ops=("nansum", "nanmean", "nanmedian"), layouts=False,
     grad=False)
case("cov", lambda E, x: (E.cov(x), E.cov(x, correction=0), E.corrcoef(x)),
     lambda np, x: (np.cov(x), np.cov(x, ddof=0), np.corrcoef(x)), Input((3, 6)),
     ops=("cov", "corrcoef"))
case("trapezoid", lambda E, y, x: (E.trapezoid(y), E.trapezoid(y, x[0]), E.trapz(y, dx=0.5),
                                   E.cumulative_trapezoid(y, dim=0)),
     lambda np, y, x: (np.trapezoid(y), np.trapezoid(y, x[0]), np.trapezoid(y, dx=0.5),
                       np.cumsum((y[1:] + y[:-1]) / 2, 0)), Input(S), Input(S),
     ops=("trapezoid", "trapz", "cumulative_trapezoid"))
case("renorm", lambda E, x: E.renorm(x, 2, 0, 1.0),
     lambda np, x: x * np.where(np.linalg.norm(x, axis=1, keepdims=True) > 1.0,
                                1.0 / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-7), 1.0),
     Input(S))


def _lower_nanmedian(np, x):
    out = []
    for row in x:
        v = np.sort(row[~np.isnan(row)])
        out.append(v[(len(v) - 1) // 2] if len(v) else np.nan)
    return np.array(out, dtype=x.dtype)

# ember.masked (torch.masked): the identity in place of the masked-out elements
case("masked", lambda E, x: (E.masked.sum(x, 1, mask=x > 0), E.masked.amax(x, mask=x < 0.5),
                             E.masked.mean(x, 0, mask=x > -0.5),
                             E.masked.softmax(x, 1, mask=x > -1.0),
                             E.masked.cumsum(x, 1, mask=x > 0)),
     lambda np, x: (np.where(x > 0, x, 0).sum(1), np.where(x < 0.5, x, -np.inf).max(),
                    np.where(x > -0.5, x, 0).sum(0) / (x > -0.5).sum(0),
                    _masked_softmax(np, x, x > -1.0), np.where(x > 0, x, 0).cumsum(1)),
     Input(S), grad=False,
     ops=("masked.sum", "masked.amax", "masked.mean", "masked.softmax", "masked.cumsum"))


def _masked_softmax(np, x, m):
    e = np.where(m, np.exp(x - np.where(m, x, -np.inf).max(1, keepdims=True)), 0)
    return e / e.sum(1, keepdims=True)
