"""Regression tests for the ops the OpInfo reference found wrong (issue 26), each against
torch on every testable device: one small case per fix, values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.testing import targets  # noqa: E402

DEVICES = [t.device for t in targets() if not t.problem]
RNG = np.random.default_rng(26)


def _pair(shape, requires_grad=True, device="cpu"):
    a = RNG.standard_normal(shape).astype(np.float32)
    return (torch.tensor(a, requires_grad=requires_grad),
            ember.tensor(a, device=device, requires_grad=requires_grad))


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["sigmoid", "erf", "tanh"])
def test_zero_dim_unary_and_gradient(device, name):
    t, e = _pair((), device=device)
    to, eo = getattr(t, name)(), getattr(e, name)()
    _close(to, eo)
    to.backward()
    eo.backward()
    _close(t.grad, e.grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_mode(device, mode):
    a = np.array([-7.5, 7.5, 5.0, -3.0], np.float32)
    b = np.array([2.0, -2.0, 3.0, 2.0], np.float32)
    e = ember.div(ember.tensor(a, device=device), ember.tensor(b, device=device),
                  rounding_mode=mode)
    _close(torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode), e)
    ai, bi = np.array([-7, 7, 5, -3]), np.array([2, -2, 3, 2])
    ei = ember.tensor(ai, device=device).div(ember.tensor(bi, device=device),
                                             rounding_mode=mode)
    ti = torch.tensor(ai).div(torch.tensor(bi), rounding_mode=mode)
    assert ei.dtype == ember.int64
    np.testing.assert_array_equal(ei.cpu().numpy(), ti.numpy())
    with pytest.raises(ember.EmberError, match="rounding_mode"):
        ember.div(ember.tensor(a, device=device), 2.0, rounding_mode="round")


@pytest.mark.parametrize("device", DEVICES)
def test_add_sub_alpha(device):
    (ta, ea), (tb, eb) = _pair((3,), False, device), _pair((3,), False, device)
    _close(torch.add(ta, tb, alpha=2), ember.add(ea, eb, alpha=2))
    _close(torch.sub(ta, tb, alpha=0.5), ember.sub(ea, eb, alpha=0.5))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", ["var_mean", "std_mean"])
def test_var_std_mean_unbiased(device, fn):
    t, e = _pair((4, 5), False, device)
    for kw in ({"unbiased": False}, {"dim": 1, "unbiased": True}, {"correction": None}):
        for x, y in zip(getattr(torch, fn)(t, **kw), getattr(ember, fn)(e, **kw)):
            _close(x, y)
    for x, y in zip(getattr(torch, fn)(t, False), getattr(ember, fn)(e, False)):
        _close(x, y)       # torch's legacy positional unbiased


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_over_empty_dim(device):
    t, e = _pair((2, 0, 3), device=device)
    for fn in ("softmax", "log_softmax"):
        to, eo = getattr(torch, fn)(t, 1), getattr(ember, fn)(e, 1)
        assert tuple(eo.shape) == tuple(to.shape) == (2, 0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_movedim_sequences(device):
    t, e = _pair((2, 3, 4, 5), False, device)
    _close(torch.movedim(t, [0, 3], [2, 0]), ember.movedim(e, [0, 3], [2, 0]))
    with pytest.raises(ember.EmberError):
        ember.movedim(e, [0, 1], [2])


@pytest.mark.parametrize("device", DEVICES)
def test_take_along_dim_broadcasts(device):
    t, e = _pair((3, 4), False, device)
    idx = np.array([[0], [2], [1]])
    _close(torch.take_along_dim(t, torch.tensor([[0, 3]]), 1),
           ember.take_along_dim(e, ember.tensor([[0, 3]], device=device), 1))
    _close(torch.take_along_dim(t, torch.tensor(idx), 1),
           ember.take_along_dim(e, ember.tensor(idx, device=device), 1))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [0, 1, float("inf")])
def test_normalize_p(device, p):
    t, e = _pair((3, 4), device=device)
    to = torch.nn.functional.normalize(t, p=p)
    eo = ember.nn.functional.normalize(e, p=p)
    _close(to, eo)
    to.sum().backward()
    eo.sum().backward()
    _close(t.grad, e.grad, 1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_norm_and_cdist_p0_in_graph(device):
    t, e = _pair((3, 4), device=device)
    t2, e2 = _pair((2, 4), device=device)
    to, eo = torch.cdist(t, t2, p=0), ember.cdist(e, e2, p=0)
    _close(to, eo)
    assert eo.requires_grad
    eo.sum().backward()
    assert np.all(e.grad.cpu().numpy() == 0)
    nt = ember.linalg.vector_norm(e, 0)
    assert nt.requires_grad and float(nt.item()) == 12.0


@pytest.mark.parametrize("device", DEVICES)
def test_empty_matrices(device):
    t, e = _pair((2, 0, 0), device=device)
    s_t, l_t = torch.linalg.slogdet(t)
    s_e, l_e = ember.linalg.slogdet(e)
    _close(s_t, s_e)
    _close(l_t, l_e)
    _close(torch.logdet(t), ember.logdet(e))
    t, e = _pair((3, 0), device=device)
    assert tuple(ember.linalg.pinv(e).shape) == tuple(torch.linalg.pinv(t).shape) == (0, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_unique_dim(device):
    x = np.array([[1, 2, 1], [0, 2, 1], [1, 2, 1], [0, 1, 5]])
    for dim in (0, 1):
        t = torch.unique(torch.tensor(x), dim=dim, return_inverse=True, return_counts=True)
        e = ember.unique(ember.tensor(x, device=device), dim=dim, return_inverse=True,
                         return_counts=True)
        for a, b in zip(t, e):
            np.testing.assert_array_equal(b.cpu().numpy(), a.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_conjugate_transposes(device):
    t, e = _pair((2, 3, 4), False, device)
    _close(t.mH, e.mH)
    _close(t[0].H, e[0].H)
    with pytest.raises(ember.EmberError):
        _ = e.H


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode,shape,size", [("bicubic", (1, 2, 5, 4), (7, 3)),
                                             ("trilinear", (1, 1, 3, 4, 2), (5, 2, 3)),
                                             ("area", (2, 1, 7, 5), (3, 2))])
def test_interpolate_modes(device, mode, shape, size):
    t, e = _pair(shape, device=device)
    kw = {} if mode == "area" else {"align_corners": False}
    to = torch.nn.functional.interpolate(t, size=size, mode=mode, **kw)
    eo = ember.nn.functional.interpolate(e, size=size, mode=mode, **kw)
    _close(to, eo, 1e-5)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g, device=device))
    _close(t.grad, e.grad, 1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_to_and_conversions_take_memory_format(device):
    t, e = _pair((2, 3, 4, 5), False, device)
    out = e.float(memory_format=ember.channels_last)
    assert out.is_contiguous(memory_format=ember.channels_last)
    _close(t.float(memory_format=torch.channels_last), out)
    assert e.to(ember.float64, False, True).dtype == ember.float64


@pytest.mark.parametrize("device", DEVICES)
def test_gather_scatter_small_index_and_0d(device):
    t, e = _pair((10, 5), device=device)
    idx = RNG.integers(0, 5, (5, 2))
    big_t, big_e = _pair((10, 5), False, device)       # src's leading (5, 2) block is used
    _close(torch.scatter_add(t, 0, torch.tensor(idx), big_t),
           ember.scatter_add(e, 0, ember.tensor(idx, device=device), big_e))
    ts, es = _pair((5, 2), device=device)
    to = torch.scatter_add(t, 0, torch.tensor(idx), ts)
    eo = ember.scatter_add(e, 0, ember.tensor(idx, device=device), es)
    _close(to, eo)
    _close(torch.gather(t, 0, torch.tensor(idx)),
           ember.gather(e, 0, ember.tensor(idx, device=device)))
    to.sum().backward()
    eo.sum().backward()
    _close(ts.grad, es.grad)
    t0, e0 = _pair((), False, device)
    _close(torch.gather(t0, 0, torch.tensor([0, 0])),
           ember.gather(e0, 0, ember.tensor([0, 0], device=device)))
    _close(torch.index_add(t0, 0, torch.tensor([0]), torch.tensor(2.0)),
           ember.index_add(e0, 0, ember.tensor([0], device=device),
                           ember.tensor(2.0, device=device)))


@pytest.mark.parametrize("device", DEVICES)
def test_meshgrid_xy_diff_n0_softmin_dtype(device):
    a, b = np.arange(3.0, dtype=np.float32), np.arange(4.0, dtype=np.float32)
    for x, y in zip(torch.meshgrid(torch.tensor(a), torch.tensor(b), indexing="xy"),
                    ember.meshgrid(ember.tensor(a, device=device),
                                   ember.tensor(b, device=device), indexing="xy")):
        _close(x, y)
    t, e = _pair((3, 3), False, device)
    _close(torch.diff(t, 0, 1, prepend=t), ember.diff(e, 0, 1, prepend=e))
    if device == "cpu":         # (float64 kernels compile slowly on PoCL; dtype= is device-free)
        so = ember.nn.functional.softmin(e, 1, dtype=ember.float64)
        assert so.dtype == ember.float64
        _close(torch.nn.functional.softmin(t, 1, dtype=torch.float64), so)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_negative_pad_crops(device, mode):
    t, e = _pair((1, 2, 4, 5), device=device)
    for p in [(-1, 2, -1, 1), (1, -2, 0, -1)]:
        to = torch.nn.functional.pad(t, p, mode=mode)
        eo = ember.nn.functional.pad(e, p, mode=mode)
        _close(to, eo)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g, device=device))
    _close(t.grad, e.grad)
    with pytest.raises(ember.EmberError, match="negative size"):
        ember.nn.functional.pad(e, (-3, -3), mode=mode)
