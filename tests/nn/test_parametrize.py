"""nn.utils.parametrize and parametrizations against torch: names and state_dict keys,
values and gradients, assignment through right_inverse, caching, removal, weight_norm and
spectral_norm."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _linear(lib, n_in=3, n_out=3):
    m = lib.nn.Linear(n_in, n_out)
    rng = np.random.default_rng(0)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in)).astype(np.float32)))
        m.bias.copy_(lib.tensor(rng.standard_normal(n_out).astype(np.float32)))
    return m


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scaled(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, A):
            return A / 2.0
    return Scale()


def _run(lib):
    P = lib.nn.utils.parametrize
    m = _linear(lib)
    P.register_parametrization(m, "weight", _symmetric(lib))
    P.register_parametrization(m, "weight", _scaled(lib))         # composed after
    seen = {"class": type(m).__name__, "before": P.type_before_parametrizations(m).__name__,
            "keys": list(m.state_dict().keys()),
            "params": sorted(n for n, _ in m.named_parameters()),
            "is": [P.is_parametrized(m), P.is_parametrized(m, "weight"),
                   P.is_parametrized(m, "bias")]}
    x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    y = m(x)
    y.pow(2).sum().backward()
    original = m.parametrizations.weight.original
    seen["weight"] = m.weight.detach().numpy().copy()
    seen["grad"] = original.grad.numpy().copy()
    with lib.no_grad():
        m.weight = lib.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3))
    seen["after_set"] = [m.weight.detach().numpy().copy(), original.detach().numpy().copy()]
    with P.cached():
        seen["cached_same"] = m.weight is m.weight
    seen["uncached_same"] = m.weight is m.weight
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    seen["removed"] = [type(m).__name__, list(m.state_dict().keys()),
                       m.weight.detach().numpy().copy(), m.weight is original]
    return seen


def _equal(a, b, what=""):
    if isinstance(a, dict):
        for k in a:
            _equal(a[k], b[k], k)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for x, y in zip(a, b):
            _equal(x, y, what)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=what)
    else:
        assert a == b, (what, a, b)


def test_register_compose_assign_cache_remove_as_torch():
    _equal(_run(torch), _run(ember))


def test_weight_norm_parametrization_as_torch():
    results = []
    for lib in (torch, ember):
        m = lib.nn.utils.parametrizations.weight_norm(_linear(lib, 4, 3), dim=0)
        x = lib.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
        m(x).sum().backward()
        pw = m.parametrizations.weight
        results.append([list(m.state_dict().keys()), pw.original0.detach().numpy().copy(),
                        pw.original1.detach().numpy().copy(), pw.original0.grad.numpy().copy(),
                        pw.original1.grad.numpy().copy(), m.weight.detach().numpy().copy()])
    _equal(results[0], results[1])


def test_spectral_norm_parametrization_divides_by_the_largest_singular_value():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    for lib in (torch, ember):
        m = lib.nn.Linear(4, 5)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        lib.nn.utils.parametrizations.spectral_norm(m)
        for _ in range(30):                  # power iterations in training mode
            _ = m.weight
        sigma = np.linalg.svd(w, compute_uv=False)[0]
        np.testing.assert_allclose(m.weight.detach().numpy(), w / sigma, rtol=1e-3,
                                   atol=1e-4)
        m.eval()
        before = m.weight.detach().numpy().copy()
        np.testing.assert_array_equal(m.weight.detach().numpy(), before)   # eval: fixed


def test_state_dict_keys_match_torch_for_both_parametrizations():
    keys = []
    for lib in (torch, ember):
        a = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(2, 2))
        b = lib.nn.utils.parametrizations.spectral_norm(lib.nn.Conv2d(2, 3, 3))
        keys.append((sorted(a.state_dict()), sorted(b.state_dict())))
    assert keys[1] == keys[0]


def test_refusals():
    m = ember.nn.Linear(2, 2)
    P = ember.nn.utils.parametrize
    with pytest.raises(ember.errors.EmberValueError, match="no_such"):
        P.register_parametrization(m, "no_such", _scaled(ember))
    with pytest.raises(ember.errors.EmberValueError, match="parametrization"):
        P.remove_parametrizations(m, "weight")
    with pytest.raises(ember.errors.NotInEmberError, match="orthogonal"):
        ember.nn.utils.parametrizations.orthogonal(m)


def test_assigning_without_right_inverse_refuses_as_torch():
    for lib, error in ((torch, RuntimeError), (ember, ember.errors.EmberError)):
        class NoInverse(lib.nn.Module):
            def forward(self, X):
                return X + 1

        m = lib.nn.utils.parametrize.register_parametrization(_linear(lib), "weight",
                                                              NoInverse())
        with pytest.raises(error, match="right_inverse"):
            m.weight = lib.zeros(3, 3)

