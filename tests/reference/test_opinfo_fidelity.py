"""Regression tests for the second round of OpInfo fixes (issue 26 part 1): Python numbers
torch's functions refuse, out= written as torch writes it, and the names added from op_db.
Each against torch; the checks that do not depend on a device run on the CPU only."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.errors import EmberWarning  # noqa: E402

RNG = np.random.default_rng(2626)


def _close(t, e, tol=1e-5):
    assert tuple(t.shape) == tuple(e.shape), (tuple(t.shape), tuple(e.shape))
    np.testing.assert_allclose(e.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                               atol=tol)


# torch's binary functions refuse a Python number as `input`; those without a number
# overload refuse one as `other` too (ember used to answer)
@pytest.mark.parametrize("name,number_other_ok", [
    ("eq", True), ("ne", True), ("lt", True), ("ge", True), ("greater", True),
    ("maximum", False), ("minimum", False), ("logical_and", False), ("logical_xor", False),
    ("atan2", False), ("hypot", False), ("logaddexp", False), ("fmax", False),
    ("fmin", False), ("isclose", False), ("heaviside", False), ("fmod", True),
    ("clamp_min", True)])
def test_python_numbers_torch_refuses(name, number_other_ok):
    t = torch.tensor([1.0, 2.0, 3.0])
    e = ember.tensor([1.0, 2.0, 3.0])
    with pytest.raises((TypeError, RuntimeError)):
        getattr(torch, name)(2, t)
    with pytest.raises(ember.EmberError, match=name):
        getattr(ember, name)(2, e)
    if number_other_ok:
        _close(getattr(torch, name)(t, 2), getattr(ember, name)(e, 2))
    else:
        with pytest.raises((TypeError, RuntimeError)):
            getattr(torch, name)(t, 2)
        with pytest.raises(ember.EmberError, match=name):
            getattr(ember, name)(e, 2)
    # ember's own code (and the methods' other argument where torch takes a number) is
    # untouched: operators and the tensor-tensor form still answer
    _close(getattr(torch, name)(t, t), getattr(ember, name)(e, e))


def test_two_numbers_and_negative_tolerances_refused():
    with pytest.raises(ember.EmberError, match="max"):
        ember.max(2, ember.tensor([1.0, 3.0]))
    with pytest.raises(ember.EmberError, match="xlogy"):
        ember.xlogy(2, 3)
    with pytest.raises(ember.EmberError, match="float_power"):
        ember.float_power(2, 3)
    _close(torch.xlogy(2, torch.tensor([1.0, 3.0])), ember.xlogy(2, ember.tensor([1.0, 3.0])))
    e = ember.tensor(1.0)
    for kw in ({"rtol": -0.4}, {"atol": -0.4}):
        with pytest.raises(ember.EmberError, match="greater than or equal to zero"):
            ember.isclose(e, e, **kw)


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh",
                                  "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                                  "arctanh"])
def test_inverse_trigonometric(name):
    a = RNG.uniform(-0.9, 0.9, (7,)).astype(np.float32)
    if name.endswith("acosh") or name == "arccosh":
        a = a + 2.0
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    to, eo = getattr(torch, name)(t), getattr(ember, name)(e)
    _close(to, eo)
    to.sum().backward()
    eo.sum().backward()
    _close(t.grad, e.grad)
    _close(getattr(t.detach().clone(), name + "_")(), getattr(e.detach().clone(), name + "_")())


# out=: written into the given tensor as torch writes it, with torch's checks
def test_out_is_written_and_returned():
    a, b = np.ones((2, 3), np.float32), np.full((1, 3), 2.0, np.float32)
    out = ember.empty((3, 3))
    got = ember.cat([ember.tensor(a), ember.tensor(b)], out=out)
    assert got is out
    np.testing.assert_array_equal(out.numpy(), torch.cat([torch.tensor(a),
                                                          torch.tensor(b)]).numpy())
    x = ember.tensor([[3.0, 1.0], [2.0, 5.0]])
    out = ember.empty(0)                  # an empty out is resized silently, as torch's
    ember.amax(x, 0, out=out)
    np.testing.assert_array_equal(out.numpy(), [3.0, 5.0])
    with pytest.warns(EmberWarning, match="resized"):
        ember.gather(x, 1, ember.tensor([[1], [0]]), out=ember.empty(5))
    vals, idx = ember.empty(()), ember.empty((), dtype=ember.int64)
    res = ember.kthvalue(ember.tensor([4.0, 1.0, 3.0]), 2, out=(vals, idx))
    assert res[0] is vals and res[1] is idx and vals.item() == 3.0 and idx.item() == 2
    out = ember.empty(4, dtype=ember.int64)
    ember.arange(4, out=out)
    assert out.tolist() == [0, 1, 2, 3]


def test_out_checks_as_torch():
    x = ember.tensor([[3.0, 1.0], [2.0, 5.0]])
    with pytest.raises(ember.EmberError, match="dtype"):
        ember.amax(x, 0, out=ember.empty(2, dtype=ember.int32))
    with pytest.raises(ember.EmberError, match="dtype"):
        ember.aminmax(x, dim=0, out=(ember.empty(2), ember.empty(2, dtype=ember.float64)))
    with pytest.raises(ember.EmberError, match="one of the inputs"):
        ember.take(x, ember.tensor([0, 1]), out=x)
    with pytest.raises(ember.EmberError, match="single memory location"):
        ember.index_select(x, 0, ember.tensor([1, 0]), out=ember.zeros(1, 2).expand(2, 2))
    with pytest.raises(ember.EmberError, match="automatic differentiation"):
        ember.cat([x.clone().requires_grad_()], out=ember.empty(2, 2))
    with pytest.raises(ember.EmberError, match="nonzero"):
        ember.arange(0, 64, 0.5, out=ember.empty(0, dtype=ember.int64))
    with pytest.raises(ember.EmberError, match="tuple or list"):
        ember.cat(x)


def test_zero_dim_and_empty_index():
    t, e = torch.tensor(2.5), ember.tensor(2.5)
    _close(torch.index_select(t, 0, torch.tensor([0])),
           ember.index_select(e, 0, ember.tensor([0])))
    _close(torch.index_fill(t, 0, torch.tensor([0]), -1.0),
           ember.index_fill(e, 0, ember.tensor([0]), -1.0))
    v = np.arange(5, dtype=np.float32)
    _close(torch.gather(torch.tensor(v), 0, torch.zeros(2, 0, dtype=torch.int64)),
           ember.gather(ember.tensor(v), 0, ember.zeros(2, 0, dtype=ember.int64)))


def test_view_functions_refuse_as_torch():
    e3 = ember.zeros(2, 2, 2)
    with pytest.raises(ember.EmberError, match="0-dim"):
        ember.narrow(ember.tensor(1.0), 0, 0, 1)
    with pytest.raises(ember.EmberError, match="<= 2"):
        e3.t()
    with pytest.raises(ember.EmberError, match="no dimensions"):
        ember.unbind(ember.tensor(1.0))
    with pytest.raises(ember.EmberError, match="divisible"):
        ember.hsplit(ember.zeros(2, 5), 2)


def test_torch_signature_slice_scatter_and_view_scatters():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    src = RNG.standard_normal((4, 2)).astype(np.float32)
    _close(torch.slice_scatter(torch.tensor(a), torch.tensor(src), 1, 1, 5, 2),
           ember.slice_scatter(ember.tensor(a), ember.tensor(src), 1, 1, 5, 2))
    d = RNG.standard_normal((4,)).astype(np.float32)
    t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    to = torch.diagonal_scatter(t, torch.tensor(d), 1)
    eo = ember.diagonal_scatter(e, ember.tensor(d), 1)
    _close(to, eo)
    to.pow(2).sum().backward()
    eo.pow(2).sum().backward()
    _close(t.grad, e.grad)
    _close(torch.as_strided(torch.tensor(a), (3, 2), (2, 5), 1),
           ember.as_strided(ember.tensor(a), (3, 2), (2, 5), 1))


def test_sampling_parameters_refused_as_torch():
    x = ember.empty(4)
    for call in (lambda: x.cauchy_(0.0, 0.0), lambda: x.exponential_(0.0),
                 lambda: x.geometric_(0.0), lambda: x.log_normal_(1.0, 0.0),
                 lambda: x.normal_(0.0, -1.0), lambda: x.uniform_(1.0, 0.0)):
        with pytest.raises(ember.EmberError, match="expects"):
            call()


def test_nan_reductions_and_cov():
    a = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan],
                  [0.5, 2.0, 4.0, 1.0]], np.float32)
    t, e = torch.tensor(a), ember.tensor(a)
    _close(torch.nansum(t, 1), ember.nansum(e, 1))
    _close(torch.nanmean(t, 1), ember.nanmean(e, 1))
    tv, ti = torch.nanmedian(t, 1)
    ev, ei = ember.nanmedian(e, 1)
    _close(tv, ev)
    np.testing.assert_array_equal(ti.numpy()[[0, 2]], ei.numpy()[[0, 2]])
    b = RNG.standard_normal((3, 5)).astype(np.float32)
    w = np.array([1, 2, 1, 3, 1])
    _close(torch.cov(torch.tensor(b), fweights=torch.tensor(w)),
           ember.cov(ember.tensor(b), fweights=ember.tensor(w)))


@pytest.mark.parametrize("name,kw", [("hann", {}), ("hamming", {"sym": False}),
                                     ("kaiser", {"beta": 3.0}), ("gaussian", {"std": 0.7}),
                                     ("exponential", {"tau": 2.0}), ("nuttall", {}),
                                     ("cosine", {"sym": False}), ("bartlett", {})])
def test_signal_windows(name, kw):
    _close(getattr(torch.signal.windows, name)(9, **kw),
           getattr(ember.signal.windows, name)(9, **kw))


def test_bessel_i_family():
    a = np.array([-30.0, -7.5, -1.0, 0.0, 0.3, 4.0, 19.0, 25.0], np.float32)
    t, e = torch.tensor(a, dtype=torch.float64), ember.tensor(a, dtype=ember.float64)
    for name in ("i0e", "i1", "i1e"):
        _close(getattr(torch.special, name)(t), getattr(ember.special, name)(e), 1e-6)
    _close(torch.i0(t), ember.i0(e), 1e-6)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u",
                                  "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                                  "shifted_chebyshev_polynomial_t", "hermite_polynomial_h",
                                  "laguerre_polynomial_l", "legendre_polynomial_p"])
def test_orthogonal_polynomials(name):
    x = np.array([-1.0, -0.5, 0.0, 0.3, 1.0, 2.5, -3.0, 0.99], np.float32)
    n = np.array([0, 1, 2, 3, 4, 5, 9, 12], np.float32)
    _close(getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)),
           getattr(ember.special, name)(ember.tensor(x), ember.tensor(n)), 1e-4)
    with pytest.raises(ember.EmberError, match="two numbers"):
        getattr(ember.special, name)(0.5, 2)


@pytest.mark.parametrize("name,kw", [("sum", {"dim": 1}), ("prod", {"dim": 0}),
                                     ("amax", {}), ("amin", {"dim": 1}), ("argmax", {"dim": 1}),
                                     ("mean", {"dim": 1}), ("logsumexp", {"dim": 1}),
                                     ("softmax", {"dim": 1}), ("softmin", {"dim": 0}),
                                     ("log_softmax", {"dim": 1}), ("cumsum", {"dim": 1}),
                                     ("cumprod", {"dim": 0})])
def test_masked(name, kw):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    m = a > -0.3
    m[:, 0] = True
    got = getattr(ember.masked, name)(ember.tensor(a), mask=ember.tensor(m), **kw)
    want = getattr(torch.masked, name)(torch.tensor(a), mask=torch.tensor(m), **kw)
    _close(want, got)


def test_adaptive_max_pool2d_return_indices():
    a = RNG.standard_normal((2, 3, 7, 5)).astype(np.float32)
    t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    tv, ti = torch.nn.functional.adaptive_max_pool2d(t, (3, 2), return_indices=True)
    ev, ei = ember.nn.functional.adaptive_max_pool2d(e, (3, 2), return_indices=True)
    _close(tv, ev)
    np.testing.assert_array_equal(ti.numpy(), ei.numpy())
    tv.sum().backward()
    ev.sum().backward()
    _close(t.grad, e.grad)
    mv, mi = ember.nn.AdaptiveMaxPool2d(2, return_indices=True)(e)
    assert tuple(mi.shape) == (2, 3, 2, 2)
    with pytest.raises(ember.EmberError, match="output_size must be 2"):
        ember.nn.functional.adaptive_avg_pool2d(e, ())
    with pytest.raises(ember.EmberError, match="2-D"):
        ember.nn.functional.embedding(ember.tensor([[0, 1]]), ember.tensor(1.0))


def test_argument_checks_as_torch():
    F = ember.nn.functional
    x = ember.zeros(3, 5, dtype=ember.float64)
    cases = [
        (lambda: F.hardtanh(ember.zeros(1), 0.5, -0.5), "min_val"),
        (lambda: F.prelu(ember.zeros(2, 8, 3), ember.zeros(2, 4)), "1D"),
        (lambda: ember.linalg.cross(ember.zeros(5, 3), ember.zeros(5, 1)), "length 3"),
        (lambda: ember.linalg.cross(ember.zeros(5, 5, 3), ember.zeros(5, 3)), "same number"),
        (lambda: ember.rot90(ember.zeros(5, 5), 1, [0]), "rotation dims"),
        (lambda: ember.rot90(ember.zeros(5, 5), 1, [1, 1]), "different"),
        (lambda: ember.roll(ember.tensor(1.0), 0, 0), "no dimensions"),
        (lambda: ember.bucketize(ember.zeros(5), ember.zeros(5, 5)), "1 dimension"),
        (lambda: ember.index_add(ember.zeros(3, 2), 0, ember.tensor([0, 1]), ember.zeros(2)),
         "source tensor shape"),
        (lambda: ember.zeros(2, 2).masked_fill(ember.tensor(True), ember.zeros(1)),
         "0-dimensional"),
        (lambda: ember.scatter(x, 0, ember.zeros(2, 2, dtype=ember.int64), ember.zeros(2, 5)),
         "src.dtype"),
        (lambda: ember.scatter_add(x, 0, ember.zeros(2, 2, dtype=ember.int64),
                                   ember.zeros(2, 5)), "src.dtype"),
        (lambda: F.avg_pool2d(ember.zeros(3, 3, 3), [2, 2], divisor_override=0), "not zero"),
        (lambda: F.max_pool1d(ember.zeros(0, 10), 1), "2D or 3D"),
        (lambda: F.conv1d(ember.zeros(1, 1, 4), ember.zeros(1, 1, 2, dtype=ember.float64)),
         "should be the same"),
    ]
    for call, match in cases:
        with pytest.raises(ember.EmberError, match=match):
            call()
    # one value stands for both dims of a 2-d pool's stride, as torch's
    a = RNG.standard_normal((1, 2, 6, 6)).astype(np.float32)
    _close(torch.nn.functional.avg_pool2d(torch.tensor(a), 2, stride=(1,)),
           F.avg_pool2d(ember.tensor(a), 2, stride=(1,)))


def test_linspace_arguments_as_torch():
    with pytest.raises(ember.EmberError, match="steps"):
        ember.linspace(0, 3, 1.0)
    with pytest.raises(ember.EmberError, match="0-dimensional"):
        ember.logspace(ember.tensor([0, 1]), ember.tensor([2, 3]), 1)
    _close(torch.linspace(torch.tensor(0.0), torch.tensor(2.0), 5),
           ember.linspace(ember.tensor(0.0), ember.tensor(2.0), 5))


@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
def test_linear_algebra_additions():
    a = RNG.standard_normal((4, 4)).astype(np.float32)
    spd = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    L = np.linalg.cholesky(spd).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    tL, eL, tb, eb = torch.tensor(L), ember.tensor(L), torch.tensor(b), ember.tensor(b)
    _close(torch.cholesky_inverse(tL), ember.cholesky_inverse(eL), 1e-4)
    _close(torch.cholesky_solve(tb, tL), ember.cholesky_solve(eb, eL), 1e-4)
    _close(torch.triangular_solve(tb, tL, upper=False)[0],
           ember.triangular_solve(eb, eL, upper=False)[0], 1e-4)
    _close(torch.linalg.solve_triangular(tL, tb, upper=False),
           ember.linalg.solve_triangular(eL, eb, upper=False), 1e-4)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    _close(torch.linalg.vander(torch.tensor(x), N=4), ember.linalg.vander(ember.tensor(x), N=4))
    t6 = RNG.standard_normal((2, 3, 6)).astype(np.float32)
    _close(torch.linalg.tensorinv(torch.tensor(t6), 2),
           ember.linalg.tensorinv(ember.tensor(t6), 2), 1e-3)


def test_isin_unravel_mvlgamma():
    e = np.array([1, 2, 3, 4, 5])
    _close(torch.isin(torch.tensor(e), torch.tensor([2, 5])),
           ember.isin(ember.tensor(e), ember.tensor([2, 5])))
    for t, m in zip(torch.unravel_index(torch.tensor([7, 11, -1]), (3, 4)),
                    ember.unravel_index(ember.tensor([7, 11, -1]), (3, 4))):
        _close(t, m)
    x = np.array([2.5, 3.0, 7.2], np.float32)
    _close(torch.mvlgamma(torch.tensor(x), 3), ember.mvlgamma(ember.tensor(x), 3), 1e-4)
    with pytest.raises(ember.EmberError, match="greater than"):
        ember.mvlgamma(ember.tensor([0.5]), 3)


def test_nn_functional_additions():
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    for p in (2.0, 1.0, 0.0):
        to, eo = torch.nn.functional.pdist(t, p), ember.nn.functional.pdist(e, p)
        _close(to, eo)
        (tg,), (eg,) = torch.autograd.grad(to.sum(), [t]), ember.autograd.grad(eo.sum(), [e])
        _close(tg, eg)
    b = RNG.standard_normal((2, 6, 4)).astype(np.float32)
    _close(torch.nn.functional.channel_shuffle(torch.tensor(b), 3),
           ember.nn.functional.channel_shuffle(ember.tensor(b), 3))
    x = ember.ones(4, 3, 5)
    out = ember.nn.functional.alpha_dropout(x, 0.3, training=True)
    assert tuple(out.shape) == (4, 3, 5)
    kept = out.numpy()
    # kept elements are a * x + a * alpha * p, dropped ones a * -alpha + a * alpha * p
    assert len(np.unique(np.round(kept, 5))) <= 2
    f = ember.nn.functional.feature_alpha_dropout(x, 0.5, training=True).numpy()
    assert (np.ptp(f, axis=2) < 1e-6).all()          # whole channels share one value
    assert ember.nn.functional.alpha_dropout(x, 0.3) is x      # training=False by default


def test_matrix_rank():
    a = RNG.standard_normal((3, 5, 2)).astype(np.float32)
    m = a @ a.transpose(0, 2, 1)                      # rank 2 in 5 x 5
    assert ember.linalg.matrix_rank(ember.tensor(m)).tolist() == \
        torch.linalg.matrix_rank(torch.tensor(m)).tolist() == [2, 2, 2]
    assert ember.linalg.matrix_rank(ember.tensor(m), hermitian=True, atol=1.0).tolist() == \
        torch.linalg.matrix_rank(torch.tensor(m), hermitian=True, atol=1.0).tolist()
