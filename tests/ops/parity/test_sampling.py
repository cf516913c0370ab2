"""Random sampling on cpu and opencl:0: multinomial, the *_like and in-place fills, normal
with tensor arguments, WeightedRandomSampler."""
from __future__ import annotations

import zlib
from collections import Counter

import ember
import numpy as np
import pytest
from ember.utils.data import WeightedRandomSampler

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_distribution(device, replacement):
    """Draws follow the weights (a chi-square bound), rows stay independent, and without
    replacement no category repeats in a row."""
    ember.manual_seed(zlib.crc32(b"multinomial"))
    weights = ember.tensor([[1.0, 2.0, 0.0, 5.0], [0.0, 1.0, 1.0, 0.0]], device=device)
    n = 4000 if replacement else 2
    draws = ember.multinomial(weights, n, replacement=replacement).numpy()
    assert draws.shape == (2, n) and draws.dtype == np.int64
    if not replacement:
        assert all(len(set(row)) == n for row in draws)
        assert set(draws[1]) == {1, 2}          # the only categories with weight
        return
    for row, w in zip(draws, weights.numpy()):
        counts = np.bincount(row, minlength=4)
        expected = n * w / w.sum()
        assert (counts[w == 0] == 0).all()
        keep = w > 0
        chi2 = (((counts - expected)[keep]) ** 2 / expected[keep]).sum()
        assert chi2 < 20.0, (counts, expected)     # 3 degrees of freedom: p < 0.001


def test_multinomial_refuses_bad_distributions(device):
    with pytest.raises(ValueError, match="invalid multinomial distribution"):
        ember.multinomial(ember.tensor([0.0, 0.0], device=device), 1)
    with pytest.raises(ValueError, match="without replacement"):
        ember.multinomial(ember.tensor([1.0, 1.0], device=device), 3)


def test_random_like_and_fills(device):
    x = ember.zeros(200, 3, device=device)
    ember.manual_seed(1)
    a = ember.randn_like(x)
    ember.manual_seed(1)
    b = ember.randn(200, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # one host stream, every device
    assert ember.rand_like(x).device == x.device and ember.randint_like(x, 5).max() < 5
    assert ember.randint(10, (4,)).shape == (4,) and ember.randint(3, 10, (2, 2)).min() >= 3
    y = ember.empty(500, device=device).uniform_(-2, 2)
    assert -2 <= y.min().item() and y.max().item() < 2
    assert abs(ember.empty(2000, device=device).normal_(3.0, 0.5).mean().item() - 3.0) < 0.1
    assert set(ember.zeros(100, device=device).bernoulli_(0.5).unique().tolist()) <= {0.0, 1.0}


def test_normal_with_tensor_arguments(device):
    mean = ember.tensor([[0.0], [10.0], [-5.0]], device=device)
    std = ember.tensor([1.0, 0.5, 2.0, 0.0], device=device)
    ember.manual_seed(zlib.crc32(b"normal"))
    a = ember.normal(mean, std)
    ember.manual_seed(zlib.crc32(b"normal"))
    b = ember.normal(mean, std)
    assert tuple(a.shape) == (3, 4) and a.device == ember.Device(device)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert len(set(a.numpy()[:, 0].tolist())) == 3        # one draw per element
    np.testing.assert_array_equal(a.numpy()[:, 3], [0.0, 10.0, -5.0])   # std 0: the mean
    g = ember.Generator().manual_seed(3)
    wide = ember.normal(ember.full((20000,), 2.0, device=device), 3.0, generator=g).numpy()
    assert abs(wide.mean() - 2.0) < 0.1 and abs(wide.std() - 3.0) < 0.1
    assert tuple(ember.normal(1.0, ember.ones(2, 5, device=device)).shape) == (2, 5)
    with pytest.raises(ember.EmberError, match="std must be >= 0"):
        ember.normal(ember.zeros(2, device=device), ember.tensor([1.0, -1.0], device=device))
    with pytest.raises(ember.EmberError, match="std must be >= 0"):
        ember.normal(ember.zeros(2, device=device), -1.0)


def test_weighted_random_sampler():
    weights = [0.1, 0.0, 0.9, 2.0]
    draws = list(WeightedRandomSampler(weights, 20000,
                                       generator=ember.Generator().manual_seed(0)))
    counts = Counter(draws)
    assert len(draws) == 20000 and counts[1] == 0 and set(counts) == {0, 2, 3}
    for index, w in enumerate(weights):
        assert abs(counts[index] / 20000 - w / 3.0) < 0.02
    once = list(WeightedRandomSampler(ember.tensor([1.0, 2.0, 3.0, 0.0, 4.0]), 4,
                                      replacement=False))
    assert sorted(once) == [0, 1, 2, 4]
    ember.manual_seed(7)
    first = list(WeightedRandomSampler(weights, 50))
    ember.manual_seed(7)
    assert list(WeightedRandomSampler(weights, 50)) == first
    sampler = WeightedRandomSampler(weights, 9)
    assert len(sampler) == 9 and sampler.weights.dtype == ember.float64
    loader = ember.utils.data.DataLoader(ember.utils.data.TensorDataset(ember.arange(4)),
                                         batch_size=3, sampler=sampler)
    assert sum(len(b[0]) for b in loader) == 9
    with pytest.raises(ember.EmberError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ember.EmberError, match="positive int"):
        WeightedRandomSampler(weights, 0)
