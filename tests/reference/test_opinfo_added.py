"""Parity with torch for the op_db names ember added (issue 26): what their OpInfo samples
do not reach (the in-place function forms as a set, gradients through fill_/zero_, stft's
round trip, ...), each against torch on every testable device."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.testing import targets  # noqa: E402

DEVICES = [t.device for t in targets() if not t.problem]
RNG = np.random.default_rng(26)
# torch's in-place function forms whose Tensor method ember lacks
LACKING = {"alpha_dropout_", "as_strided_", "celu_", "conj_physical_", "dropout_",
           "embedding_renorm_", "feature_alpha_dropout_", "feature_dropout_",
           "resize_as_sparse_", "rrelu_", "selu_", "threshold_"}


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol)


def test_inplace_function_forms_are_torchs_list():
    torchs = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")}
    assert sorted(torchs - LACKING) == sorted(
        n for n in ember.__all__ if n.endswith("_") and not n.startswith("_"))
    for name in torchs - LACKING:
        assert getattr(ember, name) is getattr(ember.Tensor, name), name


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args", [("relu_", ()), ("sigmoid_", ()), ("clamp_", (-0.5, 0.5)),
                                       ("square_", ()), ("negative_", ()), ("zero_", ()),
                                       ("fill_", (2.5,)), ("xlogy_", (3.0,))])
def test_inplace_function_form_writes_its_input(device, name, args):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    t, e = torch.tensor(a), ember.tensor(a, device=device)
    to, eo = getattr(torch, name)(t, *args), getattr(ember, name)(e, *args)
    assert eo is e and to is t
    _close(t, e)


@pytest.mark.parametrize("device", DEVICES)
def test_fill_and_zero_gradients(device):
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    ta, ea = torch.tensor(a, requires_grad=True), ember.tensor(a, device=device,
                                                               requires_grad=True)
    tv = torch.tensor(1.5, requires_grad=True)
    ev = ember.tensor(1.5, device=device, requires_grad=True)
    to, eo = (ta * 2).fill_(tv) * ta, (ea * 2).fill_(ev) * ea
    _close(to, eo)
    to.sum().backward()
    eo.sum().backward()
    _close(ta.grad, ea.grad)
    _close(tv.grad, ev.grad)
    tz, ez = torch.zero_(ta * 3), ember.zero_(ea * 3)
    assert ez.requires_grad and tz.requires_grad
    _close(tz, ez)
