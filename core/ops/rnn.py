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
from .creation import zeros
from .movement import cat, contiguous, split

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


# -- the whole sequence of one direction of one layer, as one declared composite ----------
# A backend may run the time loop itself (the CPU's: backends/cpu/rnn.py); without a kernel
# the decompositions below run the steps as ember ops (lstm_cell per step), on any device.

def _lstm_order(steps: int, reverse: bool, backward: bool = False):
    forward = range(steps - 1, -1, -1) if reverse else range(steps)
    return forward if not backward else (range(steps) if reverse else
                                         range(steps - 1, -1, -1))


def _lstm_sequence_decompose(gi: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, *,
                             steps: int, reverse: bool) -> Tensor:
    rows, n = c._data.shape
    chunks = split(gi, rows, 0) if steps > 1 else (gi,)
    w_hh_t = contiguous(w_hh_t)          # nn/rnn.py passes W_hh's transposed view
    cells = [None] * steps
    for t in _lstm_order(steps, reverse):
        cell = run(lstm_cell_op, chunks[t] + h @ w_hh_t, c)
        cells[t] = cell
        h, c = cell[:, :n], cell[:, n:2 * n]
    return cat(cells) if steps > 1 else cells[0]


def _lstm_sequence_backward_decompose(g_out: Tensor, g_h: Tensor, g_c: Tensor, y: Tensor,
                                      h0: Tensor, c0: Tensor, w_hh_t: Tensor, *,
                                      steps: int, reverse: bool) -> Tensor:
    # from the saved activations (tanh(c), i, f, g, o: y's columns 2H..7H), no gates
    rows, n = c0._data.shape
    ys = split(y, rows, 0) if steps > 1 else (y,)
    g_steps = split(g_out, rows, 0) if steps > 1 else (g_out,)
    w_hh = w_hh_t.mT
    prev = [None] * steps
    for t in _lstm_order(steps, reverse):
        prev[t] = (h0, c0) if t == (steps - 1 if reverse else 0) else \
            (ys[t + 1 if reverse else t - 1][:, :n], ys[t + 1 if reverse else t - 1][:, n:2 * n])
    dh, dc = g_h, g_c
    d = [None] * steps
    for t in _lstm_order(steps, reverse, backward=True):
        tc, i, f, g, o = split(ys[t], n, 1)[2:]
        dh = g_steps[t] + dh
        dc2 = dc + dh * o * (1 - tc * tc)
        d[t] = cat([dc2 * g * i * (1 - i), dc2 * prev[t][1] * f * (1 - f),
                    dc2 * i * (1 - g * g), dh * tc * o * (1 - o)], 1)
        dc = dc2 * f
        dh = d[t] @ w_hh
    d_gates = cat(d) if steps > 1 else d[0]
    h_prev = cat([p[0] for p in prev]) if steps > 1 else prev[0][0]
    tail = cat([dh, dc, zeros((rows, 2 * n), dtype=dh.dtype, device=dh.device)], 1)
    return cat([d_gates, tail, (d_gates.mT @ h_prev).reshape(n, 4 * n)])


def _lstm_sequence_shape(inputs, attrs) -> tuple:
    return (inputs[0]._data.shape[0], 7 * inputs[2]._data.shape[-1])


def _lstm_sequence_backward_shape(inputs, attrs) -> tuple:
    rows, n = inputs[5]._data.shape
    return (attrs["steps"] * rows + rows + n, 4 * n)


lstm_sequence_op = declare(
    "lstm_sequence", "composite", rule_same, sig="gi, h0, c0, w_hh_t, *, steps: int, "
    "reverse: bool", shape=_lstm_sequence_shape, decompose=_lstm_sequence_decompose,
    doc="one direction of one LSTM layer over `steps` equal steps of B rows: gi (T*B, 4H) "
        "the input projections (bias included), h0, c0 (B, H), w_hh_t (H, 4H) (W_hh's "
        "transposed view will do); reverse runs "
        "the last step first.  (T*B, 7H): per step lstm_cell's columns h, c, tanh(c), i, f, "
        "g, o (nn/rnn.py takes its gradient through lstm_sequence_backward)")

lstm_sequence_backward_op = declare(
    "lstm_sequence_backward", "gradient", rule_same,
    sig="g_out, g_h, g_c, y, h0, c0, w_hh_t, *, steps: int, reverse: bool",
    serves="lstm_sequence", shape=_lstm_sequence_backward_shape,
    decompose=_lstm_sequence_backward_decompose,
    doc="the gradient of lstm_sequence from d out (T*B, H), d h_n, d c_n (B, H) and its "
        "output y: (T*B + B + H, 4H) = d gates (= d gi) of every step, then B rows "
        "[d h0 | d c0 | 0 | 0], then H rows holding d W_hh = d w_hh_t^T, (4H, H) "
        "row-major (W_hh's own layout)")


