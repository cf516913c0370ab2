"""torch.autograd.graph's saved-tensor hooks against torch: gradients under hooks equal
those without (on every device), the hooks see every tensor an op keeps (in the same
shapes torch's do, where ember saves the same tensors), save_on_cpu, nesting, custom
Functions' save_for_backward, and disable_saved_tensors_hooks."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.testing import devices_under_test

torch = pytest.importorskip("torch")
DEVICES = [d for d, why in devices_under_test() if not why]


def _program(lib, x, w):
    h = (x @ w).tanh()
    return (h.exp() * x[:, :1]).sum() + (h.sigmoid() / (w.abs() + 1).sum()).mean()


def _grads(lib, device, hooks):
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    if lib is torch:
        x, w = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    else:
        x = ember.tensor(xa, requires_grad=True, device=device)
        w = ember.tensor(wa, requires_grad=True, device=device)
    seen = []
    if hooks == "copy":
        ctx = lib.autograd.graph.saved_tensors_hooks(
            lambda t: (seen.append(tuple(t.shape)), t.detach().clone())[1], lambda t: t)
    elif hooks == "cpu":
        ctx = lib.autograd.graph.save_on_cpu()
    else:
        ctx = None
    if ctx is not None:
        with ctx:
            y = _program(lib, x, w)
    else:
        y = _program(lib, x, w)
    y.backward()
    return x.grad.numpy(), w.grad.numpy(), seen


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("hooks", ["copy", "cpu"])
def test_gradients_under_hooks_are_torchs(device, hooks):
    tx, tw, _ = _grads(torch, "cpu", hooks)
    ex, ew, seen = _grads(ember, device, hooks)
    np.testing.assert_allclose(ex, tx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ew, tw, rtol=1e-10, atol=1e-12)
    if hooks == "copy":
        assert seen, "the pack hook saw nothing"


def test_hooks_see_what_is_saved_and_unpack_is_used():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return ("boxed", t.detach() * 1)

    def unpack(box):
        unpacked.append(box)
        return box[1]
    with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.sin() * x).sum()
    assert len(packed) >= 2 and not unpacked
    y.backward()
    assert len(unpacked) == len(packed)
    want = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (want.sin() * want).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want.grad.numpy(), rtol=1e-6)


def test_custom_function_saves_through_hooks_as_torch():
    counts = {}
    for lib in (torch, ember):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                y = a * a
                ctx.save_for_backward(a, y)
                return y

            @staticmethod
            def backward(ctx, g):
                a, y = ctx.saved_tensors
                return 2 * a * g + 0 * y
        x = lib.tensor([3.0, -1.0], requires_grad=True)
        n = []

        def pack(t, n=n):
            n.append(1)
            return t.clone()
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = Square.apply(x)
        y.sum().backward()
        counts[lib.__name__] = (len(n), x.grad.tolist())
    assert counts["ember"] == counts["torch"]


def test_inner_hooks_win_and_disable_refuses():
    x = ember.tensor([2.0], requires_grad=True)
    outer, inner = [], []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: (outer.append(1), t)[1],
                                                  lambda t: t):
        with ember.autograd.graph.saved_tensors_hooks(lambda t: (inner.append(1), t)[1],
                                                      lambda t: t):
            y = x.exp()
        z = x.sin()
    (y + z).sum().backward()
    assert inner and outer
    with ember.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
