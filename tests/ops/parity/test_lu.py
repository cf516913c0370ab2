"""The LU family against PyTorch on cpu and opencl:0: what torch's OpInfo samples miss
(singular and rank-deficient matrices, ties and nan in the pivot search, batches whose
matrices pivot differently, second derivatives) and the errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")

L, TL = ember.linalg, torch.linalg

# each one factors with zero pivots, ties or nan: U's zero diagonal entry, the first of
# equal candidates, a nan picked only where it comes first (LAPACK's getrf and idamax)
SPECIAL = {
    "zeros": np.zeros((3, 3)),
    # exact in binary (torch's LAPACK rounds with fused multiply-adds, NumPy without: a
    # multiplier like 2/3 would leave 1e-16 where the other has 0)
    "rank_one": np.outer([1.0, 2.0, 4.0], [1.0, -1.0, 2.0]),
    "zero_column": np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 1.0, 1.0]]),
    "ties": np.array([[1.0, 2.0, 0.0], [-1.0, 1.0, 1.0], [1.0, 0.0, 3.0]]),
    "nan_first": np.array([[np.nan, 1.0], [4.0, 3.0]]),
    "nan_later": np.array([[1.0, 1.0], [np.nan, 3.0]]),
    "inf": np.array([[1.0, np.inf], [2.0, 3.0]]),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_lu_factor_ex_special_matrices(device, name):
    a = SPECIAL[name]
    e = L.lu_factor_ex(ember.tensor(a, device=device))
    t = TL.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(e.LU.numpy(), t.LU.numpy(), rtol=1e-12, atol=0)
    assert e.pivots.dtype == ember.int32 and e.info.dtype == ember.int32
    p, lower, upper = L.lu(ember.tensor(a, device=device))
    tp, tl, tu = TL.lu(torch.tensor(a))
    for x, y in ((p, tp), (lower, tl), (upper, tu)):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=0)


def test_batched_pivots_differ_per_matrix(device):
    rng = seeded("lu_batch")
    a = rng.standard_normal((2, 3, 4, 4))
    a[0, 1] = SPECIAL["ties"].repeat(2, 0)[:4, [0, 1, 2, 0]]
    e = L.lu_factor_ex(ember.tensor(a, device=device))
    t = TL.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(e.LU.numpy(), t.LU.numpy(), rtol=1e-10, atol=1e-12)
    assert len({tuple(p) for p in e.pivots.numpy().reshape(-1, 4)}) > 1


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_gradients_and_second_derivatives(device, shape):
    a = seeded(f"lu_grad{shape}").standard_normal(shape)
    e = ember.tensor(a, device=device, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x: L.lu_factor(x).LU, (e,))
    assert ember.autograd.gradgradcheck(lambda x: tuple(L.lu(x))[1:], (e,))
    t = torch.tensor(a, requires_grad=True)
    up = seeded(f"lu_up{shape}").standard_normal(shape)
    (ge,) = ember.autograd.grad((L.lu_factor(e).LU * ember.tensor(up, device=device)).sum(),
                                e)
    (gt,) = torch.autograd.grad((TL.lu_factor(t).LU * torch.tensor(up)).sum(), t)
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False),
                                          (False, True)])
def test_lu_solve_broadcasts_batches(device, left, adjoint):
    rng = seeded(f"lu_solve{left}{adjoint}")
    a = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3, 2) if left else (4, 2, 3))
    lu, piv = TL.lu_factor(torch.tensor(a))
    want = TL.lu_solve(lu, piv, torch.tensor(b), left=left, adjoint=adjoint)
    elu, epiv = L.lu_factor(ember.tensor(a, device=device))
    got = L.lu_solve(elu, epiv, ember.tensor(b, device=device), left=left, adjoint=adjoint)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    old = ember.lu_solve(ember.tensor(b if left else b.swapaxes(-1, -2), device=device),
                         elu, epiv)
    assert old.shape == (2, 4, 3, 2)


def test_legacy_forms_and_methods(device):
    a = SPECIAL["zeros"]
    x = ember.tensor(a, device=device)
    lu, piv = ember.lu(x)                      # torch.lu never raises for a singular matrix
    _, _, info = ember.lu(x, get_infos=True)
    assert int(info) == 1 and x.lu()[1].tolist() == piv.tolist() == [1, 2, 3]
    p, lower, upper = ember.lu_unpack(lu, piv, unpack_data=False)
    assert lower.numel() == 0 and upper.numel() == 0 and p.shape == (3, 3)
    p, lower, upper = ember.lu_unpack(lu, piv, unpack_pivots=False)
    assert p.numel() == 0 and lower.shape == (3, 3)
    assert L.lu_factor(x + 3 * ember.eye(3, dtype=x.dtype, device=device))._fields == \
        ("LU", "pivots")


def test_errors(device):
    x = ember.tensor(SPECIAL["rank_one"], device=device)
    with pytest.raises(ember.EmberError, match=r"U\[1,1\] == 0.*lu_factor_ex"):
        L.lu_factor(x)
    with pytest.raises(ember.EmberError, match="batch element 1"):
        L.lu_factor(ember.stack([ember.eye(3, device=device, dtype=x.dtype), x]))
    with pytest.raises(ember.EmberError, match="check_errors=False"):
        L.lu_factor_ex(x, check_errors=True)
    with pytest.raises(ember.EmberError, match="pivot=True"):
        L.lu(x, pivot=False)
    with pytest.raises(ember.EmberError, match="floating point"):
        L.lu_factor(ember.ones(3, 3, dtype=ember.int64, device=device))
    with pytest.raises(ember.EmberError, match=r"\(\*, m, n\)"):
        L.lu_factor(ember.ones(3, device=device))
    lu, piv = L.lu_factor(x + 3 * ember.eye(3, dtype=x.dtype, device=device))
    with pytest.raises(ember.EmberError, match="int32"):
        L.lu_solve(lu, piv.long(), ember.ones(3, 1, dtype=x.dtype, device=device))
    with pytest.raises(ember.EmberError, match="at least 2 dimensions"):
        L.lu_solve(lu, piv, ember.ones(3, dtype=x.dtype, device=device))
    with pytest.raises(ember.EmberError, match="one dtype"):
        L.lu_solve(lu, piv, ember.ones(3, 1, device=device))
    with pytest.raises(ember.EmberError, match="between 1 and"):
        ember.lu_unpack(lu, ember.tensor([4, 1, 1], dtype=ember.int32, device=device))


# past one panel of the blocked LU (32 columns), tall, wide and batched; float64 so that the
# pivot choice is not decided by rounding; complex sizes are |re| + |im|
LARGE = [((70, 70), "float64"), ((80, 45), "float64"), ((45, 80), "float64"),
         ((3, 40, 40), "float64"), ((40, 40), "complex128"), ((2, 33, 33), "float32"),
         ((200, 3, 3), "float64")]   # the last: many small matrices (whole-batch steps)


def _random(name, shape, dtype):
    rng = seeded(name)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("shape,dtype", LARGE)
def test_lu_factor_past_one_panel(device, shape, dtype):
    a = _random(f"lu_large{shape}", shape, dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    e = L.lu_factor_ex(ember.tensor(a, device=device))
    t = TL.lu_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
    np.testing.assert_allclose(e.LU.numpy(), t.LU.numpy(), **tol)
    b = _random(f"lu_large_b{shape}", (*shape[:-1], 3), dtype)
    if shape[-1] == shape[-2]:
        for adjoint in (False, True):
            got = L.lu_solve(e.LU, e.pivots, ember.tensor(b, device=device), adjoint=adjoint)
            want = TL.lu_solve(t.LU, t.pivots, torch.tensor(b), adjoint=adjoint)
            np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)


@pytest.mark.parametrize("shape,dtype", LARGE)
def test_array_api_blocked_lu(shape, dtype):
    """array_api's blocked LU itself (the CPU takes LAPACK's where SciPy is installed)."""
    from ember.backends import array_api
    a = _random(f"lu_large{shape}", shape, dtype)
    m, n = shape[-2:]
    packed = array_api._lu(np, a)
    t = TL.lu_factor_ex(torch.tensor(a))
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(packed[..., :m, :n], t.LU.numpy(), **tol)
    np.testing.assert_array_equal(packed[..., m, :min(m, n)], t.pivots.numpy())
    np.testing.assert_array_equal(packed[..., m, n], t.info.numpy())
    if m == n:
        b = _random(f"lu_large_b{shape}", (*shape[:-1], 3), dtype)
        pivots = packed[..., m, :n].real.astype(np.int32)
        for adjoint in (False, True):
            got = array_api._lu_solve(np, packed[..., :m, :n], pivots, b, adjoint)
            want = TL.lu_solve(t.LU, t.pivots, torch.tensor(b), adjoint=adjoint)
            np.testing.assert_allclose(got, want.numpy(), **tol)


def test_lu_solve_gradients(device):
    rng = seeded("lu_solve_grad")
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2))
    lu, piv = L.lu_factor(ember.tensor(a, device=device))
    x = ember.tensor(lu.numpy(), device=device, requires_grad=True)
    y = ember.tensor(b, device=device, requires_grad=True)
    for adjoint in (False, True):
        assert ember.autograd.gradcheck(
            lambda f, r, adjoint=adjoint: L.lu_solve(f, piv, r, adjoint=adjoint), (x, y))
    tlu = torch.tensor(lu.numpy(), requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    up = rng.standard_normal((2, 3, 2))
    (TL.lu_solve(tlu, torch.tensor(piv.numpy()), tb) * torch.tensor(up)).sum().backward()
    (L.lu_solve(x, piv, y) * ember.tensor(up, device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tlu.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), tb.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_pivots_past_what_it_counts_exactly(dtype):
    """300 rows: past 256 (bfloat16's exact integers); factored in float32, LU rounded back
    (torch refuses half precision LU on the CPU)."""
    a = seeded("lu_half").standard_normal((300, 300))
    x = ember.tensor(a, dtype=getattr(ember, dtype))
    e, f = L.lu_factor_ex(x), L.lu_factor_ex(x.float())
    assert e.LU.dtype == x.dtype
    np.testing.assert_array_equal(e.pivots.numpy(), f.pivots.numpy())
    np.testing.assert_array_equal(e.LU.float().numpy(), f.LU.to(x.dtype).float().numpy())
    s = x + x.mT
    np.testing.assert_array_equal(L.ldl_factor_ex(s).pivots.numpy(),
                                  L.ldl_factor_ex(s.float()).pivots.numpy())


@pytest.mark.parametrize("batch", [(), (200,)])    # (200,): the CPU's whole-batch kernel
def test_lu_solve_of_a_singular_matrix_gives_inf_and_nan(device, batch):
    """getrs divides by U's zero: inf and nan where torch's are, no error."""
    a = np.broadcast_to(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
                        (*batch, 3, 3))
    b = np.broadcast_to(np.arange(6.0).reshape(3, 2), (*batch, 3, 2))
    t = TL.lu_factor_ex(torch.tensor(a))
    e = L.lu_factor_ex(ember.tensor(a, device=device))
    for adjoint in (False, True):
        want = TL.lu_solve(t.LU, t.pivots, torch.tensor(b), adjoint=adjoint).numpy()
        got = L.lu_solve(e.LU, e.pivots, ember.tensor(b, device=device), adjoint=adjoint)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_array_api_blocked_lu_standard_only():
    """The standard's path (rows swapped by a gather: array_api_strict has no integer-array
    setitem) past one panel, batched, against NumPy's (integer indexing)."""
    xp = pytest.importorskip("array_api_strict")
    from ember.backends import array_api
    a = _random("lu_strict", (3, 40, 36), "float64")
    np.testing.assert_array_equal(np.asarray(array_api._lu(xp, xp.asarray(a))),
                                  array_api._lu(np, a))
