"""Distances and their functional forms (nn.distance) against PyTorch."""
from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from nn_helpers import rng, to_numpy


def test_cosine_similarity_broadcasts_like_torch(torch):
    r = rng("cosine_similarity_broadcast")
    a, b = r.standard_normal((2, 1, 3)), r.standard_normal((4, 3))
    got = F.cosine_similarity(ember.tensor(a), ember.tensor(b), dim=-1)
    want = torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=-1)
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-12)
    with pytest.raises(ember.ShapeError, match=r"cosine_similarity: shapes \(2, 3\) and "
                                               r"\(4, 3\) do not broadcast"):
        F.cosine_similarity(ember.ones(2, 3), ember.ones(4, 3))
