"""Conformance rows of every loss of nn.functional, with NumPy references."""
from __future__ import annotations

import numpy as np

from ._references import _dist, _lse, _softmax, _softplus
from ._table import ALL_FLOATS, F, Input, Rows

ROWS = Rows("loss")
case = ROWS.case


def _log_softmax(x, axis):
    return x - _lse(x, axis)[..., None] if axis == -1 else np.log(_softmax(x, axis))


def _nll(logp, t, weight=None, ignore=-100, reduction="mean"):
    n = logp.shape[0]
    keep = t != ignore
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    w = keep.astype(np.float64) * (1.0 if weight is None else weight[safe])
    loss = -picked * w
    assert loss.shape == (n,)
    return loss.sum() / w.sum() if reduction == "mean" else loss.sum() \
        if reduction == "sum" else loss


def _ce_smooth(x, t, eps):
    logp = _log_softmax(x, 1)
    c = x.shape[1]
    return np.mean(-(1 - eps) * np.take_along_axis(logp, t[:, None], 1)[:, 0]
                   - eps / c * logp.sum(1))


_T5 = Input((5,), "i", (2, 0, 3, 3, 1))
case("cross_entropy", lambda E, x, t: (F(E).cross_entropy(x, t),
                                       F(E).cross_entropy(x, t, reduction="none")),
     lambda np, x, t: (_nll(_log_softmax(x, 1), t), _nll(_log_softmax(x, 1), t,
                                                         reduction="none")),
     Input((5, 4)), _T5, dtypes=ALL_FLOATS, atol=1e-4, rtol=1e-4)
case("cross_entropy:weight_ignore", lambda E, x, t, w: F(E).cross_entropy(
    x, t.masked_fill(t == 3, -100), weight=w.abs() + 0.1),
     lambda np, x, t, w: _nll(_log_softmax(x, 1), np.where(t == 3, -100, t), np.abs(w) + 0.1),
     Input((5, 4)), _T5, Input((4,)), ops=("cross_entropy",))
case("cross_entropy:label_smoothing", lambda E, x, t: F(E).cross_entropy(
    x, t, label_smoothing=0.2), lambda np, x, t: _ce_smooth(x, t, 0.2), Input((5, 4)), _T5,
     ops=("cross_entropy",))
case("cross_entropy:probabilities", lambda E, x, p: F(E).cross_entropy(x, p.softmax(1)),
     lambda np, x, p: np.mean(-(_softmax(p, 1) * _log_softmax(x, 1)).sum(1)),
     Input((5, 4)), Input((5, 4)), ops=("cross_entropy",))
case("cross_entropy:spatial", lambda E, x, t: F(E).cross_entropy(x, t, reduction="sum"),
     lambda np, x, t: -np.take_along_axis(np.log(_softmax(x, 1)), t[:, None], 1).sum(),
     Input((2, 3, 2, 2)), Input((2, 2, 2), "ix3"), ops=("cross_entropy",))
case("nll_loss", lambda E, x, t: (F(E).nll_loss(x, t), F(E).nll_loss(x, t, reduction="sum")),
     lambda np, x, t: (_nll(x, t), _nll(x, t, reduction="sum")), Input((5, 4)), _T5)
case("mse_loss", lambda E, x, y: (F(E).mse_loss(x, y), F(E).mse_loss(x, y, reduction="none")),
     lambda np, x, y: (((x - y) ** 2).mean(), (x - y) ** 2), Input((3, 4)), Input((3, 4)))
case("l1_loss", lambda E, x, y: (F(E).l1_loss(x, y), F(E).l1_loss(x, y, reduction="sum")),
     lambda np, x, y: (np.abs(x - y).mean(), np.abs(x - y).sum()), Input((3, 4)),
     Input((3, 4)))
case("smooth_l1_loss", lambda E, x, y: F(E).smooth_l1_loss(x * 2, y, beta=0.5),
     lambda np, x, y: np.mean(np.where(np.abs(2 * x - y) < 0.5, (2 * x - y) ** 2 / 1.0,
                                       np.abs(2 * x - y) - 0.25)), Input((3, 4)), Input((3, 4)))
case("huber_loss", lambda E, x, y: F(E).huber_loss(x * 2, y, delta=0.7),
     lambda np, x, y: np.mean(np.where(np.abs(2 * x - y) < 0.7, 0.5 * (2 * x - y) ** 2,
                                       0.7 * (np.abs(2 * x - y) - 0.35))),
     Input((3, 4)), Input((3, 4)))
