"""Conformance rows of edge shapes across families: 0-d, empty, non-contiguous, rank 6."""
from __future__ import annotations

from ._table import Input, Rows, S

ROWS = Rows("shapes")
case = ROWS.case

case("add:zero_dim", lambda E, x, y: (x + y, (x * y).exp(), x.reshape(1), x.sum(), x[None],
                                      x.flip(0), x.softmax(0), E.maximum(x, E.full_like(x, 0.5))),
     lambda np, x, y: (x + y, np.exp(x * y), x.reshape(1), x, x[None], x, np.ones_like(x),
                       np.maximum(x, 0.5)), Input(()), Input(()),
     ops=("add", "mul", "exp", "reshape", "sum", "flip", "softmax", "maximum"))
case("add:zero_dim_with_array", lambda E, x, y: (x * y, y - x),
     lambda np, x, y: (x * y, y - x), Input(()), Input(S), ops=("add", "sub"))
case("argmax:zero_dim", lambda E, x: (x.argmax(), x.argmax(0), x.amax(0), x.any()),
     lambda np, x: (np.array(0), np.array(0), x, x != 0), Input(()), grad=False,
     out_dtype=("int64", "int64", "same", "bool"), ops=("argmax", "max", "any"))
case("add:empty", lambda E, x: (x * 2 + 1, x.exp(), x.reshape(0, 4).sum(1), x.softmax(-1),
                                x.mean(0), x.amax(1), x.T @ x),
     lambda np, x: (x * 2 + 1, np.exp(x), x.reshape(0, 4).sum(1), x, x.mean(0), x.max(1),
                    x.T @ x), Input((0, 4)), grad=False,
     ops=("add", "exp", "sum", "softmax", "mean", "max", "matmul"))
case("add:noncontiguous", lambda E, x, y: (x.mT * y, (x.mT[::2] + 1).exp(), x[:, ::2].sum(0)),
     lambda np, x, y: (x.swapaxes(-1, -2) * y, np.exp(x.swapaxes(-1, -2)[::2] + 1),
                       x[:, ::2].sum(0)), Input((3, 4)), Input((4, 3)))
case("add:high_rank", lambda E, x, y: (x + y, (x * y).sum((1, 3, 5)), x.permute(5, 4, 3, 2, 1, 0)
                                       .flip(2) - 1),
     lambda np, x, y: (x + y, (x * y).sum((1, 3, 5)), x.transpose(5, 4, 3, 2, 1, 0)[:, :, ::-1]
                       - 1), Input((2, 1, 2, 3, 1, 2)), Input((1, 3, 2, 1, 2, 2)),
     ops=("add", "mul", "sum", "permute", "flip"))
