"""Conformance rows of the distances: cosine_similarity and pairwise_distance."""
from __future__ import annotations

from ._references import _dist
from ._table import F, Input, Rows

ROWS = Rows("distance")
case = ROWS.case

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

case("pdist", lambda E, x: (F(E).pdist(x), F(E).pdist(x, 1.0)),
     lambda np, x: (_pairs(np, x, 2), _pairs(np, x, 1)), Input((4, 3)))


def _pairs(np, x, p):
    n = x.shape[0]
    return np.array([np.sum(np.abs(x[i] - x[j]) ** p) ** (1 / p) for i in range(n)
                     for j in range(i + 1, n)], dtype=x.dtype)
