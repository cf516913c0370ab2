"""Conformance rows of the movement ops (reshape, permute, expand, cat, split, flip, pad,
slice_scatter) and of the composites that move data (roll, narrow, repeat, tile).
"""
from __future__ import annotations

from ._table import FLOATS, Input, M, Rows, S

ROWS = Rows("movement")
case = ROWS.case

# --- movement ---------------------------------------------------------------------------
case("reshape", lambda E, x: (x.reshape(4, -1), x.reshape(24)),
     lambda np, x: (x.reshape(4, -1), x.reshape(24)), Input(M), dtypes=FLOATS + ("int64",))
# (view needs a layout strides can express: the rows run on every layout, so contiguous)
case("reshape:view_flatten", lambda E, x: (x.contiguous().view(6, 4), x.flatten(), x.flatten(1)),
     lambda np, x: (x.reshape(6, 4), x.reshape(-1), x.reshape(2, 12)), Input(M))
case("reshape:squeeze_unsqueeze", lambda E, x: (x.unsqueeze(1), x.unsqueeze(-1).squeeze(),
                                                x.reshape(1, 2, 1, 12).squeeze(2)),
     lambda np, x: (x[:, None], x, x.reshape(1, 2, 12)), Input(M))
case("permute", lambda E, x: x.permute(2, 0, 1), lambda np, x: x.transpose(2, 0, 1), Input(M),
     dtypes=FLOATS + ("int64", "bool"))
case("permute:transpose_T_mT", lambda E, x: (x.transpose(0, 2), x.mT, x[0].T, E.movedim(x, 0, -1)),
     lambda np, x: (x.transpose(2, 1, 0), x.swapaxes(-1, -2), x[0].T, np.moveaxis(x, 0, -1)),
     Input(M))
case("expand", lambda E, x: (x.expand(2, 3, 4), x.expand(-1, 2) * 1),
     lambda np, x: (np.broadcast_to(x, (2, 3, 4)), np.broadcast_to(x, (3, 2))), Input((3, 1)))
case("contiguous", lambda E, x: (x.mT.contiguous() * 1, x[:, ::-1].contiguous(), x.clone()),
     lambda np, x: (np.ascontiguousarray(x.swapaxes(-1, -2)), x[:, ::-1], x), Input(M))
case("concatenate", lambda E, x, y: (E.cat([x, y, x], 1), E.cat([x, x], 0)),
     lambda np, x, y: (np.concatenate([x, y, x], 1), np.concatenate([x, x], 0)),
     Input((2, 3)), Input((2, 1)), dtypes=FLOATS + ("int64", "bool"))
case("concatenate:empty", lambda E, x, y: E.cat([x, y], 0),
     lambda np, x, y: np.concatenate([x, y], 0), Input((0, 3)), Input((2, 3)))
case("concatenate:promotes", lambda E, x, y: E.cat([x, y.to(E.int32)], 0),
     lambda np, x, y: np.concatenate([x, y]).astype(np.float32), Input((2, 3)),
     Input((1, 3), "i"), dtypes=("float32",), grad=False)
case("concatenate:stack", lambda E, x, y: (E.stack([x, y], -1), E.stack([x, y])),
     lambda np, x, y: (np.stack([x, y], -1), np.stack([x, y])), Input(S), Input(S))
case("slice:split_chunk", lambda E, x: (*x.split(2, 1), *x.chunk(2, 0)),
     lambda np, x: (x[:, :2], x[:, 2:], x[:2], x[2:]), Input((3, 4)))
case("slice:split_sections", lambda E, x: x.split([1, 3], 1),
     lambda np, x: (x[:, :1], x[:, 1:]), Input(S))
case("flip", lambda E, x: (x.flip(0), x.flip((1, 2)), x.flip(-1)),
     lambda np, x: (x[::-1], x[:, ::-1, ::-1], x[..., ::-1]), Input(M),
     dtypes=FLOATS + ("int64", "bool"))
case("pad", lambda E, x: E.pad(x, (1, 2, 0, 1)), lambda np, x: np.pad(x, ((0, 0), (0, 1),
                                                                         (1, 2))), Input(M))
case("pad:value", lambda E, x: E.pad(x, (1, 1), value=-1.0),
     lambda np, x: np.pad(x, ((0, 0), (1, 1)), constant_values=-1.0), Input(S))
case("pad:int", lambda E, x: E.pad(x, (2, 0, 1, 1), value=7),
     lambda np, x: np.pad(x, ((1, 1), (2, 0)), constant_values=7), Input(S, "i"),
     dtypes=("int64", "uint8"), grad=False)
case("slice_scatter", lambda E, x, s: E.ops.movement.slice_scatter(
    x, s, (slice(0, 2), slice(None, None, -2), slice(1, 3))),
     lambda np, x, s: _slice_scatter_ref(x, s), Input(M), Input((2, 2, 2)))
