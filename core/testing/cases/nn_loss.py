"""Conformance rows of the distances and the margin and likelihood losses (nn/loss_extra.py)."""
from __future__ import annotations

import math

import numpy as np

from .elementwise import Input, case, section


def F(E):
    return E.nn.functional


def _softplus_exact(x):
    """log(1 + e^x) with no threshold (the shared _softplus has torch's threshold)."""
    return np.logaddexp(0.0, x)


def _dist(a, b, p=2.0, eps=1e-6):
    d = np.abs(a - b + eps)
    return d.max(-1) if p == math.inf else (d ** p).sum(-1) ** (1.0 / p)


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

section("loss")
case("cosine_similarity", lambda E, a, b: (F(E).cosine_similarity(a, b),
                                           F(E).cosine_similarity(a, b[:1], dim=-1)),
     lambda np, a, b: ((a * b).sum(1) / (np.linalg.norm(a, axis=1) *
                                          np.linalg.norm(b, axis=1)),
                       (a * b[:1]).sum(-1) / (np.linalg.norm(a, axis=-1) *
                                               np.linalg.norm(b[:1], axis=-1))),
     Input((3, 4)), Input((3, 4)), atol=1e-4)
case("pairwise_distance", lambda E, a, b: (F(E).pairwise_distance(a, b),
                                           F(E).pairwise_distance(a, b, p=1.0, keepdim=True),
                                           F(E).pairwise_distance(a, b, p=3.0)),
     lambda np, a, b: (_dist(a, b), _dist(a, b, 1.0)[:, None], _dist(a, b, 3.0)),
     Input((3, 4)), Input((3, 4)), atol=1e-4)
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
