"""ember.func against torch.func: the tutorials run unchanged under ember.torch_alias (cpu,
opencl:0), and the transforms' options, composition and errors."""
from __future__ import annotations

import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import ember
import numpy as np
import pytest
from ember import func

torch = pytest.importorskip("torch")
with warnings.catch_warnings():          # torch.func's import warns about torch.jit.script
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch.func  # noqa: E402
HERE = Path(__file__).parent
PROGRAM = HERE / "torch_func_tutorials.py"


@pytest.fixture(scope="module")
def torch_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("ref") / "torch.npz"
    argv, threads = sys.argv, torch.get_num_threads()
    sys.argv = [str(PROGRAM), str(out), "cpu"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            runpy.run_path(str(PROGRAM), run_name="__main__")  # real torch, in process
    finally:
        sys.argv = argv
        torch.set_num_threads(threads)
    return np.load(out)


def _opencl_available() -> bool:
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError:
        return False
    return True


@pytest.mark.parametrize("device", ["cpu", pytest.param("opencl:0", marks=pytest.mark.slow)])
def test_tutorials_run_unchanged_under_torch_alias(device, torch_reference, tmp_path):
    if device != "cpu" and not _opencl_available():
        pytest.skip("no OpenCL device")
    out = tmp_path / "ember.npz"
    env = {**os.environ, "EMBER_FALLBACK": "error"}
    proc = subprocess.run([sys.executable, "-W", "error::UserWarning", "-m",
                           "ember.torch_alias", str(PROGRAM), str(out), device],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(out)
    assert sorted(got.files) == sorted(torch_reference.files)
    for k in torch_reference.files:
        np.testing.assert_allclose(got[k], torch_reference[k], rtol=1e-4, atol=1e-5,
                                   err_msg=k)
    # vmap(grad) per sample equals the loop of single-sample backward passes
    for k in got.files:
        if k.startswith("psg_vmap."):
            np.testing.assert_allclose(got[k], got[k.replace("vmap", "loop")], rtol=1e-4,
                                       atol=1e-6)


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(a), torch.tensor(a)


def test_grad_argnums_has_aux_and_pytrees_match_torch():
    (ex, tx), (ey, ty) = _pair((3,)), _pair((3,), 1)

    def f(lib):
        def fn(x, params):
            v = (x.sin() * params["w"]).sum() + (params["b"] ** 2).sum()
            return v, x.cos()
        return fn
    eg, eaux = func.grad(f(ember), argnums=(0, 1), has_aux=True)(ex, {"w": ey, "b": ey})
    tg, taux = torch.func.grad(f(torch), argnums=(0, 1), has_aux=True)(tx, {"w": ty, "b": ty})
    np.testing.assert_allclose(eg[0].numpy(), tg[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(eg[1]["w"].numpy(), tg[1]["w"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(eg[1]["b"].numpy(), tg[1]["b"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(eaux.numpy(), taux.numpy(), rtol=1e-6)
    (g, v) = func.grad_and_value(lambda x: (x ** 3).sum())(ex)
    np.testing.assert_allclose(g.numpy(), 3 * ex.numpy() ** 2, rtol=1e-6)
    assert float(v) == pytest.approx(float((tx ** 3).sum()), rel=1e-6)
    # grad of grad: the third derivative of x^4 summed is 24 x
    g3 = func.grad(lambda x: func.grad(lambda y: func.grad(lambda z: (z ** 4).sum())(y).sum())(
        x).sum())(ex)
    np.testing.assert_allclose(g3.numpy(), 24 * ex.numpy(), rtol=1e-5)


def test_jvp_jacfwd_hessian_match_torch():
    (ex, tx), (ev, tv) = _pair((4,)), _pair((4,), 1)
    ew, tw = _pair((3, 4), 2)

    def f(lib, w):
        return lambda x: lib.tanh(w @ x) * x.sum()
    eo, ej = func.jvp(f(ember, ew), (ex,), (ev,))
    to, tj = torch.func.jvp(f(torch, tw), (tx,), (tv,))
    np.testing.assert_allclose(ej.numpy(), tj.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(func.jacfwd(f(ember, ew))(ex).numpy(),
                               torch.func.jacfwd(f(torch, tw))(tx).numpy(), rtol=1e-5, atol=1e-6)
    h = func.hessian(lambda x: (f(ember, ew)(x) ** 2).sum())(ex)
    th = torch.func.hessian(lambda x: (f(torch, tw)(x) ** 2).sum())(tx)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-4, atol=1e-5)


def test_vmap_dims_chunks_and_nesting_match_torch():
    (ea, ta), (eb, tb), (ec, tc) = _pair((4, 3, 5)), _pair((3, 5), 1), _pair((3, 4, 5), 2)
    eB, tB = _pair((4, 3, 5), 3)

    def f(lib):
        return lambda a, b: (a * b.sum(0)).softmax(-1) @ b.T

    for args, kw in [((0, 1), dict(in_dims=(0, None))),
                     ((0, 1), dict(in_dims=(0, None), chunk_size=3)),
                     ((2, 3), dict(in_dims=(1, 0), out_dims=1))]:
        ee, tt = [(ea, eb, ec, eB)[i] for i in args], [(ta, tb, tc, tB)[i] for i in args]
        e = func.vmap(f(ember), **kw)(*ee)
        t = torch.func.vmap(f(torch), **kw)(*tt)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(kw))
    ex, tx = ea, ta
    # vmap of vmap, and grad through vmap
    e = func.vmap(func.vmap(lambda a: (a.exp() * a).sum()))(ex)
    np.testing.assert_allclose(e.numpy(), (tx.exp() * tx).sum(-1).numpy(), rtol=1e-5)
    x = ex.detach().requires_grad_(True)
    func.vmap(lambda a: (a ** 2).sum())(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * ex.numpy(), rtol=1e-6)


def test_vmapped_per_sample_grad_step_under_compile():
    model = ember.nn.Linear(3, 2)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = ember.randn(6, 3), ember.randn(6, 2)

    def loss(p, xi, yi):
        return ((func.functional_call(model, p, (xi,)) - yi) ** 2).sum()

    def step(x, y):
        return func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    eager = step(x, y)
    compiled = ember.compile(step)
    for _ in range(2):
        got = compiled(x, y)
        for k in eager:
            np.testing.assert_allclose(got[k].numpy(), eager[k].numpy(), rtol=1e-5, atol=1e-6)
    w, b = params["weight"].numpy(), params["bias"].numpy()
    r = x.numpy() @ w.T + b - y.numpy()
    np.testing.assert_allclose(eager["weight"].numpy(), 2 * r[:, :, None] * x.numpy()[:, None],
                               rtol=1e-5, atol=1e-6)


def test_randomness_modes():
    x = ember.zeros(4, 3)
    with pytest.raises(func.VmapError, match="randomness='error'"):
        func.vmap(lambda a: a + ember.rand(3))(x)
    same = func.vmap(lambda a: a + ember.rand(3), randomness="same")(x).numpy()
    assert np.all(same == same[0])
    diff = func.vmap(lambda a: a + ember.rand(3), randomness="different")(x).numpy()
    assert len({tuple(r) for r in diff}) == 4
    with pytest.raises(ValueError, match="randomness must be one of"):
        func.vmap(lambda a: a, randomness="sometimes")


def test_fallbacks_warn_and_refusals_explain():
    x = ember.randn(4, 5)
    idx = ember.tensor(np.random.default_rng(0).integers(0, 5, (4, 2)))
    out = func.vmap(lambda a, i: ember.take(a, i))(x, idx)        # a gather, no loop
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(x.numpy(), idx.numpy(), 1))
    from ember.func import batching
    batching._warned.discard("nonzero")           # one warning per op and process
    with pytest.warns(func.VmapFallbackWarning, match="'nonzero' has no batching rule"):
        out = func.vmap(ember.nonzero)(ember.ones(4, 2))
    np.testing.assert_array_equal(out.numpy(), np.stack([np.argwhere(np.ones(2))] * 4))
    with pytest.warns(func.VmapLoopWarning, match="reads a value to Python"):
        out = func.vmap(lambda a: a * 2 if float(a.sum()) > 0 else a * 3)(x)
    s = x.numpy().sum(1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), np.where(s > 0, 2, 3) * x.numpy(), rtol=1e-6)
    with pytest.warns(func.VmapLoopWarning), pytest.raises(func.VmapError,
                                                           match="different shapes"):
        func.vmap(lambda a: a[a > 0])(x)
    with pytest.raises(ValueError, match="different sizes"):
        func.vmap(lambda a, b: a + b)(x, ember.randn(3, 5))
    with pytest.raises(ValueError, match="out of range"):
        func.vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(TypeError, match="scalar tensor"):
        func.grad(lambda a: a * 2)(x)
    buf = ember.zeros(5)
    with pytest.raises(func.VmapError, match="not batched"):
        func.vmap(lambda a: buf.add_(a))(x)


def test_functional_call_and_stack_module_state():
    models = [ember.nn.Linear(3, 2) for _ in range(3)]
    params, buffers = func.stack_module_state(models)
    assert params["weight"].shape == (3, 2, 3) and params["weight"].requires_grad
    base = ember.nn.Linear(3, 2)
    before = base.weight.detach().numpy().copy()
    x = ember.randn(3, 4, 3)
    out = func.vmap(lambda p, b, xi: func.functional_call(base, (p, b), (xi,)))(params,
                                                                               buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x[i]).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(base.weight.detach().numpy(), before)   # left as it was
    with pytest.raises(ValueError, match="no parameter or buffer named 'nope'"):
        func.functional_call(base, {"nope": ember.zeros(1)}, (x[0],))
    with pytest.raises(ValueError, match="missing keys"):
        func.functional_call(base, {"weight": ember.zeros(2, 3)}, (x[0],), strict=True)


def test_functional_call_ties_weights_as_torch():
    """A module holding one parameter under two names (torch's docstring example): given for
    one name, tie_weights=True replaces both, False only that one; two different tensors for
    a tied pair are refused with torch's message."""
    torch = pytest.importorskip("torch")

    def build(lib):
        class Foo(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.foo = lib.nn.Parameter(lib.ones(()))
                self.foo_tied = self.foo

            def forward(self, x):
                return x + self.foo + self.foo_tied
        return Foo()
    e_mod, t_mod = build(ember), build(torch)
    for tie in (True, False):
        got = func.functional_call(e_mod, {"foo": ember.zeros(())}, (ember.tensor(1.0),),
                                   tie_weights=tie)
        want = torch.func.functional_call(t_mod, {"foo": torch.zeros(())},
                                          (torch.tensor(1.0),), tie_weights=tie)
        assert got.item() == want.item() == (1.0 if tie else 2.0)
    same = ember.zeros(())
    assert float(func.functional_call(e_mod, {"foo": same, "foo_tied": same},
                                      (ember.tensor(1.0),))) == 1.0
    with pytest.raises(ValueError, match="which are tied. Consider using "
                       "tie_weights=False"):
        func.functional_call(e_mod, {"foo": ember.zeros(()), "foo_tied": ember.ones(())},
                             (ember.tensor(1.0),))
    got = func.functional_call(e_mod, {"foo": ember.zeros(()), "foo_tied": ember.ones(())},
                               (ember.tensor(1.0),), tie_weights=False)
    assert float(got) == 2.0


def test_jacrev_of_jacrev_composes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.randn(3)
        h = func.jacrev(func.jacrev(lambda a: (a.sin() * a).sum()))(x)
    a = x.numpy()
    want = np.diag(2 * np.cos(a) - a * np.sin(a))
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-5, atol=1e-6)


def test_unbatched_in_place_write_happens_once():
    counter = ember.zeros(3)

    def f(a):
        counter.add_(ember.ones(3))          # same for every sample: done once, as torch
        return a * 2
    out = func.vmap(f)(ember.ones(4, 3))
    np.testing.assert_array_equal(out.numpy(), np.full((4, 3), 2.0))
    np.testing.assert_array_equal(counter.numpy(), np.ones(3))


def _ops_run(fn):
    """The names of the kernels fn runs (a dispatch hook, as graph capture's); a matmul as
    (matmul, its inner dim k, its first input's rank)."""
    from ember import dispatch
    names = []
    dispatch.add_hook("test_ops_run", lambda op, device, kernel, natives, *a: names.append(
        (op.name, natives[0].shape[-1], natives[0].ndim) if op.name == "matmul" else op.name))
    try:
        out = fn()
    finally:
        dispatch.remove_hook("test_ops_run")
    return out, names


def test_per_sample_grads_batch_the_fused_backward_kernels():
    # an outermost grad needs no graph of its gradient: vmap then batches the backends'
    # fused backward kernels (max_pool2d's as one kernel, not argmax + scatter_add + fold),
    # and each per-sample weight gradient g^T x of one row is one broadcast multiply
    F = ember.nn.functional
    conv, fc = ember.nn.Conv2d(1, 3, 3), ember.nn.Linear(12, 4)
    params = {**{f"conv.{k}": v.detach() for k, v in conv.named_parameters()},
              **{f"fc.{k}": v.detach() for k, v in fc.named_parameters()}}

    def loss(p, x, y):
        h = F.conv2d(x.unsqueeze(0), p["conv.weight"], p["conv.bias"])
        h = F.max_pool2d(F.relu(h), 2).flatten(1)
        return F.cross_entropy(F.linear(h, p["fc.weight"], p["fc.bias"]), y.unsqueeze(0))
    x, y = ember.randn(5, 1, 6, 6), ember.tensor([0, 1, 2, 3, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, names = _ops_run(lambda: func.vmap(func.grad(loss), in_dims=(None, 0, 0))(
            params, x, y))
    assert "max_pool2d_backward" in names, names
    assert "argmax" not in names and "fold" not in names, names
    # k = 1 on the batch (the sample's trace has its own (4, 1) @ (1, 12)): a multiply
    assert not [n for n in names if n[:2] == ("matmul", 1) and n[2] > 2], names
    for i in range(5):
        g = func.grad(loss)(params, x[i], y[i])
        for k in g:
            np.testing.assert_allclose(got[k][i].numpy(), g[k].numpy(), rtol=1e-4,
                                       atol=1e-6)
    # a gradient that is differentiated again keeps its graph (grad of grad)
    h = func.grad(lambda a: func.grad(lambda b: (b.sin() ** 2).sum())(a).sum())(x[0, 0, 0])
    a = x[0, 0, 0].numpy()
    np.testing.assert_allclose(h.numpy(), 2 * np.cos(2 * a), rtol=1e-5, atol=1e-6)


def test_per_sample_grads_of_stacked_convolutions_batch_the_conv_kernels():
    # conv2d, conv2d_input_grad and conv2d_weight_grad batch (the samples join N, or with
    # per-sample weights and weight gradients become channel groups): no per-sample loop,
    # each sample's gradient as grad alone gives it (3x3 stride 1 with 8 channels: the
    # CPU's Winograd kernels, grouped)
    F = ember.nn.functional
    ember.manual_seed(0)
    c1, c2 = ember.nn.Conv2d(8, 8, 3, padding=1), ember.nn.Conv2d(8, 8, 3, padding=1)
    params = {"w1": c1.weight.detach(), "b1": c1.bias.detach(), "w2": c2.weight.detach()}

    def loss(p, x):
        h = F.relu(F.conv2d(x.unsqueeze(0), p["w1"], p["b1"], padding=1))
        return (F.conv2d(h, p["w2"], padding=1) ** 2).mean()
    x = ember.randn(4, 8, 8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, names = _ops_run(lambda: func.vmap(func.grad(loss), in_dims=(None, 0))(params, x))
    assert {"conv2d_input_grad", "conv2d_weight_grad"} <= set(names), names
    for i in range(4):
        g = func.grad(loss)(params, x[i])
        for k in g:
            np.testing.assert_allclose(got[k][i].numpy(), g[k].numpy(), rtol=1e-4,
                                       atol=1e-6 * np.abs(g[k].numpy()).max())
    # per-sample weights: conv2d itself as channel groups
    ws = ember.randn(4, 8, 8, 3, 3)
    out = func.vmap(lambda w, xi: F.conv2d(xi.unsqueeze(0), w, padding=1))(ws, x)
    for i in range(4):
        want = F.conv2d(x[i].unsqueeze(0), ws[i], padding=1)
        np.testing.assert_allclose(out[i].numpy(), want.numpy(), rtol=1e-4,
                                   atol=1e-6 * np.abs(want.numpy()).max())
