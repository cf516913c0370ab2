"""nn.init: torch's gains and bounds, distributions, in place under no_grad, seeded."""
from __future__ import annotations

import math

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember.nn import init
from nn_helpers import device_params, to_numpy


@pytest.mark.parametrize("name,param", [("linear", None), ("conv2d", None), ("sigmoid", None),
                                        ("tanh", None), ("relu", None), ("leaky_relu", None),
                                        ("leaky_relu", 0.2), ("selu", None)])
def test_calculate_gain_matches_torch(torch, name, param):
    assert init.calculate_gain(name, param) == pytest.approx(
        torch.nn.init.calculate_gain(name, param))


def test_bounds_and_moments():
    ember.manual_seed(0)
    w = nn.Parameter(ember.empty(400, 300))
    same = w
    init.kaiming_uniform_(w, a=math.sqrt(5))
    assert w is same and w.requires_grad and w.grad_fn is None
    bound = 1 / math.sqrt(300)
    values = to_numpy(w)
    assert values.min() >= -bound and values.max() <= bound
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert to_numpy(w).std() == pytest.approx(math.sqrt(2 / 400), rel=0.02)
    init.xavier_uniform_(w, gain=2.0)
    limit = 2.0 * math.sqrt(6 / 700)
    assert np.abs(to_numpy(w)).max() <= limit
    init.xavier_normal_(w)
    assert to_numpy(w).std() == pytest.approx(math.sqrt(2 / 700), rel=0.02)
    init.normal_(w, 1.0, 0.5)
    assert to_numpy(w).mean() == pytest.approx(1.0, abs=0.01)
    init.uniform_(w, -2, -1)
    assert to_numpy(w).min() >= -2 and to_numpy(w).max() <= -1
    init.constant_(w, 0.25)
    assert np.all(to_numpy(w) == 0.25)
    init.zeros_(w)
    assert np.all(to_numpy(w) == 0)
    init.ones_(w)
    assert np.all(to_numpy(w) == 1)


def test_trunc_normal_distribution():
    ember.manual_seed(1)
    t = ember.empty(200000)
    init.trunc_normal_(t, mean=0.5, std=2.0, a=-1.0, b=3.0)
    v = to_numpy(t)
    assert v.min() >= -1.0 and v.max() <= 3.0
    # moments of N(0.5, 2) truncated to [-1, 3], from the closed form
    alpha, beta = (-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    mean = 0.5 + 2.0 * (pdf(alpha) - pdf(beta)) / z
    var = 4.0 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z
                 - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    assert v.mean() == pytest.approx(mean, abs=0.01)
    assert v.var() == pytest.approx(var, rel=0.02)


def test_eye_and_orthogonal():
    w = ember.empty(3, 5)
    init.eye_(w)
    np.testing.assert_array_equal(to_numpy(w), np.eye(3, 5))
    init.orthogonal_(w)
    np.testing.assert_allclose(to_numpy(w) @ to_numpy(w).T, np.eye(3), atol=1e-5)
    v = ember.empty(6, 2, 2)
    init.orthogonal_(v, gain=2.0)
    flat = to_numpy(v).reshape(6, 4)
    np.testing.assert_allclose(flat.T @ flat, 4 * np.eye(4), atol=1e-4)


def test_seeded_layers_are_reproducible():
    ember.manual_seed(7)
    a = nn.Conv2d(3, 4, 3)
    ember.manual_seed(7)
    b = nn.Conv2d(3, 4, 3)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(to_numpy(p), to_numpy(q))
    bound = 1 / math.sqrt(3 * 9)
    assert np.abs(to_numpy(a.weight)).max() <= bound
    assert np.abs(to_numpy(a.bias)).max() <= bound


def test_init_errors():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="fan_in"):
        init.kaiming_uniform_(ember.empty(2, 2), mode="fan")


@pytest.mark.parametrize("device", ["cpu", *device_params()])
@pytest.mark.parametrize("shape,groups", [((16, 8, 3, 3), 1), ((8, 4, 5), 2),
                                          ((4, 4, 2, 2, 2), 1), ((6, 3, 3, 3), 3)])
def test_dirac_is_torchs(torch, shape, groups, device):
    want = torch.empty(*shape)
    torch.nn.init.dirac_(want, groups)
    got = init.dirac_(ember.empty(*shape, device=device), groups)
    np.testing.assert_array_equal(to_numpy(got), want.numpy())


@pytest.mark.parametrize("device", ["cpu", *device_params()])
def test_sparse_zeroes_ceil_sparsity_rows_per_column(torch, device):
    t = init.sparse_(ember.empty(50, 7, device=device), 0.3, std=0.5)
    values = to_numpy(t)
    want = torch.nn.init.sparse_(torch.empty(50, 7), 0.3)
    np.testing.assert_array_equal((values == 0).sum(0), (want == 0).sum(0).numpy())
    assert 0.3 < values[values != 0].std() < 0.7
    for fn, args in ((init.dirac_, (ember.empty(3, 3),)), (init.sparse_, (ember.empty(3), 0.1)),
                     (init.dirac_, (ember.empty(3, 2, 3), 2))):
        with pytest.raises(ValueError):
            fn(*args)
