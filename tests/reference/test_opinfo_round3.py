"""Regression tests for the third round of OpInfo/ModuleInfo fixes (issue 26): the
ModuleInfos that differed from torch and the CPU failure groups left after round two.
Each against torch on the CPU (the device-independent parts of the ops)."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.errors import EmberTypeError  # noqa: E402

RNG = np.random.default_rng(2603)


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol, equal_nan=True)


def _pair(shape, requires_grad=True):
    a = RNG.standard_normal(shape).astype(np.float32)
    return (torch.tensor(a, requires_grad=requires_grad),
            ember.tensor(a, requires_grad=requires_grad))


# -- modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", ["InstanceNorm1d", "InstanceNorm2d"])
def test_instance_norm_affine_without_bias(cls):
    tm = getattr(torch.nn, cls)(3, affine=True, bias=False)
    em = getattr(ember.nn, cls)(3, affine=True, bias=False)
    assert set(tm.state_dict()) == set(em.state_dict()) == {"weight"}
    assert em.bias is None
    shape = (2, 3, 5) if cls.endswith("1d") else (2, 3, 4, 4)
    t, e = _pair(shape)
    _close(tm(t), em(e))


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (0, 5, 9)),
                                       ("BatchNorm2d", (0, 5, 2, 2))])
def test_batch_norm_empty_batch(cls, shape):
    tm, em = getattr(torch.nn, cls)(5), getattr(ember.nn, cls)(5)
    for m in (tm, em):
        m.running_mean.fill_(2.0)
        m.running_var.fill_(3.0)
    t, e = _pair(shape)
    to, eo = tm(t), em(e)
    _close(to, eo)
    # the running statistics stay as they were (torch's), the counter counts the batch
    _close(tm.running_mean, em.running_mean)
    _close(tm.running_var, em.running_var)
    assert int(em.num_batches_tracked.item()) == int(tm.num_batches_tracked.item())
    to.sum().backward()
    eo.sum().backward()
    _close(tm.weight.grad, em.weight.grad)
    _close(tm.bias.grad, em.bias.grad)


def test_kl_div_target_gradient_is_torchs():
    """torch's kl_div is xlogy(target, target) - target * input: the target's gradient
    is nan where the target is 0, negative or nan."""
    a = np.array([[-1.0, 0.0, 2.0, math.nan, 0.5]], np.float32)
    b = RNG.standard_normal((1, 5)).astype(np.float32)
    tt, et = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    ti, ei = torch.tensor(b, requires_grad=True), ember.tensor(b, requires_grad=True)
    for reduction in ("none", "sum", "batchmean"):
        to = torch.nn.functional.kl_div(ti, tt, reduction=reduction)
        eo = ember.nn.functional.kl_div(ei, et, reduction=reduction)
        _close(to, eo)
        up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
        tg = torch.autograd.grad(to, [ti, tt], torch.tensor(up))
        eg = ember.autograd.grad(eo, [ei, et], ember.tensor(up))
        _close(tg[0], eg[0])
        _close(tg[1], eg[1])


def test_transformer_layer_takes_torchs_functional_activation():
    """A program that passes PyTorch's F.gelu (a builtin of torch._C._nn) gets ember's
    gelu; a PyTorch module instance is refused with the fix."""
    layer = ember.nn.TransformerEncoderLayer(4, 2, 8, 0.0, torch.nn.functional.gelu)
    assert layer.activation is ember.nn.functional.gelu
    layer(ember.randn(2, 3, 4))
    with pytest.raises(EmberTypeError, match="ember.nn.GELU"):
        ember.nn.TransformerEncoderLayer(4, 2, 8, 0.0, torch.nn.GELU())


# -- ops ----------------------------------------------------------------------------------

@pytest.mark.parametrize("wdtype", ["int64", "bool", "float32"])
def test_bincount_weight_dtype(wdtype):
    x = np.array([0, 1, 1, 3, 5])
    w = np.array([1, 0, 1, 1, 1]).astype(wdtype)
    to = torch.bincount(torch.tensor(x), torch.tensor(w))
    eo = ember.bincount(ember.tensor(x), ember.tensor(w))
    assert str(to.dtype)[6:] == eo.dtype.name
    _close(to, eo)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "lower"])
def test_quantile_gradient_wrt_q(name, interpolation):
    t, e = _pair((3, 7))
    q = np.array([0.3, 0.77], np.float32)
    tq, eq = torch.tensor(q, requires_grad=True), ember.tensor(q, requires_grad=True)
    to = getattr(torch, name)(t, tq, dim=1, interpolation=interpolation)
    eo = getattr(ember, name)(e, eq, dim=1, interpolation=interpolation)
    _close(to, eo)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    tg = torch.autograd.grad(to, [t, tq], torch.tensor(up), allow_unused=True)
    eg = ember.autograd.grad(eo, [e, eq], ember.tensor(up), allow_unused=True)
    _close(tg[0], eg[0], 1e-4)
    # linear: d/dq = (upper - lower) * (n - 1); the others do not depend on q's value
    _close(tg[1] if tg[1] is not None else torch.zeros(2),
           eg[1] if eg[1] is not None else ember.zeros(2), 1e-4)


@pytest.mark.parametrize("p", [0.5, 1.5, 3.5, -0.5, -1, -2])
def test_vector_norm_subgradients_at_zero(p):
    """torch's p-norm gradient is 0 at a zero vector and at a zero element, not nan."""
    for a in (np.zeros((2, 5), np.float32),
              np.array([[0.0, 1.5, -2.0, 0.0, 0.3], [0.0] * 5], np.float32)):
        t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
        to, eo = torch.linalg.norm(t, p, dim=1), ember.linalg.norm(e, p, dim=1)
        _close(to, eo)
        up = np.array([1.3, -0.7], np.float32)
        _close(torch.autograd.grad(to, t, torch.tensor(up))[0],
               ember.autograd.grad(eo, e, ember.tensor(up))[0], 1e-5)


