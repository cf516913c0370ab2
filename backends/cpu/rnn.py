"""The CPU's kernels of ops/rnn.py's whole-sequence LSTM and GRU (lstm_sequence,
gru_sequence and their gradients): the time loop of one direction of one layer inside one
kernel call, over buffers allocated once per sequence and written in place (out=), so a step
costs its matmul and a dozen (the forwards) to twenty (the gradients) ufunc calls on
(batch, hidden) blocks, without per-step dispatch, autograd or temporaries.

What a step costs besides its product is mostly NumPy's calls, one pass each, so the kernels
keep every call on a contiguous block: a step works gate-major, on (K, B, H) scratch blocks
(a column block of y's (B, 7H) rows is strided, and a strided operand costs a ufunc call
~1.5x), with ONE copy between the scratch and y's rows of that step; they fold what they can
into the product (the recurrent weight's sigmoid-gate blocks come negated, so exp(-x) needs
no negation pass); the gradients work from that step's rows of y while they are in cache
(whole-sequence passes for the step-independent factors were ~20% slower: each pass a trip
through memory); and the recurrent product runs gate by gate, h @ W as a stack of (H, H)
blocks with a (K, B, H) result: ~30% faster in OpenBLAS than one (B, K*H) product (~15% in
the gradient, with the sum over the blocks).  Measured and left out (hidden 200, batch 20):
fewer, larger ufunc calls do not pay, the steps' memory traffic is what costs (the
gradient's step-independent factors stored by the forward: forward +20%, gradient -10%;
those factors over chunks of 3-35 steps: slower; y gate-major, (7, T*B, H): only -4% of
the kernels' time for a change of the declared layout; the ufuncs writing into y's
strided rows instead of one copy: slower; the bias out of gi and into the step, to save
linear's bias pass (~0.2 ms a layer): subtracted per step, +8 us a step (~0.3 ms a
layer), or as a ones column of h ([h | 1] @ [W; b], K = H + 1: the product as fast, but
h written strided, +3 us a step, and one more copy into y): no gain either way; the
gradient's per-step d h_prev product as one (B, 4H) @ (4H, H) from the step's d gates
rows: ~25% slower than the split blocks and their sum; exp and + 1 over the three sigmoid
blocks only, the product's gate blocks ordered i, f, o, g (gi's subtraction then three
calls): 0-2% of the forward kernel, within the noise).

Layouts (ops/rnn.py's declarations): gi (T*B, 4H) the input projection of every step
(bias included), y (T*B, 7H) = per step rows h, c, tanh(c), i, f, g, o (activated), as
lstm_cell's; the gradient (T*B + B + H, 4H) = d gates of every step, then B rows
[d h0 | d c0 | 0 | 0], then H rows holding d W_hh, (4H, H) row-major (w_hh_t's
gradient is its transpose: W_hh's own layout, which the weight's update reads).  w_hh_t
may be W_hh's transposed view (nn/rnn.py passes it so): the kernels lay it out themselves.

The results (y, the gradients' arrays: several MB each) and the weights' gate-block copies
come from spares.result: the previous call's array of the same shape once nothing holds
it, not a fresh one that page-faults (spares.py says what that cost).
"""
from __future__ import annotations

import numpy as np

from .spares import result as _result


def lstm_sequence(gi, h0, c0, w_hh_t, *, steps, reverse):
    rows, n = c0.shape
    dtype = np.result_type(gi, h0, c0, w_hh_t)
    y = _result((steps * rows, 7 * n), dtype)
    y4 = y.reshape(steps, rows, 7, n)                      # h, c, tanh(c), i, f, g, o
    gi4 = gi.reshape(steps, rows, 4, n).transpose(0, 2, 1, 3)   # (T, 4, B, H): i, f, g, o
    w = _result((4, n, n), dtype)                          # -W_hh^T's gate blocks
    np.negative(w_hh_t.reshape(n, 4, n).transpose(1, 0, 2), out=w)
    acc = np.empty((4, rows, n), dtype=dtype)             # -(pre-activations), i f g o
    sc = np.empty((7, rows, n), dtype=dtype)               # this step's y, gate-major
    hs, c, tc, i, f, g, o = sc
    ig = np.empty((rows, n), dtype=dtype)
    c[...] = c0                                            # c and h update in place
    h = h0
    matmul, subtract, multiply, add, exp, tanh, negative, reciprocal = (
        np.matmul, np.subtract, np.multiply, np.add, np.exp, np.tanh, np.negative,
        np.reciprocal)
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        matmul(h, w, out=acc)                              # -(h W_hh^T)
        subtract(acc, gi4[t], out=acc)                     # -pre-activation
        tanh(acc[2], out=g)
        negative(g, out=g)                                 # g = -tanh(-x)
        exp(acc, out=acc)                                  # 1 / (1 + exp(-x)) (overflow:
        acc += 1                                           # 0); g's block is spare
        reciprocal(acc[:2], out=sc[3:5])                   # i, f
        reciprocal(acc[3], out=o)
        multiply(f, c, out=c)                              # c = f c_prev + i g
        multiply(i, g, out=ig)
        add(c, ig, out=c)
        tanh(c, out=tc)
        multiply(o, tc, out=hs)                            # h = o tanh(c)
        h = hs
        y4[t] = sc.transpose(1, 0, 2)
    return y


