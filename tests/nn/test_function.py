"""ember.autograd.Function against torch.autograd.Function: the same classes, both libraries."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from nn_helpers import device_params, rng, to_numpy


def functions(lib):
    """The same custom functions written against `lib` (torch or ember)."""
    Function = lib.autograd.Function

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)          # an output, saved
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class ScaledMul(Function):
        """x * y * scale, scale a plain number; grads only where needed."""

        @staticmethod
        def forward(ctx, x, y, scale=2.0):
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            return x * y * scale

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            gx = grad * y * ctx.scale if ctx.needs_input_grad[0] else None
            gy = grad * x * ctx.scale if ctx.needs_input_grad[1] else None
            return gx, gy, None

    class SplitHalves(Function):
        """Two outputs, the second with a non-differentiable integer companion."""

        @staticmethod
        def forward(x):
            n = x.shape[0] // 2
            idx = lib.arange(n)
            return x[:n] * 1.0, x[n:] * 3.0, idx

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.n = inputs[0].shape[0] // 2
            ctx.mark_non_differentiable(output[2])

        @staticmethod
        def backward(ctx, ga, gb, gidx):
            return lib.cat([ga, gb * 3.0])

    class NoMaterialize(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2.0, x * 5.0

        @staticmethod
        def backward(ctx, ga, gb):
            g = lib.zeros_like(ga if ga is not None else gb)
            if ga is not None:
                g = g + ga * 2.0
            if gb is not None:
                g = g + gb * 5.0
            return g

    class Cube(Function):
        """x**3 with a backward written in ops: it differentiates again."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3.0 * x * x

    class OnceCube(Cube):
        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3.0 * x * x

    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2.0)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2.0

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 1.0

    return dict(Exp=Exp, ScaledMul=ScaledMul, SplitHalves=SplitHalves,
                NoMaterialize=NoMaterialize, Cube=Cube, OnceCube=OnceCube,
                DoubleInPlace=DoubleInPlace, Identity=Identity)


def both(torch, name, program):
    """Run program(lib, functions, leaf) on both libraries; the leaves' gradients and the
    program's returned values must agree."""
    r = rng(name)
    x = r.standard_normal(6)
    results = []
    for lib in (torch, ember):
        leaf = lib.tensor(x, requires_grad=True)
        out = program(lib, functions(lib), leaf)
        results.append([to_numpy(v) for v in out] + [to_numpy(leaf.grad)])
    for a, b in zip(results[1], results[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _exp(lib, fn, x):
    y = fn["Exp"].apply(x * 0.5)
    g = lib.tensor(np.linspace(-1, 1, 6))
    y.backward(g)
    return [y.detach()]


def _scaled(lib, fn, x):
    other = lib.tensor(np.arange(6.0))                      # needs no gradient
    y = fn["ScaledMul"].apply(x, other, 3.0)
    z = fn["ScaledMul"].apply(y, x)                          # default scale, via default
    (z.sum() + y.sum()).backward()
    return [z.detach()]


def _split(lib, fn, x):
    a, b, idx = fn["SplitHalves"].apply(x)
    assert not idx.requires_grad and a.requires_grad
    (a * a).sum().backward(retain_graph=True)
    b.sum().backward()                                      # second output alone
    return [a.detach(), b.detach(), idx]


def _no_materialize(lib, fn, x):
    a, b = fn["NoMaterialize"].apply(x)
    b.sum().backward()                                      # a's gradient arrives as None
    return [a.detach()]


def _double_backward(lib, fn, x):
    y = fn["Cube"].apply(x)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()                                      # x.grad = 6 x
    return [g.detach()]


def _mark_dirty(lib, fn, x):
    base = x * 1.0
    y = fn["DoubleInPlace"].apply(base)
    assert y is base
    (y * y).sum().backward()
    return [y.detach()]


def _identity(lib, fn, x):
    y = fn["Identity"].apply(x)
    assert y is not x and not x.grad_fn
    (y * 2.0).sum().backward()
    return [y.detach()]


@pytest.mark.parametrize("program", [_exp, _scaled, _split, _no_materialize,
                                     _double_backward, _mark_dirty, _identity],
                         ids=lambda p: p.__name__.strip("_"))
def test_matches_torch(torch, program):
    both(torch, program.__name__, program)


def test_graph_properties_hooks_and_retain_graph():
    fn = functions(ember)
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = fn["Exp"].apply(x)
    assert "ExpBackward" in repr(y.grad_fn) and y.grad_fn.next_functions[0][0] is not None
    seen = []
    y.register_hook(lambda g: seen.append(to_numpy(g)))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.exp([1.0, 2.0]))
    assert len(seen) == 2
    with pytest.raises(ember.AutogradError, match="second time"):
        y.sum().backward()
    with ember.no_grad():
        assert not fn["Exp"].apply(x).requires_grad
    assert not fn["Exp"].apply(ember.tensor([1.0])).requires_grad


def test_gradcheck_through_a_custom_function():
    fn = functions(ember)
    x = ember.tensor(rng("gradcheck").standard_normal(4), requires_grad=True)
    assert ember.autograd.gradcheck(fn["Cube"].apply, (x,))
    assert ember.autograd.gradgradcheck(fn["Cube"].apply, (x,))


def test_errors():
    fn = functions(ember)
    Function = ember.autograd.Function

    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad

    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return ember.ones(3)

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="incorrect number of gradients"):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(ember.AutogradError, match="invalid gradient at index 0"):
        BadShape.apply(x).backward()
    y = x * 1.0
    out = fn["Cube"].apply(y)
    y.add_(1.0)                                     # modifies a saved tensor
    with pytest.raises(ember.AutogradError, match="modified by an inplace operation"):
        out.sum().backward()
    # the gradient reaching OnceCube's backward (x) requires grad: its result is marked
    g = ember.autograd.grad((fn["OnceCube"].apply(x) * x).sum(), x, create_graph=True)[0]
    with pytest.raises(ember.AutogradError, match="once_differentiable"):
        g.sum().backward()
    with pytest.raises(ember.AutogradError, match="staticmethod"):
        fn["Exp"]()(x)
    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="leaf"):
        fn["DoubleInPlace"].apply(leaf)


@pytest.mark.parametrize("device", device_params())
def test_on_device(device):
    fn = functions(ember)
    x = ember.tensor([0.5, -1.0, 2.0, 0.0], device=device, requires_grad=True)
    a, b, _ = fn["SplitHalves"].apply(fn["Exp"].apply(x))
    (a.sum() + (b * b).sum()).backward()
    e = np.exp([0.5, -1.0, 2.0, 0.0])
    want = np.concatenate([e[:2], 2 * 9 * e[2:] ** 2])
    assert str(x.grad.device) == device
    np.testing.assert_allclose(to_numpy(x.grad.to("cpu")), want, rtol=1e-5)