case("binary_cross_entropy", lambda E, p, t, w: (F(E).binary_cross_entropy(p, t),
                                                 F(E).binary_cross_entropy(p, t, weight=w)),
     lambda np, p, t, w: (np.mean(-(t * np.log(p) + (1 - t) * np.log(1 - p))),
                          np.mean(-w * (t * np.log(p) + (1 - t) * np.log(1 - p)))),
     Input((3, 4), "f", tuple(np.linspace(0.05, 0.95, 12))), Input((3, 4), "f",
                                                              (0, 1, 1, 0) * 3),
     Input((3, 4), "p"), atol=1e-4)
case("binary_cross_entropy_with_logits", lambda E, x, t, pw: (
    F(E).binary_cross_entropy_with_logits(x * 5, t),
    F(E).binary_cross_entropy_with_logits(x, t, pos_weight=pw)),
     lambda np, x, t, pw: (np.mean((1 - t) * 5 * x + _softplus(-5 * x)),
                           np.mean((1 - t) * x + (1 + (pw - 1) * t) * _softplus(-x))),
     Input((3, 4)), Input((3, 4), "f", (0, 1, 1, 0) * 3), Input((4,), "p"), atol=1e-4)
case("kl_div", lambda E, x, t: (F(E).kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"),
                                F(E).kl_div(x, t, reduction="sum", log_target=True)),
     lambda np, x, t: ((_softmax(t, 1) * (np.log(_softmax(t, 1)) - _log_softmax(x, 1))).sum()
                       / x.shape[0], (np.exp(t) * (t - x)).sum()),
     Input((3, 4)), Input((3, 4)))


# --- margin, embedding and likelihood losses -----------------------------------------------
def _softplus_exact(x):
    """log(1 + e^x) with no threshold (the shared _softplus has torch's threshold)."""
    return np.logaddexp(0.0, x)


def _reductions(loss):
    return loss.mean(), loss.sum(), loss


_SIGNS6 = Input((6,), "f", (1.0, -1.0, -1.0, 1.0, 1.0, -1.0))
_SIGNS12 = Input((3, 4), "f", (1.0, -1.0, -1.0, 1.0) * 3)
# sign targets as int64: a float target would be probed by gradcheck, off the signs
_ISIGNS6 = Input((6,), "i", (1, -1, -1, 1, 1, -1))
_ISIGNS12 = Input((3, 4), "i", (1, -1, -1, 1) * 3)
_BITS12 = Input((3, 4), "f", (0.0, 1.0, 1.0, 0.0, 1.0, 0.0) * 2)
# counts away from 1, where the Stirling term of the full Poisson loss switches on
_COUNTS12 = Input((3, 4), "f", (0.0, 2.0, 3.0, 0.0, 5.0, 4.0, 0.0, 2.0, 6.0, 3.0, 0.0, 7.0))

case("triplet_margin_loss", lambda E, a, p, n: (
    F(E).triplet_margin_loss(a, p, n, margin=2.0),
    F(E).triplet_margin_loss(a, p, n, margin=2.0, swap=True, reduction="none")),
     lambda np, a, p, n: (np.maximum(_dist(a, p) - _dist(a, n) + 2.0, 0).mean(),
                          np.maximum(_dist(a, p) - np.minimum(_dist(a, n), _dist(p, n)) + 2.0,
                                     0)),
     Input((3, 4)), Input((3, 4)), Input((3, 4)), atol=1e-4)
case("margin_ranking_loss", lambda E, a, b, t: tuple(
    F(E).margin_ranking_loss(a, b, t, 0.3, reduction=r) for r in ("mean", "sum", "none")),
     lambda np, a, b, t: _reductions(np.maximum(-t * (a - b) + 0.3, 0)),
     Input((6,)), Input((6,)), _SIGNS6)
case("hinge_embedding_loss", lambda E, x, t: tuple(
    F(E).hinge_embedding_loss(x, t, 0.8, reduction=r) for r in ("mean", "sum", "none")),
     lambda np, x, t: _reductions(np.where(t == 1, x, np.maximum(0.8 - x, 0))),
     Input((3, 4), "p"), _ISIGNS12)
case("soft_margin_loss", lambda E, x, t: (F(E).soft_margin_loss(x, t),
                                          F(E).soft_margin_loss(x, t, reduction="none")),
     lambda np, x, t: (_softplus_exact(-t * x).mean(), _softplus_exact(-t * x)), Input((3, 4)),
     _SIGNS12)