case("slice_scatter:torch", lambda E, x, s: E.slice_scatter(x, s, 1, 0, 3, 2),
     lambda np, x, s: _put(x, (slice(None), slice(0, 3, 2)), s), Input(M),
     Input((2, 2, 4)))
case("select_scatter", lambda E, x, s: E.select_scatter(x, s, 1, -1),
     lambda np, x, s: _put(x, (slice(None), -1), s), Input(M), Input((2, 4)))
case("diagonal_scatter", lambda E, x, s: E.diagonal_scatter(x, s, 1),
     lambda np, x, s: _put(x, (np.arange(3), np.arange(1, 4)), s), Input((3, 4)),
     Input((3,)))
case("as_strided", lambda E, x: (E.as_strided(x, (3, 2), (2, 3), 1),
                                 E.as_strided_scatter(x, x[:, :2] * 0 + 1, (3, 2), (1, 3))),
     lambda np, x: (np.lib.stride_tricks.as_strided(x.reshape(-1)[1:], (3, 2),
                                                    (2 * x.itemsize, 3 * x.itemsize)),
                    _strided_put(x)), Input(S), ops=("as_strided", "as_strided_scatter"),
     layouts=False)     # positions over a contiguous tensor's memory (others are refused)
case("fliplr", lambda E, x: (E.fliplr(x), E.flipud(x)),
     lambda np, x: (np.fliplr(x), np.flipud(x)), Input(M), ops=("fliplr", "flipud"))
case("hsplit", lambda E, x: (*E.hsplit(x, 3), *E.vsplit(x, [1]), *E.dsplit(x, 2)),
     lambda np, x: (*np.hsplit(x, 3), *np.vsplit(x, [1]), *np.dsplit(x, 2)), Input(M),
     ops=("hsplit", "vsplit", "dsplit"))
case("atleast_3d", lambda E, x: (E.atleast_3d(x), *E.atleast_3d([x[0], x[0, 0]])),
     lambda np, x: (np.atleast_3d(x), *np.atleast_3d(x[0], x[0, 0])), Input(S))
case("split_with_sizes", lambda E, x: (*E.split_with_sizes(x, [1, 3], 1),
                                       *E.unsafe_split(x, 2, 1), *E.unsafe_chunk(x, 2)),
     lambda np, x: (x[:, :1], x[:, 1:], x[:, :2], x[:, 2:], x[:2], x[2:]), Input(S),
     ops=("split_with_sizes", "unsafe_split", "unsafe_chunk"))
case("copies", lambda E, x: (E.expand_copy(x[:, :1], (3, 5)), E.diagonal_copy(x),
                             E.alias_copy(x), E.narrow_copy(x, 1, 1, 2), E.view_copy(x, (4, 3)),
                             E.permute_copy(x, (1, 0)), E.t_copy(x),
                             *E.split_with_sizes_copy(x, [2, 2], 1), *E.unbind_copy(x),
                             E.unfold_copy(x, 1, 2, 2), E.squeeze_copy(x[:1]),
                             E.unsqueeze_copy(x, 0), E.transpose_copy(x, 0, 1)),
     lambda np, x: (np.broadcast_to(x[:, :1], (3, 5)), np.diagonal(x), x, x[:, 1:3],
                    x.reshape(4, 3), x.T, x.T, x[:, :2], x[:, 2:], *x,
                    np.stack([x[:, 0:2], x[:, 2:4]], 1), x[0], x[None], x.T), Input(S),
     ops=("expand_copy", "diagonal_copy", "alias_copy", "narrow_copy", "view_copy",
          "permute_copy", "t_copy", "split_with_sizes_copy", "unbind_copy", "unfold_copy",
          "squeeze_copy", "unsqueeze_copy", "transpose_copy"))


def _put(x, index, s):
    out = x.copy()
    out[index] = s
    return out


def _strided_put(x):
    out = x.copy().reshape(-1)
    for i in range(3):
        for j in range(2):
            out[i + 3 * j] = 1.0
    return out.reshape(x.shape)


def _slice_scatter_ref(x, s):
    out = x.copy()
    out[0:2, ::-2, 1:3] = s
    return out


# --- PyTorch's tensor functions: moving data ----------------------------------------------
case("roll", lambda E, x: (E.roll(x, 1, 2), x.roll((1, -1), (0, 1)), E.roll(x, 3),
                           x.narrow(2, 1, 2)),
     lambda np, x: (np.roll(x, 1, 2), np.roll(x, (1, -1), (0, 1)), np.roll(x, 3), x[:, :, 1:3]),
     Input(M), ops=("roll", "narrow"))
case("repeat", lambda E, x: (x.repeat(2, 1, 2), E.repeat_interleave(x, 2, 1), E.tile(x, (2,))),
     lambda np, x: (np.tile(x, (2, 1, 2)), np.repeat(x, 2, 1), np.tile(x, (1, 1, 2))),
     Input(M), ops=("repeat_interleave", "tile"))
