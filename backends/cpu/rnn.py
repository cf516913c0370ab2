"""The CPU's kernels of ops/rnn.py's whole-sequence LSTM (lstm_sequence and its gradient):
the time loop of one direction of one layer inside one kernel call, over buffers allocated
once per sequence and written in place (out=), so a step costs its matmul and a dozen
ufunc calls on (batch, hidden) blocks, without per-step dispatch, autograd or temporaries.

Layouts (ops/rnn.py's declarations): gi (T*B, 4H) the input projection of every step
(bias included), y (T*B, 7H) = per step rows h, c, tanh(c), i, f, g, o (activated), as
lstm_cell's; the gradient (T*B + B + H, 4H) = d gates of every step, then B rows
[d h0 | d c0 | 0 | 0], then H rows d W_hh^T.
"""
from __future__ import annotations

import numpy as np


def _sigmoid_(x, out):
    # 1 / (1 + exp(-x)) through out, in 4 ufunc calls (exp(-x) overflowing gives 0)
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)


def lstm_sequence(gi, h0, c0, w_hh_t, *, steps, reverse):
    rows, n = c0.shape
    dtype = np.result_type(gi, h0, c0, w_hh_t)
    y = np.empty((steps * rows, 7 * n), dtype=dtype)
    gates = np.empty((rows, 4 * n), dtype=dtype)
    ig = np.empty((rows, n), dtype=dtype)
    h, c = h0, c0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        yt = y[t * rows:(t + 1) * rows]
        np.matmul(h, w_hh_t, out=gates)
        gates += gi[t * rows:(t + 1) * rows]
        np.tanh(gates[:, 2 * n:3 * n], out=yt[:, 5 * n:6 * n])   # g
        # i, f, o: one sigmoid over the contiguous block (the g columns too: fewer and
        # faster calls than one per strided block, ~5% of the kernel), then two copies
        _sigmoid_(gates, gates)
        yt[:, 3 * n:5 * n] = gates[:, :2 * n]
        yt[:, 6 * n:] = gates[:, 3 * n:]
        i, f, g, o = (yt[:, k * n:(k + 1) * n] for k in range(3, 7))
        c_new = yt[:, n:2 * n]
        np.multiply(f, c, out=c_new)
        np.multiply(i, g, out=ig)
        c_new += ig
        tc = yt[:, 2 * n:3 * n]
        np.tanh(c_new, out=tc)
        h = yt[:, :n]
        np.multiply(o, tc, out=h)
        c = c_new
    return y


def lstm_sequence_backward(g_out, g_h, g_c, y, h0, c0, w_hh_t, *, steps, reverse):
    rows, n = c0.shape
    total = steps * rows
    dtype = y.dtype
    # h and c entering each step, as rows of y's step order
    h_prev = np.empty((total, n), dtype=dtype)
    c_prev = np.empty((total, n), dtype=dtype)
    if reverse:
        h_prev[:-rows], c_prev[:-rows] = y[rows:, :n], y[rows:, n:2 * n]
        h_prev[-rows:], c_prev[-rows:] = h0, c0
    else:
        h_prev[rows:], c_prev[rows:] = y[:-rows, :n], y[:-rows, n:2 * n]
        h_prev[:rows], c_prev[:rows] = h0, c0
    tc, i, f, g, o = (y[:, k * n:(k + 1) * n] for k in range(2, 7))
    # what does not depend on the recurrence, for all steps at once: with dc2 = d c_t
    # (through h_t and from step t+1), d gates = [dc2 * p_i, dc2 * p_f, dc2 * p_g,
    # dh_t * p_o] and dc2 = dc_next + dh_t * q
    p = np.empty((total, 4, n), dtype=dtype)
    s = np.empty((total, n), dtype=dtype)
    np.multiply(i, i, out=s)                  # i (1 - i) g
    np.subtract(i, s, out=s)
    np.multiply(s, g, out=p[:, 0])
    np.multiply(f, f, out=s)                  # f (1 - f) c_prev
    np.subtract(f, s, out=s)
    np.multiply(s, c_prev, out=p[:, 1])
    np.multiply(g, g, out=s)                  # (1 - g^2) i
    np.subtract(i, s * i, out=p[:, 2])
    np.multiply(o, o, out=s)                  # o (1 - o) tanh(c)
    np.subtract(o, s, out=s)
    np.multiply(s, tc, out=p[:, 3])
    q = np.multiply(tc, tc)                   # o (1 - tanh(c)^2)
    np.subtract(o, q * o, out=q)
    del s
    out = np.empty((total + rows + n, 4 * n), dtype=dtype)
    d = out[:total].reshape(total, 4, n)
    w_hh = np.ascontiguousarray(w_hh_t.T)     # d h_prev = d gates @ W_hh: row-major W_hh
    dh = np.array(g_h, dtype=dtype)
    dc = np.array(g_c, dtype=dtype)
    dc2 = np.empty((rows, n), dtype=dtype)
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        r = slice(t * rows, (t + 1) * rows)
        dh += g_out[r]                        # d h_t: from the output and from step t+1
        np.multiply(dh, q[r], out=dc2)
        dc2 += dc
        np.multiply(p[r, :3], dc2[:, None, :], out=d[r, :3])
        np.multiply(p[r, 3], dh, out=d[r, 3])
        np.multiply(dc2, f[r], out=dc)
        np.matmul(out[r], w_hh, out=dh)
    tail = out[total:total + rows]
    tail[:, :n], tail[:, n:2 * n], tail[:, 2 * n:] = dh, dc, 0
    np.matmul(h_prev.T, out[:total], out=out[total + rows:])
    return out


