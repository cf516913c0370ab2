"""Distances and their functional forms (nn.distance) against PyTorch."""
from __future__ import annotations

import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from ember.errors import EmberIndexError, EmberTypeError
from nn_helpers import compare_modules, cpu_and_devices, rng, to_numpy

DEVICES = cpu_and_devices()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs,shapes", [
    ("CosineSimilarity", {}, [(4, 5), (4, 5)]),
    ("CosineSimilarity", dict(dim=-1, eps=1e-6), [(3, 1, 5), (1, 4, 5)]),
    ("PairwiseDistance", {}, [(4, 5), (4, 5)]),
    ("PairwiseDistance", dict(p=1.0, keepdim=True), [(4, 5), (5,)]),
    ("PairwiseDistance", dict(p=3.0), [(4, 5), (4, 5)]),
    ("PairwiseDistance", dict(p=math.inf), [(4, 5), (4, 5)]),
])
def test_distance_matches_torch(torch, name, kwargs, shapes, device):
    r = rng(f"{name}{kwargs}")
    arrays = [r.standard_normal(s) for s in shapes]
    compare_modules(torch, getattr(torch.nn, name)(**kwargs), getattr(nn, name)(**kwargs),
                    arrays, (0, 1), f"{name}{kwargs}", device)


def test_user_code_forms(torch):
    """The calls programs make, against torch's."""
    r = rng("user code")
    a, b = (r.standard_normal((8, 16)) for _ in range(2))
    tf, ta, tb = torch.nn.functional, *(torch.tensor(v) for v in (a, b))
    ea, eb = (ember.tensor(v) for v in (a, b))
    pairs = [
        (tf.cosine_similarity(ta, tb, dim=1), F.cosine_similarity(ea, eb, dim=1)),
        (tf.pairwise_distance(ta, tb), F.pairwise_distance(ea, eb)),
    ]
    for t, e in pairs:
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-9, atol=1e-12)
    # a zero vector: the norm is clamped to eps (a finite gradient, no NaN), as in torch
    tz = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    ez = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True)
    tf.cosine_similarity(tz, ta[:2, :3]).sum().backward()
    F.cosine_similarity(ez, ea[:2, :3]).sum().backward()
    np.testing.assert_allclose(to_numpy(ez.grad), to_numpy(tz.grad), rtol=1e-9)


def test_errors():
    x = ember.zeros(4, 3)
    with pytest.raises(EmberTypeError, match="floating point"):
        F.cosine_similarity(ember.zeros(2, 3, dtype=ember.int64), x[:2])
    with pytest.raises(EmberIndexError, match="dim 2 is out of range"):
        F.cosine_similarity(x, x, dim=2)


def test_cosine_similarity_broadcasts_like_torch(torch):
    r = rng("cosine_similarity_broadcast")
    a, b = r.standard_normal((2, 1, 3)), r.standard_normal((4, 3))
    got = F.cosine_similarity(ember.tensor(a), ember.tensor(b), dim=-1)
    want = torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=-1)
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-12)
    with pytest.raises(ember.ShapeError, match=r"cosine_similarity: shapes \(2, 3\) and "
                                               r"\(4, 3\) do not broadcast"):
        F.cosine_similarity(ember.ones(2, 3), ember.ones(4, 3))
