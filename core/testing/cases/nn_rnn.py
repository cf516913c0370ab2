"""Conformance rows of nn's recurrent cells: the declared kernels lstm_cell and gru_cell
(ops/rnn.py) that nn.LSTM, nn.GRU and their cells run per time step, with the gradient
kernels they serve (checked by gradcheck through these rows)."""
from __future__ import annotations

from ...dispatch import run
from ...ops.rnn import gru_cell_op, lstm_cell_op
from ._table import Input, Rows

ROWS = Rows("rnn")
case = ROWS.case
_N, _H = 3, 4


def _sigmoid(np, x):
    return 1 / (1 + np.exp(-x))


def _lstm_ref(np, gates, c):
    i, f, g, o = np.split(gates, 4, axis=1)
    c2 = _sigmoid(np, f) * c + _sigmoid(np, i) * np.tanh(g)
    return np.concatenate([_sigmoid(np, o) * np.tanh(c2), c2], axis=1)


def _gru_ref(np, gi, gh, h):
    (ir, iz, i_n), (hr, hz, hn) = np.split(gi, 3, axis=1), np.split(gh, 3, axis=1)
    r, z = _sigmoid(np, ir + hr), _sigmoid(np, iz + hz)
    n = np.tanh(i_n + r * hn)
    return n + z * (h - n)


# lstm_cell's output ends with the activations its gradient reads: the rows check h and c
case("lstm_cell", lambda E, gates, c: run(lstm_cell_op, gates, c)[:, :2 * _H], _lstm_ref,
     Input((_N, 4 * _H)), Input((_N, _H)), layouts=False)
case("gru_cell", lambda E, gi, gh, h: run(gru_cell_op, gi, gh, h), _gru_ref,
     Input((_N, 3 * _H)), Input((_N, 3 * _H)), Input((_N, _H)), layouts=False)
