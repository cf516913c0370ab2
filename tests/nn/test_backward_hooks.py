"""Module full backward hooks against torch: what each hook sees (grad_input, grad_output),
in which order, replacing gradients, and the leaf gradients that result."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _pair(lib):
    class Two(lib.nn.Module):
        """Two tensor inputs (and a number), two outputs."""

        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, a, k, b):
            h = self.lin(a) * k
            return h + b, (h * b).sum(1)
    return Two()


def _as_np(t):
    return None if t is None else np.array(t.detach().numpy(), copy=True)


def _run(lib, module, case):
    rng = np.random.default_rng(0)
    a = lib.tensor(rng.standard_normal((4, 3)).astype(np.float32),
                   requires_grad=case != "no input grad")
    b = lib.tensor(rng.standard_normal((4, 2)).astype(np.float32),
                   requires_grad=case == "both inputs")
    log = []

    def full(mod, grad_input, grad_output):
        log.append(("full", [_as_np(g) for g in grad_input], [_as_np(g) for g in grad_output]))
        if case == "replace input":
            return tuple(None if g is None else g * 10 for g in grad_input)

    def pre(mod, grad_output):
        log.append(("pre", [_as_np(g) for g in grad_output]))
        if case == "replace output":
            return tuple(None if g is None else g * 2 for g in grad_output)

    h1 = module.register_full_backward_hook(full)
    h2 = module.register_full_backward_pre_hook(pre)
    out, s = module(a, 1.5, b)
    if case == "no input grad":          # both warn: the hook fires with no input gradient
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            (out.sum() + s.sum() * 0.5).backward()
    else:
        (out.sum() + s.sum() * 0.5).backward()
    h1.remove()
    h2.remove()
    out2, _ = module(a, 1.5, b)              # removed: no more calls
    out2.sum().backward()
    grads = [_as_np(a.grad), _as_np(b.grad)] + [_as_np(p.grad) for p in module.parameters()]
    return log, grads


@pytest.mark.parametrize("case", ["plain", "both inputs", "no input grad", "replace input",
                                  "replace output"])
def test_full_backward_hooks_as_torch(case):
    t_mod = _pair(torch)
    e_mod = _pair(ember)
    for p, q in zip(t_mod.parameters(), e_mod.parameters()):
        with ember.no_grad():
            q.copy_(ember.tensor(p.detach().numpy()))
    t_log, t_grads = _run(torch, t_mod, case)
    e_log, e_grads = _run(ember, e_mod, case)
    assert [e[0] for e in e_log] == [t[0] for t in t_log]
    for t_entry, e_entry in zip(t_log, e_log):
        for t_part, e_part in zip(t_entry[1:], e_entry[1:]):
            assert len(e_part) == len(t_part), (case, t_entry[0])
            for t_g, e_g in zip(t_part, e_part):
                assert (t_g is None) == (e_g is None), (case, t_entry[0])
                if t_g is not None:
                    np.testing.assert_allclose(e_g, t_g, rtol=1e-5, atol=1e-6)
    for t_g, e_g in zip(t_grads, e_grads):
        assert (t_g is None) == (e_g is None)
        if t_g is not None:
            np.testing.assert_allclose(e_g, t_g, rtol=1e-5, atol=1e-6)


def test_backward_hook_on_a_layer_in_a_model_as_torch():
    """Grad-CAM style: a hook on an inner layer records the gradient of its output."""
    nets = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        nets.append(lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)))
    for p, q in zip(nets[0].parameters(), nets[1].parameters()):
        with ember.no_grad():
            q.copy_(ember.tensor(p.detach().numpy()))
    seen = []
    for lib, net in zip((torch, ember), nets):
        got = {}
        net[1].register_full_backward_hook(
            lambda m, gi, go, got=got: got.update(gi=_as_np(gi[0]), go=_as_np(go[0])))
        x = lib.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5))
        net(x)[:, 0].sum().backward()
        seen.append(got)
    np.testing.assert_allclose(seen[1]["go"], seen[0]["go"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seen[1]["gi"], seen[0]["gi"], rtol=1e-5, atol=1e-6)