case("cosine_embedding_loss", lambda E, a, b, t: tuple(
    F(E).cosine_embedding_loss(a, b, t, 0.1, reduction=r) for r in ("mean", "sum", "none")),
     lambda np, a, b, t: _reductions(np.where(
         t == 1, 1 - (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1)),
         np.maximum((a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1)) - 0.1, 0))),
     Input((6, 3)), Input((6, 3)), _ISIGNS6, atol=1e-4)
case("poisson_nll_loss", lambda E, x, t: (
    F(E).poisson_nll_loss(x, t), F(E).poisson_nll_loss(x.abs() + 0.5, t, log_input=False,
                                                       full=True, reduction="none")),
     lambda np, x, t: ((np.exp(x) - t * x).mean(),
                       np.abs(x) + 0.5 - t * np.log(np.abs(x) + 0.5 + 1e-8) + np.where(
                           t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(
                               2 * np.pi * np.maximum(t, 1)), 0)),
     Input((3, 4)), _COUNTS12, atol=1e-4)
case("gaussian_nll_loss", lambda E, x, y, v: (
    F(E).gaussian_nll_loss(x, y, v.abs() + 0.1, full=True),
    F(E).gaussian_nll_loss(x, y, v[:, 0].abs() + 0.1, reduction="sum")),
     lambda np, x, y, v: (
         (0.5 * (np.log(np.abs(v) + 0.1) + (x - y) ** 2 / (np.abs(v) + 0.1))
          + 0.5 * np.log(2 * np.pi)).mean(),
         (0.5 * (np.log(np.abs(v[:, :1]) + 0.1) + (x - y) ** 2 / (np.abs(v[:, :1]) + 0.1)))
         .sum()),
     Input((3, 4)), Input((3, 4)), Input((3, 4)), atol=1e-4)


def _multi_margin(x, t, p, margin, w=None):
    z = margin - np.take_along_axis(x, t[:, None], 1) + x
    h = np.where(np.arange(x.shape[1]) == t[:, None], 0, np.maximum(z, 0)) ** p
    if w is not None:
        h = h * w[t][:, None]
    return h.sum(1) / x.shape[1]


case("multi_margin_loss", lambda E, x, t, w: (
    F(E).multi_margin_loss(x, t), F(E).multi_margin_loss(
        x, t, p=2, margin=0.7, weight=w.abs() + 0.5, reduction="none")),
     lambda np, x, t, w: (_multi_margin(x, t, 1, 1.0).mean(),
                          _multi_margin(x, t, 2, 0.7, np.abs(w) + 0.5)),
     Input((5, 4)), Input((5,), "ix4"), Input((4,)), atol=1e-4)
case("multilabel_soft_margin_loss", lambda E, x, t, w: (
    F(E).multilabel_soft_margin_loss(x, t),
    F(E).multilabel_soft_margin_loss(x, t, weight=w, reduction="none")),
     lambda np, x, t, w: ((t * _softplus_exact(-x) + (1 - t) * _softplus_exact(x)).mean(1).mean(),
                          (w * (t * _softplus_exact(-x) + (1 - t) * _softplus_exact(x))).mean(1)),
     Input((3, 4)), _BITS12, Input((4,)), atol=1e-4)


def _multilabel_margin(x, t):
    """Per sample: sum over its classes y (t up to the first -1) and the classes i it lacks
    of max(0, 1 - (x[y] - x[i])), over C."""
    x2, t2 = x.reshape(-1, x.shape[-1]), t.reshape(-1, t.shape[-1])
    out = np.zeros(len(x2))
    for r, (xr, tr) in enumerate(zip(x2, t2)):
        ys = list(tr[:list(tr).index(-1)] if -1 in tr else tr)
        others = [i for i in range(len(xr)) if i not in ys]
        out[r] = sum(max(0.0, 1 - xr[y] + xr[i]) for y in ys for i in others) / len(xr)
    return out.reshape(x.shape[:-1])


# targets: classes ended by -1, all classes but one, a repeated class after the end marker
case("multilabel_margin_loss", lambda E, x, t: tuple(
    F(E).multilabel_margin_loss(x, t, reduction=r) for r in ("mean", "sum", "none")) + (
    F(E).multilabel_margin_loss(x[0], t[0]),),
     lambda np, x, t: _reductions(_multilabel_margin(x, t)) + (_multilabel_margin(x[0], t[0]),),
     Input((3, 4)), Input((3, 4), "i", (3, 0, -1, 1, 1, 2, 3, -1, 2, -1, 0, 0)), atol=1e-4)