def _gru_sequence_decompose(gi: Tensor, h: Tensor, w_hh_t: Tensor, b_hh: Tensor, *,
                            steps: int, reverse: bool) -> Tensor:
    rows, n = h._data.shape
    chunks = split(gi, rows, 0) if steps > 1 else (gi,)
    w_hh_t = contiguous(w_hh_t)
    ys = [None] * steps
    for t in _lstm_order(steps, reverse):
        gh = h @ w_hh_t + b_hh
        r, z, new, gh_n = _gru_parts(chunks[t], gh, h)
        h = new + z * (h - new)
        ys[t] = cat([h, r, z, new, gh_n], 1)
    return cat(ys) if steps > 1 else ys[0]


def _gru_sequence_backward_decompose(g_out: Tensor, g_h: Tensor, y: Tensor, h0: Tensor,
                                     w_hh_t: Tensor, *, steps: int, reverse: bool) -> Tensor:
    rows, n = h0._data.shape
    ys = split(y, rows, 0) if steps > 1 else (y,)
    g_steps = split(g_out, rows, 0) if steps > 1 else (g_out,)
    w_hh = w_hh_t.mT
    first = steps - 1 if reverse else 0
    h_prev = [h0 if t == first else ys[t + 1 if reverse else t - 1][:, :n]
              for t in range(steps)]
    dh = g_h
    d_gi, d_gh = [None] * steps, [None] * steps
    for t in _lstm_order(steps, reverse, backward=True):
        r, z, new, gh_n = split(ys[t], n, 1)[1:]
        dh = g_steps[t] + dh
        dn = dh * (1 - z) * (1 - new * new)
        dr = dn * gh_n * r * (1 - r)
        dz = dh * (h_prev[t] - new) * z * (1 - z)
        d_gi[t], d_gh[t] = cat([dr, dz, dn], 1), cat([dr, dz, dn * r], 1)
        dh = dh * z + d_gh[t] @ w_hh
    d_gi = cat(d_gi) if steps > 1 else d_gi[0]
    d_gh = cat(d_gh) if steps > 1 else d_gh[0]
    h_prev = cat(h_prev) if steps > 1 else h_prev[0]
    tail = cat([dh, zeros((rows, 2 * n), dtype=dh.dtype, device=dh.device)], 1)
    d_b = d_gh.sum(0, keepdim=True)
    return cat([d_gi, d_gh, tail, (d_gh.mT @ h_prev).reshape(n, 3 * n), d_b])


def _gru_sequence_shape(inputs, attrs) -> tuple:
    return (inputs[0]._data.shape[0], 5 * inputs[1]._data.shape[-1])


def _gru_sequence_backward_shape(inputs, attrs) -> tuple:
    rows, n = inputs[3]._data.shape
    return (2 * attrs["steps"] * rows + rows + n + 1, 3 * n)


gru_sequence_op = declare(
    "gru_sequence", "composite", rule_same, sig="gi, h0, w_hh_t, b_hh, *, steps: int, "
    "reverse: bool", shape=_gru_sequence_shape, decompose=_gru_sequence_decompose,
    doc="one direction of one GRU layer over `steps` equal steps of B rows: gi (T*B, 3H) "
        "the input projections (b_ih included), h0 (B, H), w_hh_t (H, 3H), b_hh (3H); "
        "reverse runs the last step first.  (T*B, 5H): per step h, r, z, n and "
        "W_hn h_prev + b_hn (nn/rnn.py takes its gradient through gru_sequence_backward)")

gru_sequence_backward_op = declare(
    "gru_sequence_backward", "gradient", rule_same,
    sig="g_out, g_h, y, h0, w_hh_t, *, steps: int, reverse: bool", serves="gru_sequence",
    shape=_gru_sequence_backward_shape, decompose=_gru_sequence_backward_decompose,
    doc="the gradient of gru_sequence from d out (T*B, H), d h_n (B, H) and its output y: "
        "(2*T*B + B + H + 1, 3H) = d gi of every step, d gh of every step, B rows "
        "[d h0 | 0 | 0], H rows holding d W_hh = d w_hh_t^T, (3H, H) row-major, one row "
        "d b_hh")