def test_reference_attention_dropout_samples_compare_shapes():
    """scaled_dot_product_attention with dropout_p > 0 draws random masks: the harness
    compares shape and dtype, as for dropout itself."""
    from ember.testing import torch_reference as ref
    op = next(o for o in ref.op_db() if o.name == "nn.functional.scaled_dot_product_attention")
    samples = ref.samples_of(op, True)
    index = next(i for i, s in enumerate(samples) if s.kwargs.get("dropout_p"))
    r = ref.run_sample(op, ref.resolve(op), samples[index], "cpu", 1e-5, 1e-5, True, index)
    assert r.ok, r.message


def test_pinv_singular_samples_of_torchs_database():
    """torch's own singular samples (rank-deficient, batched): where the SVD's gradient
    was off or nan, pinv_backward's is torch's."""
    from ember.testing import torch_reference as ref
    op = next(o for o in ref.op_db() if ref.full_name(o) == "linalg.pinv.singular")
    result = ref.run_op(op, "cpu", 9, errors=False)
    assert len(result.samples) == 9
    assert all(s.ok for s in result.samples), [s.message for s in result.samples if not s.ok]


def test_pinv_hermitian_reads_the_lower_triangle():
    """hermitian=True: torch's eigh of the lower triangle (the upper one is not read)."""
    t, e = _pair((2, 4, 4))
    to, eo = torch.linalg.pinv(t, hermitian=True), ember.linalg.pinv(e, hermitian=True)
    _close(to, eo, 1e-4)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    _close(torch.autograd.grad(to, t, torch.tensor(up))[0],
           ember.autograd.grad(eo, e, ember.tensor(up))[0], 1e-3)


_OPENCL = [t.device for t in __import__("ember.testing", fromlist=["targets"]).targets()
           if not t.problem and t.device.startswith("opencl")]


@pytest.mark.parametrize("device", _OPENCL)
@pytest.mark.parametrize("other", [(5,), (3,), (2, 4)])
def test_opencl_binary_ops_refuse_shapes_that_do_not_broadcast(device, other):
    """(5, 4) - (5,) answered a (5, 5) on OpenCL (the CPU raises): now a ShapeError."""
    a = ember.randn(5, 4, device=device)
    b = ember.randn(*other, device=device)
    with pytest.raises(ember.errors.ShapeError, match="do not broadcast"):
        (a - b).cpu()
    with pytest.raises(ember.errors.ShapeError, match="do not broadcast"):
        ember.where(a > 0, a, b).cpu()
    with pytest.raises(ember.errors.ShapeError), pytest.warns(UserWarning, match="size"):
        ember.nn.functional.l1_loss(a, b).cpu()
    assert tuple((a - ember.randn(5, 1, device=device)).shape) == (5, 4)


def test_sparse_mm_reduce_is_refused_with_the_reason():
    """torch.sparse.mm(reduce=) exists for CSR tensors only; ember (COO only) refuses it
    instead of accepting and ignoring it."""
    s = ember.eye(3).to_sparse()
    d = ember.randn(3, 2)
    _close(torch.sparse.mm(torch.eye(3).to_sparse(), torch.tensor(d.numpy())),
           ember.sparse.mm(s, d))
    with pytest.raises(ember.errors.NotInEmberError, match="CSR"):
        ember.sparse.mm(s, d, "sum")


def test_as_strided_scatter_input_gradient_is_the_unwritten_positions():
    """ember's gradient w.r.t. input is the upstream gradient where src did not write
    (torch's own is marked wrong in its OpInfo, which is why skips.toml lists the op)."""
    x = ember.randn(3, 3, requires_grad=True)
    src = ember.randn(2, 2, requires_grad=True)
    g = ember.arange(9.0).reshape(3, 3)
    gx, gs = ember.autograd.grad(ember.as_strided_scatter(x, src, (2, 2), (1, 2), 1),
                                 [x, src], g)
    written = {1, 3, 2, 4}                      # offset 1 + {0, 2, 1, 3}
    expect = np.array([0.0 if i in written else float(i) for i in range(9)]).reshape(3, 3)
    np.testing.assert_array_equal(gx.numpy(), expect)
    np.testing.assert_array_equal(gs.numpy(), [[1.0, 3.0], [2.0, 4.0]])


