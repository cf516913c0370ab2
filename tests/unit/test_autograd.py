"""Autograd: the engine, grad modes, hooks, in-place safety, higher order, functional API,
and PyTorch's gradient semantics for indexing, where, max ties, expand, cat/split."""
from __future__ import annotations

import gc
import weakref

import ember
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import AutogradError, EmberError


def f64(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape), dtype=ember.float64, requires_grad=True)


def test_backward_accumulates_into_leaves():
    x = f64(3)
    (x * x).sum().backward()
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() + 2)
    assert x.is_leaf and x.grad_fn is None


def test_accumulation_adds_into_the_grad_in_place_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w0, g1, g2 = (rng.standard_normal((4, 3)) for _ in range(3))
    got = []
    for make in (lambda a: ember.tensor(a, dtype=ember.float64),
                 lambda a: torch.tensor(a, dtype=torch.float64)):
        w = make(w0).requires_grad_()
        (w * make(g1)).sum().backward()
        first = w.grad                      # a reference held across the next backward
        (w * make(g2)).sum().backward()
        # torch's AccumulateGrad adds in place (grad += new): the held reference sees the
        # sum and .grad stays the same tensor
        assert w.grad is first
        got.append((first.detach().numpy().copy(), w.grad.detach().numpy().copy()))
        # a .grad the user set is added into as well
        mine = make(np.zeros((4, 3)))
        w.grad = mine
        (w * make(g1)).sum().backward()
        assert w.grad is mine
        got[-1] += (mine.detach().numpy().copy(),)
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(got[0][0], g1 + g2)
    np.testing.assert_array_equal(got[0][2], g1)


def test_grad_fn_names_and_edges():
    x = f64(2)
    y = (x.exp() * 2).sum()
    assert y.grad_fn.name() == "SumBackward0"
    assert repr(y.grad_fn) == "<SumBackward0>"
    mul = y.grad_fn.next_functions[0][0]
    assert mul.name() == "MulBackward0"
    assert repr(mul.next_functions[0][0].next_functions[0][0]) == "<AccumulateGrad>"


def test_long_chain_has_no_recursion_limit():
    x = ember.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_saved_values_are_freed_and_second_backward_is_clear():
    x = f64(3)
    loss = (x.exp() * x).sum()
    loss.backward()
    with pytest.raises(AutogradError, match="backward through the graph a second time"):
        loss.backward()
    loss2 = (x.exp() * x).sum()
    loss2.backward(retain_graph=True)
    loss2.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * (np.exp(x.detach().numpy()) *
                                                    (1 + x.detach().numpy())))


def test_no_reference_leak_after_backward():
    x = f64(4)
    h = x.exp()
    mid = weakref.ref(h)
    loss = (h * 2).sum()
    del h
    loss.backward()
    del loss
    assert mid() is None, "an intermediate tensor outlived its graph"
    gc.collect()


def test_inference_mode_state_as_torch():
    """is_inference_mode_enabled inside and outside blocks, nested, disabled, decorated and
    in another thread, each against torch's answer."""
    torch = pytest.importorskip("torch")
    import threading

    def states(lib):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            seen.append(lib.is_grad_enabled())
            with lib.inference_mode(False):
                seen.append(lib.is_inference_mode_enabled())
            seen.append(lib.is_inference_mode_enabled())
            other = []
            t = threading.Thread(target=lambda: other.append(lib.is_inference_mode_enabled()))
            t.start()
            t.join()
            seen += other

        @lib.inference_mode()
        def f():
            return lib.is_inference_mode_enabled()
        seen += [f(), lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        return seen

    assert states(ember) == states(torch)


def test_grad_modes():
    x = f64(2)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    with ember.set_grad_enabled(False):
        assert not (x + 1).requires_grad
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad and ember.is_grad_enabled()


def test_retain_grad_hooks_detach():
    x = f64(3)
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * y.detach().numpy())
    assert len(seen) == 1
    np.testing.assert_allclose(x.grad.numpy(), 10 * 8 * x.detach().numpy())
    handle.remove()
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    z = x * 1
    z.detach_()
    assert z.grad_fn is None and not z.requires_grad


def test_autograd_grad_api():
    x, w = f64(3), f64(3, seed=1)
    y = (x * w).sum()
    gx, gw = ember.autograd.grad(y, [x, w], create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), w.detach().numpy())
    (ggx,) = ember.autograd.grad(gx.sum(), [w])
    np.testing.assert_allclose(ggx.numpy(), np.ones(3))
    assert x.grad is None                                       # grad() leaves .grad alone
    (gl,) = ember.autograd.grad(x, [x], ember.ones(3))          # a leaf as the output
    assert gl.tolist() == [1.0, 1.0, 1.0] and x.grad is None
    z = f64(2)
    with pytest.raises(AutogradError, match="allow_unused=True"):
        ember.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = ember.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gz is None
    with pytest.raises(AutogradError, match="implicitly created only for scalar"):
        (x * 2).backward()


