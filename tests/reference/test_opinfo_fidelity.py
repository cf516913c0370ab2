"""Regression tests for the second round of OpInfo fixes (issue 26 part 1): Python numbers
torch's functions refuse, out= written as torch writes it, and the names added from op_db.
Each against torch; the checks that do not depend on a device run on the CPU only."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

RNG = np.random.default_rng(2626)


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol)


# torch's binary functions refuse a Python number as `input`; those without a number
# overload refuse one as `other` too (ember used to answer)
@pytest.mark.parametrize("name,number_other_ok", [
    ("eq", True), ("ne", True), ("lt", True), ("ge", True), ("greater", True),
    ("maximum", False), ("minimum", False), ("logical_and", False), ("logical_xor", False),
    ("atan2", False), ("hypot", False), ("logaddexp", False), ("fmax", False),
    ("fmin", False), ("isclose", False), ("heaviside", False), ("fmod", True),
    ("clamp_min", True)])
def test_python_numbers_torch_refuses(name, number_other_ok):
    t = torch.tensor([1.0, 2.0, 3.0])
    e = ember.tensor([1.0, 2.0, 3.0])
    with pytest.raises((TypeError, RuntimeError)):
        getattr(torch, name)(2, t)
    with pytest.raises(ember.EmberError, match=name):
        getattr(ember, name)(2, e)
    if number_other_ok:
        _close(getattr(torch, name)(t, 2), getattr(ember, name)(e, 2))
    else:
        with pytest.raises((TypeError, RuntimeError)):
            getattr(torch, name)(t, 2)
        with pytest.raises(ember.EmberError, match=name):
            getattr(ember, name)(e, 2)
    # ember's own code (and the methods' other argument where torch takes a number) is
    # untouched: operators and the tensor-tensor form still answer
    _close(getattr(torch, name)(t, t), getattr(ember, name)(e, e))


def test_two_numbers_and_negative_tolerances_refused():
    with pytest.raises(ember.EmberError, match="max"):
        ember.max(2, ember.tensor([1.0, 3.0]))
    with pytest.raises(ember.EmberError, match="xlogy"):
        ember.xlogy(2, 3)
    with pytest.raises(ember.EmberError, match="float_power"):
        ember.float_power(2, 3)
    _close(torch.xlogy(2, torch.tensor([1.0, 3.0])), ember.xlogy(2, ember.tensor([1.0, 3.0])))
    e = ember.tensor(1.0)
    for kw in ({"rtol": -0.4}, {"atol": -0.4}):
        with pytest.raises(ember.EmberError, match="greater than or equal to zero"):
            ember.isclose(e, e, **kw)


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh",
                                  "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                                  "arctanh"])
def test_inverse_trigonometric(name):
    a = RNG.uniform(-0.9, 0.9, (7,)).astype(np.float32)
    if name.endswith("acosh") or name == "arccosh":
        a = a + 2.0
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    to, eo = getattr(torch, name)(t), getattr(ember, name)(e)
    _close(to, eo)
    to.sum().backward()
    eo.sum().backward()
    _close(t.grad, e.grad)
    _close(getattr(t.detach().clone(), name + "_")(), getattr(e.detach().clone(), name + "_")())
