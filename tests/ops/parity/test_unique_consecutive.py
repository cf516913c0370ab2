"""unique_consecutive against torch.unique_consecutive on every device: flat and along a
dim, with and without inverse and counts, empty and one-element inputs; the Tensor method."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)
GRID = np.array([[1, 1, 2], [1, 1, 2], [3, 3, 3], [1, 1, 2]])
CASES = [(np.array([1, 1, 2, 2, 3, 1, 1, 2]), {}), (GRID, dict(dim=0)), (GRID, dict(dim=1)),
         (np.array([[1, 1], [1, 2]]), {}), (np.zeros((0,), dtype=np.int64), {}),
         (np.array([5.0]), {}), (RNG.integers(0, 2, (3, 4, 5)), dict(dim=2)),
         (RNG.integers(0, 2, (3, 4, 5)), dict(dim=-3))]


@pytest.mark.parametrize("inverse,counts", [(False, False), (True, False), (False, True),
                                            (True, True)])
def test_unique_consecutive_as_torch(device, inverse, counts):
    for x, kw in CASES:
        got = ember.unique_consecutive(ember.tensor(x, device=device), return_inverse=inverse,
                                       return_counts=counts, **kw)
        want = torch.unique_consecutive(torch.tensor(x), return_inverse=inverse,
                                        return_counts=counts, **kw)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape), (x.shape, kw)
            assert g.dtype.name == str(w.dtype).removeprefix("torch.")
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert ember.tensor([3, 3, 1]).unique_consecutive().tolist() == [3, 1]
