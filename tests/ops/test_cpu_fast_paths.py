"""The CPU's fast paths of issue 30 give what the general paths give: max/min/argmax/argmin
over many short rows (reduced by their transposed copy), relu's gradient by a float mask,
zeros by np.zeros, x[i] and basic keys without dispatch's layers (the same view: writes
reach the base, the version is shared)."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(128, 10), (4, 50, 3), (33, 1), (64, 32), (7, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_short_row_reductions_match_torch(shape, dtype):
    rng = np.random.default_rng(4)
    x = (rng.integers(-3, 4, shape) if dtype != "bool" else rng.integers(0, 2, shape))
    x = x.astype(dtype)                                   # many ties
    if dtype.startswith("float"):
        x.reshape(-1)[::7] = np.nan
    e, t = ember.tensor(x), torch.from_numpy(x)
    for keepdim in (False, True):
        for name in ("amax", "amin"):
            got = getattr(e, name)(dim=-1, keepdim=keepdim).numpy()
            want = getattr(t, name)(dim=-1, keepdim=keepdim).numpy()
            np.testing.assert_array_equal(got, want)
        if dtype != "bool":
            for name in ("argmax", "argmin"):
                got = getattr(e, name)(dim=-1, keepdim=keepdim).numpy()
                want = getattr(t, name)(dim=-1, keepdim=keepdim).numpy()
                np.testing.assert_array_equal(got, want)
            values, index = e.max(dim=-1, keepdim=keepdim)
            t_values, t_index = t.max(dim=-1, keepdim=keepdim)
            np.testing.assert_array_equal(values.numpy(), t_values.numpy())
            np.testing.assert_array_equal(index.numpy(), t_index.numpy())


def test_relu_gradient_passes_nan_and_stops_at_signed_zeros():
    x = np.array([[-1.0, -0.0, 0.0, 2.0, np.nan, np.inf]] * 3, dtype=np.float32)
    g = np.array([[1.0, -2.0, np.inf, 4.0, 5.0, -6.0]] * 3, dtype=np.float32)
    e = ember.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ember.relu(e).backward(ember.tensor(g))
    torch.relu(t).backward(torch.tensor(g))
    got, want = e.grad.numpy(), t.grad.numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_zero_fills_keep_dtype_and_sign():
    assert np.signbit(ember.full((2,), -0.0).numpy()).all()
    assert not np.signbit(ember.zeros(2).numpy()).any()
    for dtype in (ember.int8, ember.bool, ember.complex64, ember.bfloat16, ember.float64):
        z = ember.zeros(3, 2, dtype=dtype)
        assert z.dtype == dtype and tuple(z.shape) == (3, 2)
        assert not z.to(ember.float32 if dtype in (ember.bfloat16, ember.bool) else
                        dtype).numpy().any()


def _views_written_through(keys):
    """(base after writes through base[key] for each key, [(base version, view version)])."""
    base = ember.tensor(np.arange(24.0).reshape(4, 6))
    versions = []
    for key in keys:
        view = base[key]
        assert view._get_meta("base") is base
        view.mul_(2.0)                                   # writes reach the base
        versions.append((base._version, view._version))
    return base.numpy(), versions


KEYS = [2, -1, slice(1, 3), slice(None, None, 2), (slice(None), 1), (1, 2), (None, 0),
        (Ellipsis, 3), (-1, slice(2, 5)), (slice(3, 0, -1), slice(1, None, 2)), (0,),
        (slice(1, 3),), (-2, slice(None, None, -2))]


def test_untracked_views_are_the_views_dispatch_makes():
    from ember import dispatch
    fast = _views_written_through(KEYS)
    dispatch.add_hook("test_cpu_fast_paths", lambda *args: None)   # watched: the full path
    try:
        slow = _views_written_through(KEYS)
    finally:
        dispatch.remove_hook("test_cpu_fast_paths")
    np.testing.assert_array_equal(fast[0], slow[0])
    assert fast[1] == slow[1]
    want = np.arange(24.0).reshape(4, 6)
    for key in KEYS:
        want[key] *= 2.0
    np.testing.assert_array_equal(fast[0], want)
    # a view taken before its base requires grad, written after: refused either way, as
    # torch refuses it (the write would change the leaf behind autograd's back)
    for watched in (False, True):
        if watched:
            dispatch.add_hook("test_cpu_fast_paths", lambda *args: None)
        try:
            for lib, error in ((ember, ember.errors.AutogradError), (torch, RuntimeError)):
                base = lib.ones(3, 2)
                row = base[1]
                base.requires_grad_()
                with pytest.raises(error, match="view of a leaf Variable"):
                    row.mul_(3.0)
                with pytest.raises(error, match="view of a leaf Variable"):
                    row[0] = 2.0
                np.testing.assert_array_equal(base.detach().numpy(), np.ones((3, 2)))
        finally:
            dispatch.remove_hook("test_cpu_fast_paths")


@pytest.mark.parametrize("key", [(4, 0), (0, 6), (-5, 1), (1, -7)])
def test_untracked_int_keys_out_of_bounds_say_so_as_the_full_path(key):
    from ember import dispatch
    x = ember.zeros(4, 6)
    with pytest.raises(ember.errors.EmberIndexError) as fast:
        x[key]
    dispatch.add_hook("test_cpu_fast_paths", lambda *args: None)   # watched: the full path
    try:
        with pytest.raises(ember.errors.EmberIndexError) as slow:
            x[key]
    finally:
        dispatch.remove_hook("test_cpu_fast_paths")
    assert str(fast.value) == str(slow.value)
    with pytest.raises(IndexError):
        torch.zeros(4, 6)[key]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_log_softmax_kernel_is_its_decomposition(dtype):
    """log_softmax is one declared op: the CPU's kernel gives its decomposition's values
    bit for bit (half precision rounded per step as the decomposition's ops, and PyTorch's
    kernel, round), nan and inf rows included; off the CPU the decomposition runs."""
    from ember.ops.nn import _log_softmax_decompose
    rng = np.random.default_rng(5)
    cases = [((), 0), ((7,), 0), ((4, 9), 1), ((4, 9), 0), ((3, 5, 40), 2), ((3, 5, 40), 1),
             ((128, 10), 1), ((2, 3), -1)]
    for shape, dim in cases:
        x = (rng.standard_normal(shape) * 5).astype(np.float32)
        if len(shape) == 2 and shape[0] == 4:
            x[0, 1], x[1, :], x[2, 2] = np.inf, -np.inf, np.nan
        e = ember.tensor(x).to(dtype)
        got = ember.log_softmax(e, dim).float().numpy()
        want = _log_softmax_decompose(e, axis=dim % max(e.ndim, 1)).float().numpy()
        np.testing.assert_array_equal(got, want)
        tx = torch.tensor(e.float().numpy()).to(getattr(torch, dtype))
        np.testing.assert_allclose(got, torch.log_softmax(tx, dim).float().numpy(),
                                   rtol=1e-2 if e.dtype.itemsize == 2 else 1e-6,
                                   atol=0.02 if e.dtype.itemsize == 2 else 1e-6)


def test_log_softmax_gradients_match_torch():
    """First and second derivatives against torch's, from a random upstream gradient."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 11))
    g = rng.standard_normal((6, 11))
    e = ember.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    (ge,) = ember.autograd.grad(ember.log_softmax(e, 1), e, ember.tensor(g), create_graph=True)
    (gt,) = torch.autograd.grad(torch.log_softmax(t, 1), t, torch.tensor(g), create_graph=True)
    np.testing.assert_allclose(ge.detach().numpy(), gt.detach().numpy(), rtol=1e-10, atol=1e-12)
    (gge,) = ember.autograd.grad((ge * ge).sum(), e)
    (ggt,) = torch.autograd.grad((gt * gt).sum(), t)
    np.testing.assert_allclose(gge.numpy(), ggt.numpy(), rtol=1e-10, atol=1e-12)


