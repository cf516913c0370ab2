"""The recurrent cells as declared kernels: one LSTM or GRU time step's gate arithmetic
(after the matmuls) in one kernel, and its gradient in one more (nn/rnn.py runs them).

Without a kernel the decompositions below run (ember ops: every device, and their graph
records itself); the gradient kernels' decompositions are what create_graph
differentiates.  Gate order is PyTorch's: LSTM i, f, g, o; GRU r, z, n.
"""
from __future__ import annotations

from ..dispatch import run
from ..tensor import Tensor
from . import elementwise as E
from ._op import declare, rule_same
from .movement import cat, split

__all__: list = []       # nn.LSTM, nn.GRU and their cells are the public forms


def _lstm_cell_decompose(gates: Tensor, c: Tensor) -> Tensor:
    i, f, g, o = split(gates, c._data.shape[-1], 1)
    i, f, g, o = E.sigmoid(i), E.sigmoid(f), E.tanh(g), E.sigmoid(o)
    c = f * c + i * g
    tc = E.tanh(c)
    return cat([o * tc, c, tc, i, f, g, o], 1)


def _lstm_cell_backward_decompose(g: Tensor, out: Tensor, gates: Tensor, c: Tensor) -> Tensor:
    # the activations again from gates, not read from out: this is what create_graph
    # differentiates, and out's saved columns carry no gradient (a kernel may read them)
    n = c._data.shape[-1]
    gh, gc = split(g, n, 1)[:2]
    i, f, gg, o = split(gates, n, 1)
    i, f, gg, o = E.sigmoid(i), E.sigmoid(f), E.tanh(gg), E.sigmoid(o)
    tc = E.tanh(f * c + i * gg)
    dc2 = gc + gh * o * (1 - tc * tc)
    return cat([dc2 * gg * i * (1 - i), dc2 * c * f * (1 - f), dc2 * i * (1 - gg * gg),
                gh * tc * o * (1 - o), dc2 * f], 1)


def _rows_by(factor):
    def shape(inputs, attrs) -> tuple:
        x = inputs[-1]._data.shape
        return (x[0], factor * x[1])
    return shape


lstm_cell_backward_op = declare(
    "lstm_cell_backward", "gradient", rule_same, sig="g, out, gates, c", serves="lstm_cell",
    shape=_rows_by(5), decompose=_lstm_cell_backward_decompose,
    doc="the gradient of lstm_cell (from d h, d c: the first 2H columns of g): (N, 5H) = "
        "d gates (N, 4H) then d c (N, H)")


def _lstm_cell_vjp(g, out, gates, c):
    n = c._data.shape[-1]
    d = run(lstm_cell_backward_op, g, out, gates, c)
    return tuple(split(d, (4 * n, n), 1))


lstm_cell_op = declare(
    "lstm_cell", "composite", rule_same, sig="gates, c", shape=_rows_by(7), save_out=True,
    decompose=_lstm_cell_decompose, vjp=_lstm_cell_vjp,
    doc="one LSTM step from its gate pre-activations (N, 4H: i, f, g, o) and cell c (N, H): "
        "(N, 7H) = the new h, the new c, then what the gradient reads (tanh of the new c, "
        "i, f, g, o activated; their gradient is not taken)")


def _gru_parts(gi, gh, h):
    n = h._data.shape[-1]
    gi_rz, gi_n = split(gi, (2 * n, n), 1)
    gh_rz, gh_n = split(gh, (2 * n, n), 1)
    r, z = split(E.sigmoid(gi_rz + gh_rz), n, 1)
    return r, z, E.tanh(gi_n + r * gh_n), gh_n


def _gru_cell_decompose(gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    r, z, new, _ = _gru_parts(gi, gh, h)
    return new + z * (h - new)


def _gru_cell_backward_decompose(g: Tensor, gi: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    r, z, new, gh_n = _gru_parts(gi, gh, h)
    dn = g * (1 - z) * (1 - new * new)
    dr = dn * gh_n * r * (1 - r)
    dz = g * (h - new) * z * (1 - z)
    return cat([dr, dz, dn, dr, dz, dn * r, g * z], 1)


gru_cell_backward_op = declare(
    "gru_cell_backward", "gradient", rule_same, sig="g, gi, gh, h", serves="gru_cell",
    shape=_rows_by(7), decompose=_gru_cell_backward_decompose,
    doc="the gradient of gru_cell: (N, 7H) = d gi (N, 3H), d gh (N, 3H), d h (N, H)")


def _gru_cell_vjp(g, out, gi, gh, h):
    n = h._data.shape[-1]
    d = run(gru_cell_backward_op, g, gi, gh, h)
    return tuple(split(d, (3 * n, 3 * n, n), 1))


gru_cell_op = declare(
    "gru_cell", "composite", rule_same, sig="gi, gh, h", shape=_rows_by(1),
    decompose=_gru_cell_decompose, vjp=_gru_cell_vjp,
    doc="one GRU step from the input and hidden projections (N, 3H each: r, z, n; gh "
        "with b_hh) and h (N, H): the new h, n = tanh(gi_n + r * gh_n)")
