"""ember.autograd.functional (jacobian, hessian, vjp, jvp, vhp, hvp) against
torch.autograd.functional, on the CPU and opencl:0."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import cpu_and_opencl, rng, to_numpy

DEVICES = cpu_and_opencl()


def _pair(lib):
    def f(x, y):
        return (x * y.sum()).sin(), (x ** 2).sum() * y
    return f


def _scalar(lib):
    def f(x, y):
        return ((x ** 3).sum() * y.exp().sum()) + (x[:2] * y).sum()
    return f


def _close(e, t, what):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t), what
        for i, (a, b) in enumerate(zip(e, t)):
            _close(a, b, f"{what}[{i}]")
        return
    assert isinstance(e, ember.Tensor), what
    assert tuple(e.shape) == tuple(t.shape), what
    np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=1e-10, atol=1e-12,
                               err_msg=what)


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_functional_matches_torch(torch, device):
    import ember.autograd.functional as EF
    import torch.autograd.functional as TF
    r = rng(f"functional{device}")
    xs = [r.standard_normal(3), r.standard_normal(2)]
    tx = tuple(torch.tensor(a) for a in xs)
    ex = tuple(ember.tensor(a, device=device) for a in xs)
    vo = [r.standard_normal(3), r.standard_normal(2)]
    tvo = tuple(torch.tensor(a) for a in vo)
    evo = tuple(ember.tensor(a, device=device) for a in vo)
    _close(EF.jacobian(_pair(ember), ex), TF.jacobian(_pair(torch), tx), "jacobian")
    _close(EF.jacobian(lambda x: x.sin() * 2, ex[0]),
           TF.jacobian(lambda x: x.sin() * 2, tx[0]), "jacobian single")
    _close(EF.jacobian(lambda x: (x.exp(), x * 3), ex[0]),
           TF.jacobian(lambda x: (x.exp(), x * 3), tx[0]), "jacobian tuple out")
    _close(EF.hessian(_scalar(ember), ex), TF.hessian(_scalar(torch), tx), "hessian")
    _close(EF.hessian(lambda x: (x ** 3).prod(), ex[0]),
           TF.hessian(lambda x: (x ** 3).prod(), tx[0]), "hessian single")
    _close(EF.vjp(_pair(ember), ex, evo), TF.vjp(_pair(torch), tx, tvo), "vjp")
    vi = [r.standard_normal(3), r.standard_normal(2)]
    tv = tuple(torch.tensor(a) for a in vi)
    ev = tuple(ember.tensor(a, device=device) for a in vi)
    _close(EF.jvp(_pair(ember), ex, ev), TF.jvp(_pair(torch), tx, tv), "jvp")
    for name in ("vhp", "hvp"):
        _close(getattr(EF, name)(_scalar(ember), ex, ev),
               getattr(TF, name)(_scalar(torch), tx, tv), name)
    # an input the function ignores: zeros, or an error under strict=True
    _close(EF.jacobian(lambda x, y: x * 2, ex), TF.jacobian(lambda x, y: x * 2, tx),
           "unused")
    with pytest.raises(ember.AutogradError, match="independent of input 1"):
        EF.jacobian(lambda x, y: x * 2, ex, strict=True)


def test_autograd_functional_create_graph_and_errors(torch):
    import ember.autograd.functional as EF
    x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    _, g = EF.vjp(lambda t: (t ** 3).sum(), x, create_graph=True)
    g.sum().backward()           # through the vjp: d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(to_numpy(x.grad), 6 * to_numpy(x))
    out, g2 = EF.vjp(lambda t: (t ** 3).sum(), x)
    assert not g2.requires_grad and not out.requires_grad
    with pytest.raises(ember.AutogradError, match="single element"):
        EF.vjp(lambda t: t * 2, x)
    with pytest.raises(ember.ShapeError, match="entry 0 in v has shape"):
        EF.jvp(lambda t: t * 2, x, ember.ones(2))
    with pytest.raises(ember.AutogradError, match="hessian should return a single"):
        EF.hessian(lambda t: t * 2, x)


@pytest.mark.parametrize("device", DEVICES)
def test_jacobian_vectorize_and_forward_mode_match_torch(torch, device):
    """vectorize=True (one vmapped backward per output) and strategy="forward-mode" (J v
    over the inputs' basis, vmapped) give torch's values, shapes and structure, with no
    per-sample vmap fallback; torch's refusals are ember errors."""
    import warnings

    import ember.autograd.functional as EF
    import torch.autograd.functional as TF
    r = rng(f"vectorize{device}")
    xs = [r.standard_normal(3), r.standard_normal(2)]
    tx = tuple(torch.tensor(a) for a in xs)
    ex = tuple(ember.tensor(a, device=device) for a in xs)
    for kw in ({"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"},
               {"vectorize": True, "create_graph": True}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # torch's own deprecation warnings
            want = TF.jacobian(_pair(torch), tx, **kw)
            want_h = TF.hessian(_scalar(torch), tx, vectorize=True)
        want = tuple(tuple(row) for row in want)     # torch's forward mode gives lists
        with warnings.catch_warnings():
            warnings.simplefilter("error")           # no VmapFallbackWarning: really batched
            got = EF.jacobian(_pair(ember), ex, **kw)
            got_h = EF.hessian(_scalar(ember), ex, vectorize=True)
        if kw.get("create_graph"):
            assert got[0][0].requires_grad
            got = tuple(tuple(j.detach() for j in row) for row in got)
        _close(got, want, f"jacobian {kw}")
        _close(got_h, want_h, "hessian vectorize")
    with pytest.raises(ember.errors.UnsupportedError, match="only implemented with vectorize"):
        EF.jacobian(_pair(ember), ex, strategy="forward-mode")
    with pytest.raises(ember.AutogradError, match="strict=True and vectorize=True"):
        EF.jacobian(_pair(ember), ex, vectorize=True, strict=True)
    with pytest.raises(ember.errors.UnsupportedError, match="create_graph=True and strategy"):
        EF.jacobian(_pair(ember), ex, vectorize=True, strategy="forward-mode",
                    create_graph=True)
