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


# lstm_sequence (one LSTM layer direction's whole time loop) through the layers' autograd
# node, so the gradient check runs lstm_sequence_backward and the double backward
def _lstm_sequence(reverse):
    def fn(E, gi, h0, c0, w_hh_t):
        from ...nn.rnn import _Recurrence
        return _Recurrence.apply(gi, h0, c0, w_hh_t, None, True, 2, reverse)
    return fn


def _lstm_sequence_ref(reverse):
    def ref(np, gi, h, c, w_hh_t):
        outs = [None, None]
        for t in ((1, 0) if reverse else (0, 1)):
            hc = _lstm_ref(np, gi[t * _N:(t + 1) * _N] + h @ w_hh_t, c)
            h, c = hc[:, :_H], hc[:, _H:]
            outs[t] = h
        return np.concatenate(outs), h, c
    return ref


for _reverse in (False, True):
    case("lstm_sequence" + (":reverse" if _reverse else ""), _lstm_sequence(_reverse),
         _lstm_sequence_ref(_reverse), Input((2 * _N, 4 * _H)), Input((_N, _H)),
         Input((_N, _H)), Input((_H, 4 * _H)), layouts=False,
         ops=("lstm_sequence", "lstm_sequence_backward"))


def _gru_sequence(reverse):
    def fn(E, gi, h0, w_hh_t, b_hh):
        from ...nn.rnn import _Recurrence
        return _Recurrence.apply(gi, h0, None, w_hh_t, b_hh, False, 2, reverse)
    return fn


def _gru_sequence_ref(reverse):
    def ref(np, gi, h, w_hh_t, b_hh):
        outs = [None, None]
        for t in ((1, 0) if reverse else (0, 1)):
            h = _gru_ref(np, gi[t * _N:(t + 1) * _N], h @ w_hh_t + b_hh, h)
            outs[t] = h
        return np.concatenate(outs), h
    return ref


for _reverse in (False, True):
    case("gru_sequence" + (":reverse" if _reverse else ""), _gru_sequence(_reverse),
         _gru_sequence_ref(_reverse), Input((2 * _N, 3 * _H)), Input((_N, _H)),
         Input((_H, 3 * _H)), Input((3 * _H,)), layouts=False,
         ops=("gru_sequence", "gru_sequence_backward"))
