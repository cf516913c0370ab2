"""Conformance rows of indexing: slices, take, setitem, gather, index_add, scatter_add,
nonzero, masked_fill, and the composites scatter and index_fill.
"""
from __future__ import annotations

import numpy as np

from ._table import FLOATS, Input, M, Rows, S

ROWS = Rows("index")
case = ROWS.case

# --- indexing ---------------------------------------------------------------------------
case("slice", lambda E, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1],
                            x[1:, ::2, 1], x[:, 2:0:-1], x[::-1, ::-1, ::-1]),
     lambda np, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1], x[1:, ::2, 1],
                    x[:, 2:0:-1], x[::-1, ::-1, ::-1]), Input(M), dtypes=FLOATS + ("int64",))
case("take:index_tensor", lambda E, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]),
     lambda np, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]), Input(M), Input((5,), "ix2"),
     ops=("take",))
case("take:negative_index", lambda E, x: (x[[-1, 0, -2]], x[:, -1]),
     lambda np, x: (x[[-1, 0, -2]], x[:, -1]), Input(S), ops=("take", "slice"))
case("take:mask", lambda E, x: (x[x > 0], x[(x > 0).any(-1)]),
     lambda np, x: (x[x > 0], x[(x > 0).any(-1)]), Input(M), ops=("take", "nonzero"))
case("take:mixed", lambda E, x, i: x[i, 1:, i], lambda np, x, i: x[i, 1:, i],
     Input((3, 3, 3)), Input((2,), "ix3"), ops=("take",))
case("index_put", lambda E, x: _setitem_case(x), lambda np, x: _setitem_case(x.copy(), False),
     Input(M), ops=("index_put", "assign", "slice_scatter"))
case("index_put:int", lambda E, x: _setitem_int(x), lambda np, x: _setitem_int(x.copy(), False),
     Input(S, "i"), dtypes=("int64", "uint8"), grad=False, ops=("index_put", "assign"))
case("gather", lambda E, x, i: (
    E.index_select(x, 1, i), E.gather(x, 1, i.reshape(1, 5).expand(3, 5)), E.take(x, i),
    x.gather(1, i.reshape(1, 5).expand(3, 5)), x[i[:3]]),
     lambda np, x, i: (np.take(x, i, 1), np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1), x.reshape(-1)[i], np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1), x[i[:3]]),
     Input((3, 4)), Input((5,), "ix3"), ops=("gather", "take"))
case("index_add", lambda E, x, i, s: E.index_add(x, 0, i, s),
     lambda np, x, i, s: _index_add_ref(x, i, s), Input((3, 2)), Input((4,), "i",
                                                                       (0, 2, 0, 0)),
     Input((4, 2)))
case("index_add:int", lambda E, x, i, s: E.index_add(x, 1, i, s),
     lambda np, x, i, s: _index_add_ref(x.swapaxes(0, 1), i, s.swapaxes(0, 1)).swapaxes(0, 1),
     Input((2, 3), "i"), Input((4,), "i", (2, 2, 0, 2)), Input((2, 4), "i"),
     dtypes=("int64", "int32"), grad=False)
case("scatter_add", lambda E, x, i, s: E.scatter_add(x, 1, i, s),
     lambda np, x, i, s: _scatter_add_ref(x, i, s), Input((2, 3)),
     Input((2, 4), "i", (0, 0, 2, 0, 1, 1, 1, 2)), Input((2, 4)))
case("scatter_add:int", lambda E, x, i, s: E.scatter_add(x, 0, i, s),
     lambda np, x, i, s: _scatter_add_ref(x.T, i.T, s.T).T, Input((3, 2), "i"),
     Input((4, 2), "i", (0, 2, 0, 0, 2, 1, 0, 0)), Input((4, 2), "i"),
     dtypes=("int64", "int32"), grad=False, ops=("scatter_add",))
case("nonzero", lambda E, x: (E.nonzero(x), E.argwhere(x)),
     lambda np, x: (np.argwhere(x), np.argwhere(x)), Input(M, "b"),
     dtypes=("bool", "int64", "float32"), grad=False, out_dtype="int64")
case("nonzero:empty", lambda E, x: (E.nonzero(x), E.nonzero(x[:0])),
     lambda np, x: (np.argwhere(x), np.argwhere(x[:0])), Input(S, "b", (False,) * 12),
     dtypes=("bool",), grad=False, out_dtype="int64", layouts=False)
