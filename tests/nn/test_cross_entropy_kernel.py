"""cross_entropy over class indices as one declared op (ops/loss.py): the CPU's kernels
give what the decompositions give (the path of every device without them), both agree
with PyTorch (values and the logits' gradient for a random upstream gradient, with class
weights, ignore_index and each reduction), double backward differentiates the gradient's
decomposition, and bad targets are ember errors naming cross_entropy."""
from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember.dispatch import run
from ember.ops.loss import cross_entropy_backward_op, cross_entropy_op
from nn_helpers import cpu_and_devices, rng, to_numpy

CASES = [(reduction, weighted, ignore) for reduction in ("mean", "sum", "none")
         for weighted in (False, True) for ignore in (-100, 2)]


def _data(r, dtype, n=7, c=5):
    x = r.standard_normal((n, c)).astype(dtype)
    target = r.integers(0, c, n)
    target[1] = 2                                  # a row ignore_index=2 drops
    return x, target, r.random(c).astype(dtype)


@pytest.mark.parametrize("reduction,weighted,ignore", CASES)
def test_cpu_kernels_match_the_decompositions(reduction, weighted, ignore):
    r = rng(f"ce kernel {reduction} {weighted} {ignore}")
    for dtype in (np.float64, np.float32):
        x, target, weight = (ember.tensor(a) for a in _data(r, dtype))
        w = weight if weighted else None
        attrs = dict(ignore_index=ignore, reduction=reduction)
        out = run(cross_entropy_op, x, target, w, **attrs)
        ref = cross_entropy_op.decompose(x, target, w, **attrs)
        assert out.dtype == ref.dtype == x.dtype and out.shape == ref.shape
        np.testing.assert_array_equal(to_numpy(out), to_numpy(ref))    # the same arithmetic
        g = ember.tensor(r.standard_normal(tuple(out.shape)).astype(dtype))
        d = run(cross_entropy_backward_op, g, x, target, w, **attrs)
        d_ref = cross_entropy_backward_op.decompose(g, x, target, w, **attrs)
        tol = 1e-13 if dtype == np.float64 else 1e-6
        np.testing.assert_allclose(to_numpy(d), to_numpy(d_ref), rtol=tol, atol=tol)


@pytest.mark.parametrize("device", cpu_and_devices())
@pytest.mark.parametrize("reduction,weighted,ignore", CASES)
def test_against_torch(device, reduction, weighted, ignore):
    torch = pytest.importorskip("torch")
    r = rng(f"ce torch {reduction} {weighted} {ignore}")
    x, target, weight = _data(r, np.float32)
    kw = dict(ignore_index=ignore, reduction=reduction)
    tx = torch.tensor(x, requires_grad=True)
    t_out = torch.nn.functional.cross_entropy(
        tx, torch.tensor(target), torch.tensor(weight) if weighted else None, **kw)
    ex = ember.tensor(x, device=device, requires_grad=True)
    e_out = F.cross_entropy(ex, ember.tensor(target, device=device),
                            ember.tensor(weight, device=device) if weighted else None, **kw)
    assert e_out.dtype == ember.float32 and tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(to_numpy(e_out), t_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    up = r.standard_normal(tuple(t_out.shape)).astype(np.float32)
    t_out.backward(torch.tensor(up))
    e_out.backward(ember.tensor(up, device=device))
    np.testing.assert_allclose(to_numpy(ex.grad), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_double_backward_as_torch():
    torch = pytest.importorskip("torch")
    r = rng("ce double backward")
    x, target, weight = _data(r, np.float64)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    t_loss = torch.nn.functional.cross_entropy(tx, torch.tensor(target), torch.tensor(weight))
    e_loss = F.cross_entropy(ex, ember.tensor(target), ember.tensor(weight))
    v = r.standard_normal(x.shape)
    (tg,) = torch.autograd.grad(t_loss, tx, create_graph=True)
    (eg,) = ember.autograd.grad(e_loss, ex, create_graph=True)
    np.testing.assert_allclose(to_numpy(eg), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    (tgg,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tx)
    (egg,) = ember.autograd.grad((eg * ember.tensor(v)).sum(), ex)
    np.testing.assert_allclose(to_numpy(egg), tgg.numpy(), rtol=1e-9, atol=1e-11)


def test_a_weight_that_wants_a_gradient_takes_the_ops():
    """torch does not differentiate nll_loss's weight; ember's composite path does, and
    stays the path taken for such a weight (the declared op's VJP gives it none)."""
    x = ember.randn(4, 3, requires_grad=True)
    w = ember.rand(3, requires_grad=True)
    F.cross_entropy(x, ember.tensor([0, 1, 2, 1]), w).backward()
    assert x.grad is not None and w.grad is not None


@pytest.mark.parametrize("device", cpu_and_devices())
def test_bad_targets_name_cross_entropy(device):
    x = ember.randn(4, 3, device=device)
    for bad, value in (([0, 1, 7, 2], 7), ([0, -3, 1, 1], -3)):
        with pytest.raises(ValueError, match=rf"cross_entropy: target {value} is out of bounds"):
            F.cross_entropy(x, ember.tensor(bad, device=device))
    # ignore_index outside [0, C) is not an error, and its rows add nothing
    loss = F.cross_entropy(x, ember.tensor([0, -100, 1, 1], device=device), reduction="none")
    assert float(to_numpy(loss)[1]) == 0.0


@pytest.mark.parametrize("reduction,weighted,ignore", CASES)
def test_vmap_batches_it_as_per_sample_calls(reduction, weighted, ignore):
    """vmap joins the samples' rows (no per-sample loop); values and per-sample gradients
    equal one call per sample."""
    import warnings

    from ember.func import grad, vmap
    r = rng(f"ce vmap {reduction} {weighted} {ignore}")
    xs = r.standard_normal((3, 6, 4))
    ts = r.integers(0, 4, (3, 6))
    ts[0, :] = 2                                     # a sample all ignored where ignore=2
    w = ember.tensor(r.random(4)) if weighted else None
    kw = dict(ignore_index=ignore, reduction=reduction)

    def loss(x, t):
        return F.cross_entropy(x, t, w, **kw)

    def scalar(x, t):
        out = loss(x, t)
        return out.sum() if reduction == "none" else out
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # a fallback loop warns
        out = vmap(loss)(ember.tensor(xs), ember.tensor(ts))
        g = vmap(grad(scalar))(ember.tensor(xs), ember.tensor(ts))
    for i in range(3):
        x = ember.tensor(xs[i], requires_grad=True)
        one = loss(x, ember.tensor(ts[i]))
        np.testing.assert_allclose(to_numpy(out)[i], to_numpy(one), rtol=1e-12, atol=1e-14)
        scalar(x, ember.tensor(ts[i])).backward()
        np.testing.assert_allclose(to_numpy(g)[i], to_numpy(x.grad), rtol=1e-12, atol=1e-14)