def test_inplace_safety():
    x = f64(3)
    with pytest.raises(AutogradError, match="leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(AutogradError, match="leaf Variable"):
        x[0] = 1.0
    with ember.no_grad():
        x.mul_(1.0)                                            # fine outside the graph
    y = x.sigmoid()
    loss = y.sum()
    with ember.no_grad():
        y.add_(1)
    with pytest.raises(AutogradError, match="modified by an inplace operation.*version 1"):
        loss.backward()


def test_inplace_ops_record_correct_gradients():
    def f(x):
        y = x * 1
        y.mul_(x)
        y[0] = y[1] * 3
        y[:, 1] *= 2
        return y.exp()
    assert gradcheck(f, (f64(3, 2),))


def test_non_differentiable_ops_say_so():
    x = f64(3)
    for out, op in [(x.argmax(), "argmax"), ((x > 0), "gt"), (x.floor().long(), "cast")]:
        assert not out.requires_grad
        with pytest.raises(AutogradError, match=f"output of {op}, which is not differ"):
            out.backward(ember.ones(tuple(out.shape)))
    with pytest.raises(EmberError, match="only Tensors of floating point"):
        ember.arange(3).requires_grad_()


def test_cast_backward_returns_input_dtype():
    x = ember.ones(3, requires_grad=True)
    (x.double() * 2).sum().backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("fn", [
    lambda x: (x.exp() * x.sin()).sum(),
    lambda x: (x @ x.mT).tanh(),
    lambda x: x.softmax(-1),
    lambda x: x.log_softmax(0),
    lambda x: x.var(1),
    lambda x: x.amax(1),
    lambda x: (x.sigmoid() / (x * x + 1)).prod(),
    lambda x: ember.where(x > 0, x * x, -x).logsumexp(1),
], ids=["elementwise", "matmul", "softmax", "log_softmax", "var", "max", "prod", "where"])
def test_double_backward(fn):
    assert gradgradcheck(fn, (f64(3, 4),))


def test_detect_anomaly_names_the_forward_op():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with ember.autograd.detect_anomaly():
        y = x.sqrt().sum()
        with pytest.raises(AutogradError, match=r"SqrtBackward0.*nan or inf.*\(sqrt\)"):
            y.backward()


def test_func_api():
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)
    g = ember.func.grad(lambda t: (t ** 3).sum())(x)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.numpy() ** 2)
    h = ember.func.hessian(lambda t: (t ** 3).sum(), x)
    np.testing.assert_allclose(h.detach().numpy(), np.diag(6 * x.numpy()))
    out, vjp_fn = ember.func.vjp(lambda t: t.sin(), x)
    (v,) = vjp_fn(ember.ones_like(x))
    np.testing.assert_allclose(v.detach().numpy(), np.cos(x.numpy()))
    _, jv = ember.func.jvp(lambda t: t * t, (x,), (ember.ones_like(x),))
    np.testing.assert_allclose(jv.detach().numpy(), 2 * x.numpy())
    j = ember.func.jacobian(lambda t: t.exp(), x)
    np.testing.assert_allclose(j.detach().numpy(), np.diag(np.exp(x.numpy())))


# --- PyTorch's semantics, one test per choice ------------------------------------------

def _both(fn_ember, fn_torch, *arrays):
    torch = pytest.importorskip("torch")
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn_ember(*xs).backward()
    fn_torch(*ts).backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_semantics_repeated_indices_accumulate():
    idx = [0, 2, 0, 0]
    _both(lambda x: (x[idx] * ember.arange(4.0)).sum(),
          lambda x: (x[idx] * __import__("torch").arange(4.0)).sum(),
          np.arange(3.0, dtype=np.float32))


def test_semantics_where_routes_gradient():
    a = np.array([-1.0, 2.0, 0.0], np.float32)
    _both(lambda x, y: ember.where(x > 0, x * 2, y * 3).sum(),
          lambda x, y: __import__("torch").where(x > 0, x * 2, y * 3).sum(), a, a + 1)


def test_semantics_max_ties_split_evenly_for_amax_but_not_for_max_dim():
    a = np.array([[3.0, 3.0, 3.0, 1.0]], np.float32)
    _both(lambda x: x.amax(), lambda x: x.amax(), a)                  # 1/3 each
    _both(lambda x: x.max(1)[0].sum(), lambda x: x.max(1)[0].sum(), a)  # the chosen index
    _both(lambda x: ember.maximum(x, ember.tensor(3.0)).sum(),
          lambda x: __import__("torch").maximum(x, __import__("torch").tensor(3.0)).sum(), a)