# GRU: y (T*B, 5H) = per step rows h, r, z, n, (W_hn h_prev + b_hn); the gradient
# (2*T*B + B + H + 1, 3H) = d gi of every step, d gh of every step, B rows [d h0 | 0 | 0],
# H rows d W_hh^T, one row d b_hh

def gru_sequence(gi, h0, w_hh_t, b_hh, *, steps, reverse):
    rows, n = h0.shape
    dtype = np.result_type(gi, h0, w_hh_t, b_hh)
    y = np.empty((steps * rows, 5 * n), dtype=dtype)
    gh = np.empty((rows, 3 * n), dtype=dtype)
    rz = np.empty((rows, 2 * n), dtype=dtype)
    h = h0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        r = slice(t * rows, (t + 1) * rows)
        yt, git = y[r], gi[r]
        np.matmul(h, w_hh_t, out=gh)
        gh += b_hh
        np.add(git[:, :2 * n], gh[:, :2 * n], out=rz)
        _sigmoid_(rz, yt[:, n:3 * n])                              # r, z
        ghn, new = yt[:, 4 * n:], yt[:, 3 * n:4 * n]
        ghn[...] = gh[:, 2 * n:]
        np.multiply(yt[:, n:2 * n], ghn, out=new)
        new += git[:, 2 * n:]
        np.tanh(new, out=new)
        h_new = yt[:, :n]
        np.subtract(h, new, out=h_new)                            # n + z (h - n)
        h_new *= yt[:, 2 * n:3 * n]
        h_new += new
        h = h_new
    return y


def gru_sequence_backward(g_out, g_h, y, h0, w_hh_t, *, steps, reverse):
    rows, n = h0.shape
    total = steps * rows
    dtype = y.dtype
    h_prev = np.empty((total, n), dtype=dtype)
    if reverse:
        h_prev[:-rows], h_prev[-rows:] = y[rows:, :n], h0
    else:
        h_prev[rows:], h_prev[:rows] = y[:-rows, :n], h0
    r, z, new, ghn = (y[:, k * n:(k + 1) * n] for k in range(1, 5))
    # with dh = d h_t: d gi = dh * [a ghn r (1 - r), (h_prev - n) z (1 - z), a] and d gh
    # the same with its last block a r, where a = (1 - z)(1 - n^2)
    p = np.empty((total, 3, n), dtype=dtype)
    p2 = np.empty((total, 3, n), dtype=dtype)
    s = np.empty((total, n), dtype=dtype)
    a = p[:, 2]
    np.multiply(new, new, out=s)
    np.subtract(1, s, out=a)
    a *= 1 - z
    np.multiply(r, r, out=s)                  # r (1 - r) ghn a
    np.subtract(r, s, out=s)
    s *= ghn
    np.multiply(s, a, out=p[:, 0])
    np.multiply(z, z, out=s)                  # z (1 - z) (h_prev - n)
    np.subtract(z, s, out=s)
    np.subtract(h_prev, new, out=p[:, 1])
    p[:, 1] *= s
    p2[:, :2] = p[:, :2]
    np.multiply(a, r, out=p2[:, 2])
    del s
    out = np.empty((2 * total + rows + n + 1, 3 * n), dtype=dtype)
    d_gi = out[:total].reshape(total, 3, n)
    d_gh_rows = out[total:2 * total]
    d_gh = d_gh_rows.reshape(total, 3, n)
    w_hh = np.ascontiguousarray(w_hh_t.T)
    dh = np.array(g_h, dtype=dtype)
    back = np.empty((rows, n), dtype=dtype)
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        k = slice(t * rows, (t + 1) * rows)
        dh += g_out[k]
        np.multiply(p[k], dh[:, None, :], out=d_gi[k])
        np.multiply(p2[k], dh[:, None, :], out=d_gh[k])
        np.matmul(d_gh_rows[k], w_hh, out=back)
        dh *= z[k]
        dh += back
    tail = out[2 * total:2 * total + rows]
    tail[:, :n], tail[:, n:] = dh, 0
    np.matmul(h_prev.T, d_gh_rows, out=out[2 * total + rows:-1])
    np.sum(d_gh_rows, axis=0, out=out[-1])
    return out