case("triplet_margin_with_distance_loss", lambda E, a, p, n: (
    F(E).triplet_margin_with_distance_loss(a, p, n, margin=2.0),
    F(E).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), margin=1.5, swap=True,
        reduction="none")),
     lambda np, a, p, n: (np.maximum(_dist(a, p) - _dist(a, n) + 2.0, 0).mean(),
                          np.maximum(np.abs(a - p).sum(-1) - np.minimum(
                              np.abs(a - n).sum(-1), np.abs(p - n).sum(-1)) + 1.5, 0)),
     Input((3, 4)), Input((3, 4)), Input((3, 4)), atol=1e-4)


_CTC_TARGETS = ((1, 2, 2), (3, 1, 0))       # the second entry's length is 2
_CTC_LENGTHS = ((5, 4), (3, 2))             # input_lengths, target_lengths


def _ctc(logp, targets, input_lengths, target_lengths):
    """Reference: the CTC negative log-likelihood by the alpha recursion, entry by entry."""
    out = []
    for n, (frames, length) in enumerate(zip(input_lengths, target_lengths)):
        ext = [0]
        for label in targets[n][:length]:
            ext += [label, 0]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = logp[0, n, ext[0]]
        if len(ext) > 1:
            alpha[1] = logp[0, n, ext[1]]
        for t in range(1, frames):
            prev = alpha.copy()
            for s in range(len(ext)):
                terms = [prev[s]] + ([prev[s - 1]] if s > 0 else []) + (
                    [prev[s - 2]] if s > 1 and ext[s] != 0 and ext[s] != ext[s - 2] else [])
                alpha[s] = np.logaddexp.reduce(terms) + logp[t, n, ext[s]]
        out.append(-np.logaddexp.reduce(alpha[-2:] if len(ext) > 1 else alpha[-1:]))
    return np.array(out)


case("ctc_loss", lambda E, x: (
    F(E).ctc_loss(x.log_softmax(2), E.tensor(_CTC_TARGETS, device=x.device), *_CTC_LENGTHS,
                  reduction="none"),
    F(E).ctc_loss(x.log_softmax(2), E.tensor(_CTC_TARGETS, device=x.device), *_CTC_LENGTHS)),
     lambda np, x: (_ctc(_log_softmax(x, 2), _CTC_TARGETS, *_CTC_LENGTHS),
                    (_ctc(_log_softmax(x, 2), _CTC_TARGETS, *_CTC_LENGTHS) /
                     np.array(_CTC_LENGTHS[1])).mean()),
     Input((5, 2, 4)), gradgrad=False, atol=1e-4, rtol=1e-4)


# --- linear_cross_entropy: the linear layer and the loss in one call, chunked or not ---------
_T6 = Input((6,), "i", (4, 0, 2, 2, 1, 3))


def _lce(x, w, b, t, **kw):
    return _nll(_log_softmax(x @ w.T + b, 1), t, **kw)


case("linear_cross_entropy", lambda E, x, w, b, t: (
    F(E).linear_cross_entropy(x, w, t, linear_bias=b),
    F(E).linear_cross_entropy(x, w, t, reduction="sum", ignore_index=2)),
     lambda np, x, w, b, t: (_lce(x, w, b, t), _lce(x, w, 0.0, t, ignore=2, reduction="sum")),
     Input((6, 3)), Input((5, 3)), Input((5,)), _T6, atol=1e-4, rtol=1e-4)
# chunks of 4 rows, each checkpointed: one chunk's logits at a time; as torch's chunked op,
# the gradients are outside the graph (create_graph gives no second derivatives)
case("linear_cross_entropy:chunked", lambda E, x, w, t: (
    F(E).linear_cross_entropy(x, w, t, options=E.nn.LinearCrossEntropyOptions(
        batch_chunk_size=4)),
    F(E).linear_cross_entropy(x, w, t, reduction="none", options=E.nn.LinearCrossEntropyOptions(
        batch_chunk_size=4))),
     lambda np, x, w, t: (_lce(x, w, 0.0, t), _lce(x, w, 0.0, t, reduction="none")),
     Input((6, 3)), Input((5, 3)), _T6, ops=("linear_cross_entropy",), gradgrad=False,
     atol=1e-4, rtol=1e-4)