def test_size_of_a_dim_as_torch():
    """size(d): the common int dims without norm_dim's checks, the rest through them; a
    0-d tensor has no dims to ask for (torch: IndexError)."""
    e, t = ember.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    for d in (0, 1, 2, -1, -3, np.int64(1)):
        assert e.size(d) == t.size(int(d))
    for bad in (3, -4):
        with pytest.raises(IndexError):
            e.size(bad)
    for d in (0, -1):
        with pytest.raises(IndexError):
            torch.zeros(()).size(d)
        with pytest.raises(ember.EmberError, match="0-d"):
            ember.zeros(()).size(d)
    assert ember.zeros(()).size() == torch.zeros(()).size()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_arg_reductions_and_max_with_dim_as_torch(dtype):
    """argmax/argmin over every dim or one, keepdim either way (dim=None with keepdim keeps
    every dim, as torch), and max/min(dim) with and without a gradient to route."""
    rng = np.random.default_rng(9)
    x = rng.integers(-2, 3, (4, 5, 6)).astype(dtype)           # ties everywhere
    if dtype.startswith("float"):
        x[0, 0, 0] = x[1, 2, 3] = np.nan
    e, t = ember.tensor(x), torch.from_numpy(x)
    for dim in (None, 0, 1, 2, -1):
        for keepdim in (False, True):
            for name in ("argmax", "argmin"):
                got = getattr(e, name)(dim, keepdim=keepdim)
                want = getattr(t, name)(dim, keepdim=keepdim)
                assert got.shape == tuple(want.shape)
                np.testing.assert_array_equal(got.numpy(), want.numpy())
            if dim is None:
                continue
            for name in ("max", "min"):
                for grad in ((False, True) if dtype.startswith("float") else (False,)):
                    src = e.detach().requires_grad_() if grad else e
                    v, i = getattr(src, name)(dim, keepdim)
                    tv, ti = getattr(t, name)(dim, keepdim)
                    np.testing.assert_array_equal(v.detach().numpy(), tv.numpy())
                    np.testing.assert_array_equal(i.numpy(), ti.numpy())
                    assert v.requires_grad == grad