def test_semantics_expand_and_broadcast_sum_back():
    a = np.arange(3.0, dtype=np.float32).reshape(3, 1)
    _both(lambda x: (x.expand(3, 4) * ember.arange(12.0).reshape(3, 4)).sum(),
          lambda x: (x.expand(3, 4) * __import__("torch").arange(12.0).reshape(3, 4)).sum(), a)
    _both(lambda x, y: (x * y).sum(), lambda x, y: (x * y).sum(), a,
          np.ones((2, 1, 4), np.float32))


def test_semantics_cat_and_split():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    _both(lambda x: (ember.cat([x, x * 2], 0) ** 2).sum(),
          lambda x: (__import__("torch").cat([x, x * 2], 0) ** 2).sum(), a)
    _both(lambda x: sum((p * (i + 1)).sum() for i, p in enumerate(x.split([1, 2], 1))),
          lambda x: sum((p * (i + 1)).sum() for i, p in enumerate(x.split([1, 2], 1))), a)


def test_semantics_boolean_mask_and_setitem():
    a = np.array([[1.0, -2.0], [3.0, -4.0]], np.float32)
    _both(lambda x: (x[x > 0] ** 2).sum(), lambda x: (x[x > 0] ** 2).sum(), a)


def test_semantics_max_pool_ties_go_to_the_first_maximum():
    torch = pytest.importorskip("torch")
    a = np.array([[[[1.0, 1.0, 0.0, 2.0], [1.0, 0.5, 2.0, 2.0],
                    [3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]]], np.float32)
    _both(lambda x: (ember.nn.functional.max_pool2d(x, 2) * ember.arange(1.0, 5.0).reshape(
        2, 2)).sum(), lambda x: (torch.nn.functional.max_pool2d(x, 2) * torch.arange(
            1.0, 5.0).reshape(2, 2)).sum(), a)
    # the same through the decomposition (create_graph) and on a padded, strided window
    _both(lambda x: ember.nn.functional.max_pool2d(x, 3, 2, 1).sum(),
          lambda x: torch.nn.functional.max_pool2d(x, 3, 2, 1).sum(), a)


def test_max_pool_double_backward():
    x = f64(1, 2, 4, 4)
    assert gradgradcheck(lambda t: ember.nn.functional.max_pool2d(t, 2) ** 2, (x,))


def test_leaf_gradients_never_alias_other_tensors():
    """The engine adopts a fresh gradient instead of copying it, but never one that another
    tensor can see: zeroing .grad in place must not touch anything else."""
    g0 = ember.ones(3)
    for make in (lambda t: t + 0.0, lambda t: t * 1.0, lambda t: t.reshape(3), lambda t: t):
        x = ember.randn(3, requires_grad=True)
        make(x).backward(g0)
        x.grad.zero_()
        assert g0.tolist() == [1.0, 1.0, 1.0]
    a = ember.randn(3, requires_grad=True)
    (a + a).sum().backward()                     # one gradient object reaches a twice
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    w = ember.randn(4, 3, requires_grad=True)
    ember.linear(ember.randn(5, 3), w).sum().backward()
    assert w.grad.numpy().flags.c_contiguous    # the weight's own layout, ready to update


def test_only_what_a_rule_reads_is_version_checked():
    """x * 0.01 reads no tensor for its gradient: writing x afterwards is fine (as in
    PyTorch); x * y with y requiring grad reads x, so writing x is the in-place error."""
    v = ember.ones(3, 2, requires_grad=True) * 1.0
    w = v * 0.01
    v[0] = ember.zeros(2)
    w.sum().backward()
    x, y = ember.ones(3, requires_grad=True), ember.ones(3, requires_grad=True)
    a = x * 1.0
    z = a * y
    a.add_(1)
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        z.sum().backward()
    q = ember.ones(3, requires_grad=True) * 2.0
    d = ember.tensor(6.0) / q                 # div reads its divisor, never its dividend
    top = ember.ones(3, requires_grad=True) * 3.0
    e = top / 2.0
    top.mul_(2)
    e.sum().backward()
    q.add_(1)
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        d.sum().backward()


def test_gradcheck_takes_a_list_of_inputs():
    # a list was taken as one non-tensor input: nothing was checked and the answer was True
    class Wrong(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    with pytest.raises(AutogradError, match="Jacobian mismatch for input 0"):
        gradcheck(Wrong.apply, [f64(3)])
    assert gradcheck(lambda a, b: a * b, [f64(3), f64(3, seed=1)])
    assert gradgradcheck(lambda a, b: a * b * a, [f64(3), f64(3, seed=1)])
