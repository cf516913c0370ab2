"""The conformance table: one row per op case, checked against NumPy on every device.

A case names an ember function, its NumPy reference and its inputs.  Input kinds:
'f' float (the dtype under test, standard normal), 'p' positive float, 'u' float in
(-0.9, 0.9), 'i' int64 in [-5, 5), 'b' bool, 'ix<n>' int64 index in [0, n).  Third-party
backends reuse the table through `pytest --pyargs ember.testing` (see README).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Input:
    shape: tuple
    kind: str = "f"
    values: tuple | None = None      # explicit values (edge cases), cast to the dtype


@dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable                      # fn(ember, *tensors) -> Tensor or tuple of Tensors
    ref: Callable                     # ref(np, *arrays) -> ndarray or tuple
    inputs: tuple
    dtypes: tuple = ("float32", "float64")
    out_dtype: str | None = None      # None: the dtype under test
    grad: bool = True
    tags: tuple = field(default_factory=tuple)
    atol: float = 1e-5
    rtol: float = 1e-5


CASES: list[OpCase] = []
FLOATS = ("float32", "float64")
ALL_FLOATS = ("float16", "bfloat16", "float32", "float64")


def case(name, fn, ref, *inputs, **kw):
    if not _takes_np(ref):
        ref = (lambda r: lambda np_, *arrays: r(*arrays))(ref)
    specs = tuple(i if isinstance(i, Input) else Input(*i) if isinstance(i, tuple) and
                  i and isinstance(i[0], tuple) else Input(i) for i in inputs)
    CASES.append(OpCase(name, fn, ref, specs, **kw))


def _takes_np(ref) -> bool:
    """References are written either as f(np, *arrays) or as a plain f(*arrays)."""
    import inspect
    try:
        params = list(inspect.signature(ref).parameters)
    except (TypeError, ValueError):         # ufuncs
        return False
    return bool(params) and params[0] == "np"


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _lse(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return (np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m).squeeze(axis)


S, M = (3, 4), (2, 3, 4)

# --- elementwise unary ------------------------------------------------------------------
for _name, _ref, _kind in [
        ("neg", np.negative, "f"), ("abs", np.abs, "f"), ("exp", np.exp, "f"),
        ("log", np.log, "p"), ("log1p", np.log1p, "p"), ("expm1", np.expm1, "f"),
        ("sqrt", np.sqrt, "p"), ("rsqrt", lambda x: 1 / np.sqrt(x), "p"),
        ("sin", np.sin, "f"), ("cos", np.cos, "f"), ("tanh", np.tanh, "f"),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), "f"), ("erf", _erf, "f"),
        ("reciprocal", lambda x: 1 / x, "p")]:
    case(_name, (lambda n: lambda E, x: getattr(x, n)())(_name), _ref, Input(M, _kind),
         dtypes=ALL_FLOATS)
for _name, _ref in [("sign", np.sign), ("floor", np.floor), ("ceil", np.ceil),
                    ("round", np.round)]:
    case(_name, (lambda n: lambda E, x: getattr(x, n)())(_name), _ref, Input(M, "f"),
         grad=False)
    case(_name + "_int", (lambda n: lambda E, x: getattr(E, n)(x))(_name), _ref, Input(S, "i"),
         dtypes=("int64",), grad=False, out_dtype="int64")
case("abs_int", lambda E, x: x.abs(), np.abs, Input(S, "i"), dtypes=("int32", "int64"),
     grad=False)
case("neg_int", lambda E, x: -x, np.negative, Input(S, "i"), dtypes=("int64",), grad=False)
case("exp_of_int", lambda E, x: x.exp(), np.exp, Input(S, "i"), dtypes=("int64",),
     grad=False, out_dtype="float32")
case("logical_not", lambda E, x: ~x, np.logical_not, Input(S, "b"), dtypes=("bool",),
     grad=False)
for _name, _ref in [("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)]:
    case(_name, (lambda n: lambda E, x: getattr(x, n)())(_name), _ref,
         Input((6,), "f", (0.0, 1.5, np.inf, -np.inf, np.nan, -2.0)), grad=False,
         out_dtype="bool")
case("exp_log_edges", lambda E, x: (x.exp(), x.abs().log(), x.sqrt()),
     lambda np, x: (np.exp(x), np.log(np.abs(x)), np.sqrt(x)),
     Input((6,), "f", (0.0, 1.0, np.inf, -np.inf, np.nan, -1.0)), grad=False)
case("sigmoid_extremes", lambda E, x: x.sigmoid(), lambda np, x: 1 / (1 + np.exp(-x)),
     Input((4,), "f", (-100.0, -20.0, 20.0, 100.0)), grad=False)

# --- elementwise binary, broadcasting, scalars -------------------------------------------
for _name, _fn, _ref, _k in [
        ("add", lambda E, x, y: x + y, np.add, "f"),
        ("sub", lambda E, x, y: x - y, np.subtract, "f"),
        ("mul", lambda E, x, y: x * y, np.multiply, "f"),
        ("div", lambda E, x, y: x / y, np.divide, "p"),
        ("pow", lambda E, x, y: x ** y, np.power, "p"),
        ("maximum", lambda E, x, y: E.maximum(x, y), np.maximum, "f"),
        ("minimum", lambda E, x, y: E.minimum(x, y), np.minimum, "f")]:
    case(_name, _fn, _ref, Input(M, "p" if _name == "pow" else "f"), Input(M, _k),
         dtypes=ALL_FLOATS)
    case(_name + "_broadcast", _fn, _ref, Input((2, 1, 4), "p" if _name == "pow" else "f"),
         Input((3, 1), _k))
case("remainder", lambda E, x, y: x % y, np.remainder, Input(S, "f"), Input(S, "p"),
     grad=False)
case("remainder_int", lambda E, x, y: x % y, np.remainder, Input(S, "i"),
     Input(S, "n"), dtypes=("int64",), grad=False)
case("floor_divide", lambda E, x, y: x // y, np.floor_divide, Input(S, "f"), Input(S, "p"),
     grad=False)
case("add_int", lambda E, x, y: x + y * 2 - 1, lambda np, x, y: x + y * 2 - 1, Input(S, "i"),
     Input(S, "i"), dtypes=("int8", "int16", "int32", "int64", "uint8"), grad=False)
case("div_int_is_float", lambda E, x, y: x / (y.abs() + 1), lambda np, x, y: x / (abs(y) + 1),
     Input(S, "i"), Input(S, "i"), dtypes=("int64",), grad=False, out_dtype="float32")
case("scalar_ops", lambda E, x: (2.5 * x - 1) / 3 + 2 ** x, lambda np, x: (2.5 * x - 1) / 3 +
     2 ** x, Input(S, "f"), dtypes=ALL_FLOATS)
case("reflected_sub_div", lambda E, x: (1 - x, 2 / x), lambda np, x: (1 - x, 2 / x),
     Input(S, "p"))
for _name, _fn, _ref in [("eq", lambda E, x, y: x == y, np.equal),
                         ("ne", lambda E, x, y: x != y, np.not_equal),
                         ("lt", lambda E, x, y: x < y, np.less),
                         ("le", lambda E, x, y: x <= y, np.less_equal),
                         ("gt", lambda E, x, y: x > y, np.greater),
                         ("ge", lambda E, x, y: x >= y, np.greater_equal)]:
    case(_name, _fn, _ref, Input(S, "i"), Input((4,), "i"), dtypes=("int64", "float32"),
         grad=False, out_dtype="bool")
case("compare_scalar", lambda E, x: (x > 0.5, x <= 0), lambda np, x: (x > 0.5, x <= 0),
     Input(S, "f"), grad=False, out_dtype="bool")
for _name, _sym in [("logical_and", "&"), ("logical_or", "|"), ("logical_xor", "^")]:
    case(_name, (lambda n: lambda E, x, y: getattr(E, n)(x, y))(_name),
         getattr(np, _name), Input(S, "b"), Input(S, "b"), dtypes=("bool",), grad=False)
case("where", lambda E, c, x, y: E.where(c, x, y), lambda np, c, x, y: np.where(c, x, y),
     Input(M, "b"), Input(M), Input((3, 4)))
case("where_scalar", lambda E, c, x: E.where(c, x, 0.0), lambda np, c, x: np.where(c, x, 0.0),
     Input(S, "b"), Input(S))
case("relu", lambda E, x: (x.relu(), E.relu(x * -1)), lambda np, x: (np.maximum(x, 0),
                                                                     np.maximum(-x, 0)),
     Input(M), dtypes=ALL_FLOATS)
case("relu_int", lambda E, x: x.relu(), lambda np, x: np.maximum(x, 0), Input(S, "i"),
     dtypes=("int64",), grad=False)
case("clamp", lambda E, x: x.clamp(-0.5, 0.5), lambda np, x: np.clip(x, -0.5, 0.5),
     Input(M, "f"))
case("clamp_min", lambda E, x: x.clamp(min=0.1), lambda np, x: np.maximum(x, 0.1), Input(M))
case("cast", lambda E, x: (x.to(E.float64) if x.dtype != E.float64 else x.to(E.float32)),
     lambda np, x: x, Input(S), grad=False, out_dtype="other_float", atol=1e-6)
case("cast_to_int", lambda E, x: (x * 3).to(E.int32), lambda np, x: np.trunc(x * 3),
     Input(S), grad=False, out_dtype="int32")
case("cast_bool", lambda E, x: x.to(E.bool), lambda np, x: x != 0, Input(S, "i"),
     dtypes=("int64",), grad=False, out_dtype="bool")

# --- reductions -------------------------------------------------------------------------
for _name, _ref in [("sum", np.sum), ("prod", np.prod), ("amax", np.max), ("amin", np.min)]:
    _fn = (lambda n: lambda E, x: getattr(x, n)())(_name)
    case(_name + "_all", _fn, (lambda r: lambda np, x: r(x))(_ref), Input(M))
    case(_name + "_dim", (lambda n: lambda E, x: getattr(x, n)(1))(_name),
         (lambda r: lambda np, x: r(x, axis=1))(_ref), Input(M))
    case(_name + "_dims_keepdim", (lambda n: lambda E, x: getattr(x, n)((0, 2), keepdim=True))(
        _name), (lambda r: lambda np, x: r(x, axis=(0, 2), keepdims=True))(_ref), Input(M))
case("sum_int", lambda E, x: x.sum(0), lambda np, x: x.sum(0), Input(S, "i"),
     dtypes=("int32", "int64"), grad=False, out_dtype="int64")
case("sum_bool", lambda E, x: x.sum(), lambda np, x: x.sum(), Input(S, "b"), dtypes=("bool",),
     grad=False, out_dtype="int64")
case("sum_empty", lambda E, x: x.sum(0), lambda np, x: x.sum(0), Input((0, 3)), grad=False)
case("prod_with_zeros", lambda E, x: x.prod(1), lambda np, x: x.prod(1),
     Input((3, 3), "f", (0.0, 2.0, 3.0, 0.0, 0.0, 1.5, 1.0, 2.0, -1.0)))
case("max_ties", lambda E, x: x.amax(1), lambda np, x: x.max(1),
     Input((2, 3), "f", (1.0, 3.0, 3.0, 2.0, 2.0, 1.0)))
case("max_dim_values_indices", lambda E, x: tuple(x.max(1)),
     lambda np, x: (x.max(1), x.argmax(1)), Input(M), out_dtype=("same", "int64"))
case("min_dim_keepdim", lambda E, x: x.min(-1, keepdim=True)[0],
     lambda np, x: x.min(-1, keepdims=True), Input(M))
case("argmax", lambda E, x: (x.argmax(), x.argmax(1), x.argmax(-1, keepdim=True)),
     lambda np, x: (x.argmax(), x.argmax(1), x.argmax(-1)[..., None]), Input(M), grad=False,
     out_dtype="int64")
case("argmin", lambda E, x: (x.argmin(), x.argmin(0)), lambda np, x: (x.argmin(), x.argmin(0)),
     Input(M), grad=False, out_dtype="int64")
case("any_all", lambda E, x: (x.any(), x.all(1), x.any(0, keepdim=True)),
     lambda np, x: (x.any(), x.all(1), x.any(0, keepdims=True)), Input(S, "b"),
     dtypes=("bool",), grad=False)
case("mean", lambda E, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdim=True)),
     lambda np, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdims=True)), Input(M),
     dtypes=ALL_FLOATS)
case("var_std", lambda E, x: (x.var(), x.var(1), x.std(0, keepdim=True),
                              x.var(1, correction=0)),
     lambda np, x: (x.var(ddof=1), x.var(1, ddof=1), x.std(0, ddof=1, keepdims=True),
                    x.var(1)), Input(M))
case("logsumexp", lambda E, x: x.logsumexp(1), lambda np, x: _lse(x, 1), Input(M))
case("logsumexp_inf", lambda E, x: x.logsumexp(1), lambda np, x: np.array([-np.inf, 0.0]),
     Input((2, 2), "f", (-np.inf, -np.inf, -np.inf, 0.0)), grad=False)
case("softmax", lambda E, x: x.softmax(-1), lambda np, x: _softmax(x, -1), Input(M),
     dtypes=ALL_FLOATS)
case("softmax_dim0", lambda E, x: E.softmax(x, 0), lambda np, x: _softmax(x, 0), Input(M))
case("log_softmax", lambda E, x: x.log_softmax(1), lambda np, x: np.log(_softmax(x, 1)),
     Input(M))

# --- movement ---------------------------------------------------------------------------
case("reshape", lambda E, x: x.reshape(4, -1), lambda np, x: x.reshape(4, -1), Input(M))
case("view_flatten", lambda E, x: (x.view(6, 4), x.flatten(), x.flatten(1)),
     lambda np, x: (x.reshape(6, 4), x.reshape(-1), x.reshape(2, 12)), Input(M))
case("squeeze_unsqueeze", lambda E, x: (x.unsqueeze(1), x.unsqueeze(-1).squeeze(),
                                        x.reshape(1, 2, 1, 12).squeeze(2)),
     lambda np, x: (x[:, None], x, x.reshape(1, 2, 12)), Input(M))
case("permute", lambda E, x: x.permute(2, 0, 1), lambda np, x: x.transpose(2, 0, 1), Input(M))
case("transpose_T_mT", lambda E, x: (x.transpose(0, 2), x.mT, x[0].T),
     lambda np, x: (x.transpose(2, 1, 0), x.swapaxes(-1, -2), x[0].T), Input(M))
case("expand", lambda E, x: x.expand(2, 3, 4), lambda np, x: np.broadcast_to(x, (2, 3, 4)),
     Input((3, 1)))
case("contiguous_of_view", lambda E, x: x.mT.contiguous() * 1,
     lambda np, x: np.ascontiguousarray(x.swapaxes(-1, -2)), Input(M))
case("cat", lambda E, x, y: E.cat([x, y, x], 1), lambda np, x, y: np.concatenate([x, y, x], 1),
     Input((2, 3)), Input((2, 1)))
case("stack", lambda E, x, y: E.stack([x, y], -1), lambda np, x, y: np.stack([x, y], -1),
     Input(S), Input(S))
case("split_chunk", lambda E, x: (*x.split(2, 1), *x.chunk(2, 0)),
     lambda np, x: (x[:, :2], x[:, 2:], x[:2], x[2:]), Input((3, 4)))
case("split_sections", lambda E, x: x.split([1, 3], 1), lambda np, x: (x[:, :1], x[:, 1:]),
     Input(S))
case("flip", lambda E, x: (x.flip(0), x.flip((1, 2))),
     lambda np, x: (x[::-1], x[:, ::-1, ::-1]), Input(M))
case("pad", lambda E, x: E.pad(x, (1, 2, 0, 1)), lambda np, x: np.pad(x, ((0, 0), (0, 1),
                                                                         (1, 2))), Input(M))
case("pad_value", lambda E, x: E.pad(x, (1, 1), value=-1.0),
     lambda np, x: np.pad(x, ((0, 0), (1, 1)), constant_values=-1.0), Input(S))

# --- indexing ---------------------------------------------------------------------------
case("getitem_basic", lambda E, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1],
                                    x[1:, ::2, 1]),
     lambda np, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1], x[1:, ::2, 1]),
     Input(M))
case("getitem_index_tensor", lambda E, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]),
     lambda np, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]), Input(M), Input((5,), "ix2"))
case("getitem_mask", lambda E, x: x[x > 0], lambda np, x: x[x > 0], Input(M))
case("getitem_mixed", lambda E, x, i: x[i, 1:, i], lambda np, x, i: x[i, 1:, i],
     Input((3, 3, 3)), Input((2,), "ix3"))
case("setitem", lambda E, x: _setitem_case(x), lambda np, x: _setitem_ref(x), Input(M))
case("take_gather", lambda E, x, i: (
    E.index_select(x, 1, i), E.gather(x, 1, i.reshape(1, 5).expand(3, 5)), E.take(x, i),
    x.gather(1, i.reshape(1, 5).expand(3, 5))),
     lambda np, x, i: (np.take(x, i, 1), np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1), x.reshape(-1)[i], np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1)), Input((3, 4)), Input((5,), "ix4"))
case("index_add_repeats", lambda E, x, i, s: E.index_add(x, 0, i, s),
     lambda np, x, i, s: _index_add_ref(x, i, s), Input((3, 2)), Input((4,), "i",
                                                                       (0, 2, 0, 0)),
     Input((4, 2)))
case("scatter_add_repeats", lambda E, x, i, s: E.scatter_add(x, 1, i, s),
     lambda np, x, i, s: _scatter_add_ref(x, i, s), Input((2, 3)),
     Input((2, 4), "i", (0, 0, 2, 0, 1, 1, 1, 2)), Input((2, 4)))
case("nonzero", lambda E, x: E.nonzero(x), lambda np, x: np.argwhere(x), Input(M, "b"),
     dtypes=("bool",), grad=False, out_dtype="int64")

# --- linalg, conv building blocks --------------------------------------------------------
case("matmul", lambda E, x, y: x @ y, np.matmul, Input((3, 4)), Input((4, 5)),
     dtypes=ALL_FLOATS)
case("matmul_batched_broadcast", lambda E, x, y: x @ y, np.matmul, Input((2, 1, 3, 4)),
     Input((3, 4, 2)))
case("matmul_vector", lambda E, x, y, v: (x @ v, v @ y, v @ v), lambda np, x, y, v: (
    x @ v, v @ y, v @ v), Input((3, 4)), Input((4, 2)), Input((4,)))
case("matmul_int", lambda E, x, y: x @ y, np.matmul, Input((2, 3), "i"), Input((3, 2), "i"),
     dtypes=("int64",), grad=False)
case("unfold", lambda E, x: E.unfold(x, 3, padding=1, stride=2),
     lambda np, x: _unfold_ref(x, 3, 1, 2), Input((2, 2, 5, 5)))
case("unfold_tiles", lambda E, x: E.unfold(x, 2, stride=2),
     lambda np, x: _unfold_ref(x, 2, 0, 2), Input((2, 3, 4, 6)))
case("max_pool2d", lambda E, x: E.nn.functional.max_pool2d(x, 2),
     lambda np, x: x.reshape(2, 3, 2, 2, 3, 2).max((3, 5)), Input((2, 3, 4, 6)))
case("max_pool2d_pad_stride", lambda E, x: E.nn.functional.max_pool2d(x, 3, 2, 1),
     lambda np, x: _max_pool_ref(x, 3, 2, 1), Input((2, 2, 5, 5)))
case("max_pool2d_ties_first", lambda E, x: E.nn.functional.max_pool2d(x * 0 + x.round(), 2),
     lambda np, x: np.round(x).reshape(1, 1, 2, 2, 2, 2).max((3, 5)), Input((1, 1, 4, 4)),
     grad=False)
case("fold", lambda E, c: E.fold(c, (4, 4), 2, stride=2),
     lambda np, c: _fold_ref(c, 4, 2, 2), Input((1, 8, 4)))

# --- edge shapes --------------------------------------------------------------------------
case("zero_dim", lambda E, x, y: (x + y, (x * y).exp(), x.reshape(1)),
     lambda np, x, y: (x + y, np.exp(x * y), x.reshape(1)), Input(()), Input(()))
case("empty", lambda E, x: (x * 2 + 1, x.exp(), x.reshape(0, 4).sum(1)),
     lambda np, x: (x * 2 + 1, np.exp(x), x.reshape(0, 4).sum(1)), Input((0, 4)), grad=False)
case("noncontiguous", lambda E, x, y: (x.mT * y, (x.mT[::2] + 1).exp(), x[:, ::2].sum(0)),
     lambda np, x, y: (x.swapaxes(-1, -2) * y, np.exp(x.swapaxes(-1, -2)[::2] + 1),
                       x[:, ::2].sum(0)), Input((3, 4)), Input((4, 3)))


def _setitem_case(x):
    y = x * 1
    y[0] = 0.0
    y[1, :, 1] = y[1, :, 2] * 2
    y[y > 1.0] = 1.0
    return y


def _setitem_ref(x):
    y = x.copy()
    y[0] = 0.0
    y[1, :, 1] = y[1, :, 2] * 2
    y[y > 1.0] = 1.0
    return y


def _index_add_ref(x, i, s):
    out = x.copy()
    np.add.at(out, i, s)
    return out


def _scatter_add_ref(x, i, s):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            out[r, i[r, c]] += s[r, c]
    return out


def _unfold_ref(x, k, p, s):
    n, c, h, w = x.shape
    xp_ = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, k, k, oh, ow), x.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i, j] = xp_[:, :, i:i + s * oh:s, j:j + s * ow:s]
    return out.reshape(n, c * k * k, oh * ow)


def _max_pool_ref(x, k, s, p):
    n, c, h, w = x.shape
    xp_ = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.full((n, c, oh, ow), -np.inf)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, xp_[:, :, i:i + s * oh:s, j:j + s * ow:s])
    return out


def _fold_ref(cols, size, k, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k * k)
    o = (size - k) // s + 1
    cols = cols.reshape(n, c, k, k, o, o)
    out = np.zeros((n, c, size, size), cols.dtype)
    for i in range(k):
        for j in range(k):
            out[:, :, i:i + s * o:s, j:j + s * o:s] += cols[:, :, i, j]
    return out