def lstm_sequence_backward(g_out, g_h, g_c, y, h0, c0, w_hh_t, *, steps, reverse):
    # step by step from a gate-major copy of the step's rows of y: with dc2 = d c_t (through
    # h_t and from step t+1), d gates = [dc2 i (1 - i) g, dc2 f (1 - f) c_prev,
    # dc2 (1 - g^2) i, dh_t o (1 - o) tanh(c)], dc2 = dc_next + dh_t o (1 - tanh(c)^2),
    # where h = o tanh(c) stands in for a product; the step's d gates go into the result's
    # rows in one copy, and d h_prev = sum_k d_k W_hh_k.  The copy of the step next in
    # line is made a step early (two buffers in turn), so c_prev is a contiguous block too
    rows, n = c0.shape
    total = steps * rows
    dtype = y.dtype
    y4 = y.reshape(steps, rows, 7, n)
    go = g_out.reshape(steps, rows, n)
    w = _result((4, n, n), dtype)                          # W_hh's blocks
    w[...] = w_hh_t.reshape(n, 4, n).transpose(1, 2, 0)
    out = _result((total + rows + n, 4 * n), dtype)
    dg = out[:total]
    d = dg.reshape(steps, rows, 4, n)
    dh = np.array(g_h, dtype=dtype)
    dc = np.array(g_c, dtype=dtype)
    dc2 = np.empty((rows, n), dtype=dtype)
    s = np.empty((rows, n), dtype=dtype)
    s2 = np.empty((2, rows, n), dtype=dtype)
    ycs = np.empty((2, 7, rows, n), dtype=dtype)           # steps' y, gate-major, in turn
    dd = np.empty((4, rows, n), dtype=dtype)               # this step's d gates, gate-major
    di, df, dgg, do = dd
    # d h_prev = sum_k d_k W_hh_k with each product split in two along its inner dimension
    # (the gate's columns), 8 (B, H/2) @ (H/2, H) products summed: ~15% faster in OpenBLAS
    # at hidden 200 than the 4 (B, H) @ (H, H) (benchmarks/rnn.py)
    split = 2 if n % 2 == 0 else 1
    w_k = w.reshape(4, split, n // split, n)
    dd_k = dd.reshape(4, rows, split, n // split).transpose(0, 2, 1, 3)
    acc = np.empty((4, split, rows, n), dtype=dtype)
    acc_k = acc.reshape(4 * split, rows, n)
    matmul, multiply, subtract, add = np.matmul, np.multiply, np.subtract, np.add
    first = steps - 1 if reverse else 0
    order = range(steps) if reverse else range(steps - 1, -1, -1)
    ycs[0] = y4[order[0]].transpose(1, 0, 2)
    for k, t in enumerate(order):
        yc, nxt = ycs[k & 1], ycs[1 - (k & 1)]
        h, tc, i, f, g, o = yc[0], yc[2], yc[3], yc[4], yc[5], yc[6]
        if t == first:
            c_prev = c0
        else:                                              # the next step's rows, c_prev
            nxt[...] = y4[t + 1 if reverse else t - 1].transpose(1, 0, 2)
            c_prev = nxt[1]
        dh += go[t]                                        # d h_t: output and step t+1
        multiply(h, tc, out=s)                             # dc2
        subtract(o, s, out=s)
        multiply(s, dh, out=dc2)
        dc2 += dc
        multiply(h, o, out=s)                              # d o
        subtract(h, s, out=s)
        multiply(s, dh, out=do)
        ifs = yc[3:5]                                      # i (1 - i), f (1 - f)
        multiply(ifs, ifs, out=s2)
        subtract(ifs, s2, out=s2)
        multiply(s2[0], g, out=s)                          # d i
        multiply(s, dc2, out=di)
        multiply(s2[1], c_prev, out=s)                     # d f
        multiply(s, dc2, out=df)
        multiply(g, g, out=s)                              # d g
        multiply(s, i, out=s)
        subtract(i, s, out=s)
        multiply(s, dc2, out=dgg)
        multiply(dc2, f, out=dc)                           # d c_prev
        d[t] = dd.transpose(1, 0, 2)
        matmul(dd_k, w_k, out=acc)                         # d h_prev = sum_k d_k W_hh_k
        add.reduce(acc_k, axis=0, out=dh)
    tail = out[total:total + rows]
    tail[:, :n], tail[:, n:2 * n], tail[:, 2 * n:] = dh, dc, 0
    # d W_hh = d gates^T @ h_prev in W_hh's own (4H, H) layout, h_prev being y's h one step
    # back (h0 at the first step)
    _d_w_hh(dg, y, h0, n, rows, reverse, out[total + rows:].reshape(4 * n, n))
    return out


def _d_w_hh(dg, y, h0, n, rows, reverse, dw):
    """dw = dg^T @ h_prev, every step's h_prev being y's h columns one step back and h0 at
    the first step, as one product: over y's h columns in place when h0 is zero (no state
    passed in: the first step adds nothing), else over a copy of the rows with h0's."""
    if y.shape[0] > rows and not h0.any():
        if reverse:
            np.matmul(dg[:-rows].T, y[rows:, :n], out=dw)
        else:
            np.matmul(dg[rows:].T, y[:-rows, :n], out=dw)
        return
    hp = _result((y.shape[0], n), y.dtype)
    if reverse:
        hp[:-rows], hp[-rows:] = y[rows:, :n], h0
    else:
        hp[rows:], hp[:rows] = y[:-rows, :n], h0
    np.matmul(dg.T, hp, out=dw)


# GRU: y (T*B, 5H) = per step rows h, r, z, n, (W_hn h_prev + b_hn); the gradient
# (2*T*B + B + H + 1, 3H) = d gi of every step, d gh of every step, B rows [d h0 | 0 | 0],
# H rows holding d W_hh (3H, H) row-major, one row d b_hh

def gru_sequence(gi, h0, w_hh_t, b_hh, *, steps, reverse):
    # as the LSTM's: acc = h W_hh^T + b_hh as (3, B, H) gate blocks, r's and z's negated
    # (their weight and bias blocks are) for exp(-x); the step's y gate-major in sc
    rows, n = h0.shape
    dtype = np.result_type(gi, h0, w_hh_t, b_hh)
    y = _result((steps * rows, 5 * n), dtype)
    y5 = y.reshape(steps, rows, 5, n)                      # h, r, z, n, W_hn h + b_hn
    gi3 = gi.reshape(steps, rows, 3, n).transpose(0, 2, 1, 3)   # (T, 3, B, H): r, z, n
    w = _result((3, n, n), dtype)                          # W_hh^T's gate blocks: -r, -z, n
    w_blocks = w_hh_t.reshape(n, 3, n).transpose(1, 0, 2)
    np.negative(w_blocks[:2], out=w[:2])
    w[2] = w_blocks[2]
    b = np.empty((3, 1, n), dtype=dtype)
    np.negative(b_hh.reshape(3, 1, n)[:2], out=b[:2])
    b[2] = b_hh[2 * n:]
    acc = np.empty((3, rows, n), dtype=dtype)
    sc = np.empty((5, rows, n), dtype=dtype)               # this step's y, gate-major
    hs, r, z, new, ghn = sc
    h = h0
    matmul, subtract, multiply, add, exp, tanh, reciprocal = (
        np.matmul, np.subtract, np.multiply, np.add, np.exp, np.tanh, np.reciprocal)
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        git = gi3[t]
        matmul(h, w, out=acc)
        acc += b
        rz = acc[:2]
        subtract(rz, git[:2], out=rz)                      # -(pre-activations of r, z)
        exp(rz, out=rz)
        rz += 1
        reciprocal(rz, out=sc[1:3])                        # r, z
        ghn[...] = acc[2]
        multiply(r, ghn, out=new)                          # n = tanh(gi_n + r ghn)
        add(new, git[2], out=new)
        tanh(new, out=new)
        subtract(h, new, out=hs)                           # n + z (h - n)
        multiply(hs, z, out=hs)
        add(hs, new, out=hs)
        h = hs
        y5[t] = sc.transpose(1, 0, 2)
    return y


def gru_sequence_backward(g_out, g_h, y, h0, w_hh_t, *, steps, reverse):
    # as the LSTM's, step by step from a gate-major copy of the step's rows of y: with dh =
    # d h_t and a = (1 - z)(1 - n^2), d gi = [dh a ghn r (1 - r), dh (h_prev - n) z (1 - z),
    # dh a] and d gh the same with its last block dh a r; d h_prev = d gh W_hh + dh z
    rows, n = h0.shape
    total = steps * rows
    dtype = y.dtype
    y5 = y.reshape(steps, rows, 5, n)                      # h, r, z, n, ghn
    out = _result((2 * total + rows + n + 1, 3 * n), dtype)
    d_gi = out[:total].reshape(steps, rows, 3, n)
    d_gh_rows = out[total:2 * total]
    d_gh = d_gh_rows.reshape(steps, rows, 3, n)
    w = _result((3, n, n), dtype)                          # W_hh's blocks
    w[...] = w_hh_t.reshape(n, 3, n).transpose(1, 2, 0)
    go = g_out.reshape(steps, rows, n)
    dh = np.array(g_h, dtype=dtype)
    s = np.empty((rows, n), dtype=dtype)
    s2 = np.empty((rows, n), dtype=dtype)
    yc = np.empty((5, rows, n), dtype=dtype)               # this step's y, gate-major
    dd = np.empty((4, rows, n), dtype=dtype)               # d n, d r, d z, d gh_n
    split = 2 if n % 2 == 0 else 1                         # d h_prev's product split in
    w_k = w.reshape(3, split, n // split, n)               # two (see the LSTM's)
    dd_k = dd[1:].reshape(3, rows, split, n // split).transpose(0, 2, 1, 3)
    acc = np.empty((3, split, rows, n), dtype=dtype)
    acc_k = acc.reshape(3 * split, rows, n)
    back = np.empty((rows, n), dtype=dtype)
    _, r, z, new, ghn = yc
    dn, dr, dz, dghn = dd
    matmul, multiply, subtract, add = np.matmul, np.multiply, np.subtract, np.add
    first = steps - 1 if reverse else 0
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        yc[...] = y5[t].transpose(1, 0, 2)
        h_prev = h0 if t == first else y5[t + 1 if reverse else t - 1][:, 0]
        dh += go[t]
        multiply(new, new, out=s)                          # a = (1 - n^2)(1 - z)
        subtract(1, s, out=s)
        multiply(z, s, out=s2)
        subtract(s, s2, out=s)
        multiply(s, dh, out=dn)                            # d n = dh a
        multiply(dn, r, out=dghn)                          # d gh_n = dh a r
        multiply(dghn, ghn, out=s)                         # d r = d gh_n ghn (1 - r)
        multiply(s, r, out=s2)
        subtract(s, s2, out=dr)
        subtract(h_prev, new, out=s)                       # d z = dh (h_prev - n) z (1 - z)
        s *= dh
        multiply(z, z, out=s2)
        subtract(z, s2, out=s2)
        multiply(s, s2, out=dz)
        gi_t = d_gi[t]                                     # into the result's rows
        gi_t[:, :2] = dd[1:3].transpose(1, 0, 2)
        gi_t[:, 2] = dn
        d_gh[t] = dd[1:].transpose(1, 0, 2)
        matmul(dd_k, w_k, out=acc)                         # d h_prev
        add.reduce(acc_k, axis=0, out=back)
        dh *= z
        dh += back
    tail = out[2 * total:2 * total + rows]
    tail[:, :n], tail[:, n:] = dh, 0
    _d_w_hh(d_gh_rows, y, h0, n, rows, reverse,                # d W_hh (see the LSTM's)
            out[2 * total + rows:-1].reshape(3 * n, n))
    np.sum(d_gh_rows, axis=0, out=out[-1])
    return out