case("masked_fill", lambda E, x, m: (x.masked_fill(m, 0.5), E.masked_fill(x, m, -1.0)),
     lambda np, x, m: (np.where(m, 0.5, x), np.where(m, -1.0, x)), Input(M), Input((3, 4), "b"),
     ops=("masked_fill", "where"))
case("masked_fill:int", lambda E, x, m: x.masked_fill(m, 3),
     lambda np, x, m: np.where(m, 3, x).astype(x.dtype), Input(S, "i"), Input(S, "b"),
     dtypes=("int64", "uint8"), grad=False, ops=("masked_fill",))


def _setitem_case(x, ember=True):
    y = x * 1 if ember else x
    y[0] = 0.0
    y[1, :, 1] = y[1, :, 2] * 2
    y[y > 1.0] = 1.0
    y[:, ::-1, 0] = y[:, :, 3] + 1
    y[[1, 0], 2] = -2.0
    return y


def _setitem_int(x, ember=True):
    y = x + 0 if ember else x
    y[0] = 4
    y[:, ::-2] = y[:, 1::2] + 1
    y[y > 3] = 2
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


# --- PyTorch's tensor functions: scatter and fill -----------------------------------------
_PERM = Input((3, 4), "i", (2, 0, 3, 1, 1, 3, 0, 2, 0, 1, 2, 3))     # one permutation per row
case("scatter", lambda E, x, i: (E.scatter(x, 1, i, x * 2), x.scatter(1, i[:, :2], -1.0),
                                 E.index_fill(x, 1, i[0, :2], 0.5)),
     lambda np, x, i: (_put_along(x, i, x * 2), _put_along(x, i[:, :2], -1.0),
                       _fill_cols(x, i[0, :2], 0.5)), Input(S), _PERM,
     ops=("scatter", "index_fill"))


case("index_copy", lambda E, x, s: (E.index_copy(x, 1, E.tensor([3, 0]), s),
                                    E.put(x, E.tensor([5, 5]), s[0], accumulate=True),
                                    x.put(E.tensor([11, 2]), s[1])),
     lambda np, x, s: (_index_copy_cols(x, [3, 0], s), _put_flat(x, [5, 5], s[0], True),
                       _put_flat(x, [11, 2], s[1], False)),
     Input(S), Input((3, 2)), ops=("index_copy", "put"))


def _index_copy_cols(x, cols, s):
    out = x.copy()
    out[:, cols] = s
    return out


def _put_flat(x, index, v, accumulate):
    out = x.copy().reshape(-1)
    if accumulate:
        np.add.at(out, index, v)
    else:
        out[index] = v
    return out.reshape(x.shape)


def _put_along(x, i, v):
    out = x.copy()
    np.put_along_axis(out, i, v if np.isscalar(v) else v[:, :i.shape[1]], 1)
    return out


def _fill_cols(x, cols, v):
    out = x.copy()
    out[:, cols] = v
    return out


def _scatter_mean_ref(np, x, i, s, include_self):
    """torch.scatter_reduce(x, 0, i, s, 'mean', include_self) for 1-D int x: the mean in
    x's dtype, rounded down (PyTorch's div(..., rounding_mode='floor'))."""
    total = x.astype(np.int64) * include_self
    count = np.full(x.shape, int(include_self), np.int64)
    touched = np.zeros(x.shape, bool)
    for k, j in enumerate(i):
        total[j] += s[k]
        count[j] += 1
        touched[j] = True
    mean = total // np.maximum(count, 1)
    return np.where(touched, mean, x).astype(x.dtype)


case("scatter_reduce:int_mean", lambda E, x, i, s: (
    E.scatter_reduce(x, 0, i, s, "mean"), E.scatter_reduce(x, 0, i, s, "mean",
                                                           include_self=False)),
     lambda np, x, i, s: (_scatter_mean_ref(np, x, i, s, True),
                          _scatter_mean_ref(np, x, i, s, False)),
     Input((5,), "i"), Input((6,), "i", (0, 0, 3, 3, 3, 1)), Input((6,), "i"),
     dtypes=("int64", "int32"), grad=False, ops=("scatter_reduce",), layouts=False)