def test_nonzero_as_tuple_of_a_zero_dim_tensor():
    for v in (0.5, 0.0):
        t = torch.nonzero(torch.tensor(v), as_tuple=True)
        e = ember.nonzero(ember.tensor(v), as_tuple=True)
        assert len(t) == len(e) == 1
        np.testing.assert_array_equal(e[0].numpy(), t[0].numpy())
        assert e[0].dtype == ember.int64


@pytest.mark.parametrize("shape,dim", [((0,), None), ((3, 0), 1), ((0,), 0)])
def test_prod_gradient_of_an_empty_reduction(shape, dim):
    t, e = _pair(shape)
    to = torch.prod(t) if dim is None else torch.prod(t, dim)
    eo = ember.prod(e) if dim is None else ember.prod(e, dim)
    _close(to, eo)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    _close(torch.autograd.grad(to, t, torch.tensor(up))[0],
           ember.autograd.grad(eo, e, ember.tensor(up))[0])


def test_combinations_without_rows_stay_in_the_graph():
    t, e = _pair((1,))
    to, eo = torch.combinations(t, 2), ember.combinations(e, 2)
    assert tuple(eo.shape) == tuple(to.shape) == (0, 2)
    assert eo.requires_grad == to.requires_grad is True
    assert ember.combinations(e, 0).requires_grad is torch.combinations(t, 0).requires_grad


@pytest.mark.parametrize("offset,dim1,dim2", [(1, 1, 2), (0, 0, 3), (-1, 3, 1), (2, -1, 0)])
def test_diag_embed_places_the_diagonal_dims(offset, dim1, dim2):
    t, e = _pair((2, 3, 4), requires_grad=False)
    _close(torch.diag_embed(t, offset, dim1, dim2), ember.diag_embed(e, offset, dim1, dim2))


def test_masked_scatter_broadcasts_input_and_mask():
    mask = RNG.random((4, 4)) > 0.5
    t, e = _pair((4,))
    ts, es = _pair((4, 4))
    _close(torch.masked_scatter(t, torch.tensor(mask), ts),
           ember.masked_scatter(e, ember.tensor(mask), es))
    with pytest.raises(ember.errors.EmberError):
        e.detach().clone().masked_scatter_(ember.tensor(mask), es.detach())


def test_norms_of_empty_batches():
    t, e = _pair((0, 2, 3))
    _close(torch.nn.functional.group_norm(t, 1), ember.nn.functional.group_norm(e, 1))
    t, e = _pair((0, 2))
    _close(torch.nn.functional.group_norm(t, 2), ember.nn.functional.group_norm(e, 2))
    t, e = _pair((0,))
    z = torch.zeros(0), ember.zeros(0)
    _close(torch.nn.functional.batch_norm(t, z[0], z[0], training=True),
           ember.nn.functional.batch_norm(e, z[1], z[1], training=True))


def test_multi_margin_loss_of_a_zero_dim_input():
    for p in (1, 2):
        t, e = _pair(())
        to = torch.nn.functional.multi_margin_loss(t, torch.tensor(0), p=p, margin=1.5)
        eo = ember.nn.functional.multi_margin_loss(e, ember.tensor(0), p=p, margin=1.5)
        _close(to, eo)
        _close(torch.autograd.grad(to, t)[0], ember.autograd.grad(eo, e)[0])


def test_tensordot_broadcasts_contracted_dims_of_size_one():
    t1, e1 = _pair((1, 1, 1))
    t2, e2 = _pair((2, 1, 2))
    to = torch.tensordot(t1, t2, dims=([0, 1], [2, 0]))
    eo = ember.tensordot(e1, e2, dims=([0, 1], [2, 0]))
    _close(to, eo)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    tg = torch.autograd.grad(to, [t1, t2], torch.tensor(up))
    eg = ember.autograd.grad(eo, [e1, e2], ember.tensor(up))
    _close(tg[0], eg[0])
    _close(tg[1], eg[1])
    with pytest.raises(ember.errors.ShapeError, match="contracted"):
        ember.tensordot(ember.randn(2, 3), ember.randn(4, 5), dims=([1], [0]))


@pytest.mark.parametrize("stride,padding,opad,dilation,groups", [
    ((3, 2), (1, 2), (2, 3), (4, 4), 2), ((2, 2), (1, 1), (1, 1), (1, 1), 1),
    ((2, 3), (0, 2), (1, 2), (1, 1), 1)])
def test_conv_transpose2d_output_padding(stride, padding, opad, dilation, groups):
    t, e = _pair((2, 2, 4, 4))
    tw, ew = _pair((2, 4 // groups, 4, 5))
    kw = dict(stride=stride, padding=padding, output_padding=opad, dilation=dilation,
              groups=groups)
    to = torch.nn.functional.conv_transpose2d(t, tw, **kw)
    eo = ember.nn.functional.conv_transpose2d(e, ew, **kw)
    _close(to, eo, 1e-4)
    up = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    tg = torch.autograd.grad(to, [t, tw], torch.tensor(up))
    eg = ember.autograd.grad(eo, [e, ew], ember.tensor(up))
    _close(tg[0], eg[0], 1e-3)
    _close(tg[1], eg[1], 1e-3)
