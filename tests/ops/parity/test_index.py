"""Indexing functions against PyTorch on cpu and opencl:0 (scatter, index_fill, masked_fill,
masked_select, gather, take_along_dim, searchsorted, bincount, index_put, masked_scatter,
scatter_reduce, the in-place forms): forward values and gradients."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import TOL, Rows, check_grad, check_parity, seeded, to_numpy

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("scatter", lambda T, a, i, s, j: (T.scatter(a, 1, i, s), a.scatter(1, i, 2.5),
                                       T.scatter(a, 0, j, s[:1, :3])),
     ("f", (3, 4)), ("perm", (3, 4)), ("f", (3, 4)), ("perm", (1, 3)))
case("index_fill", lambda T, a, i: (a.index_fill(1, i, -1.0), T.index_fill(a, 0, i[:1], 2.0)),
     ("f", (3, 4)), ("i", (2,), 3))
case("masked_fill_select", lambda T, a, m: (a.masked_fill(m, 0.5), T.masked_select(a, m),
                                            a.masked_fill(m, T.tensor(-1.0))),
     ("f", (3, 4)), ("b", (3, 4)))
case("gather", lambda T, a, i, j: (a.gather(1, i), T.gather(a, 0, j)),
     ("f", (3, 4)), ("perm", (3, 4)), ("i", (2, 4), 3))
case("take_along_dim_dist", lambda T, a, i: (T.take_along_dim(a, i, 1), T.dist(a, a * 0.5),
                                             a.dist(a + 1, 1)), ("f", (3, 4)), ("perm", (3, 4)))
case("search_count", lambda T, s, v, i: (T.searchsorted(s, v), T.bucketize(v, s, right=True),
                                         T.bincount(i), T.bincount(i, minlength=9)),
     ("v", (5,), (-1.0, 0.0, 0.5, 2.0, 3.0)), ("f", (3, 4)), ("i", (7,), 6), grad=False)
case("inplace_forms", lambda T, a, i: (
    a.clone().fill_diagonal_(2.0), a.clone().scatter_(1, i, 2.5),
    a.clone().index_fill_(1, i[0, :2], -1.0), a.clone().tril_(), a.clone().clamp_(-0.5, 0.5),
    a.clone().masked_fill_(a > 0, 0.0), a.clone().exp2_(),
    *T.where(a > 0)), ("f", (3, 4)), ("perm", (3, 4)))
case("index_put", lambda T, a, v: (
    a.clone().index_put_((T.tensor([0, 2]), T.tensor([1, 3])), v[:2]),
    a.clone().index_put_((T.tensor([0, 0, 2]), T.tensor([1, 1, 3])), v[:3], accumulate=True),
    a.clone().index_put_((T.tensor([1, 1]),), v[:4], accumulate=True),
    a.clone().index_put_((a > 0,), T.tensor(7.0)),
    a.index_put((T.tensor([2]),), v[:4])), ("f", (3, 4)), ("f", (4,)), grad_tol=1e-5)
case("masked_scatter", lambda T, a, m, s: (a.masked_scatter(m, s), a.clone().masked_scatter_(
    m[0], s[:4] * 2), T.masked_scatter(a, m, s)), ("f", (3, 4)), ("b", (3, 4)), ("f", (3, 5)),
     grad_tol=1e-5)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "sum", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(device, reduce, include_self):
    rng = seeded("scatter_reduce" + reduce)
    inp = rng.standard_normal((4, 5))
    src = rng.standard_normal((6, 5))
    idx = rng.integers(0, 3, (6, 5))
    fe = lambda i, s: i.scatter_reduce(0, ember.tensor(idx, device=device), s, reduce,  # noqa: E731
                                       include_self=include_self)
    ft = lambda i, s: i.scatter_reduce(0, torch.tensor(idx), s, reduce,  # noqa: E731
                                       include_self=include_self)
    got = to_numpy(fe(ember.tensor(inp, device=device), ember.tensor(src, device=device)))
    np.testing.assert_allclose(got, ft(torch.tensor(inp), torch.tensor(src)).numpy(),
                               **TOL["float64"])
    check_grad("sr" + reduce, fe, ft, [inp, src], device, TOL["float64"])
    ii = rng.integers(-3, 4, (3, 4))
    si = rng.integers(-3, 4, (5, 4))
    ix = rng.integers(0, 3, (5, 4))
    got = to_numpy(ember.tensor(ii, device=device).scatter_reduce(
        0, ember.tensor(ix, device=device), ember.tensor(si, device=device), reduce,
        include_self=include_self)) if reduce != "mean" else None
    if got is not None:
        want = torch.tensor(ii).scatter_reduce(0, torch.tensor(ix), torch.tensor(si), reduce,
                                               include_self=include_self).numpy()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
def test_masked_fill_takes_complex_values_as_torch(dtype):
    # a real tensor takes a complex value (Python or 0-d tensor) only without an imaginary
    # part; with one, torch raises "value cannot be converted ... without overflow" (ember
    # dropped the imaginary part of a tensor value silently)
    mask = [True, False]
    for value in (1j, 1 + 0j, 2.5, True):
        for as_tensor in (False, True):
            results = []
            for lib in (ember, torch):
                x = lib.zeros(2, dtype=getattr(lib, dtype))
                v = lib.tensor(value) if as_tensor else value
                try:
                    results.append(to_numpy(x.masked_fill(lib.tensor(mask), v)))
                except (ember.EmberError, RuntimeError) as exc:
                    assert "without overflow" in str(exc)
                    results.append("raises")
            if isinstance(results[1], str):
                assert results[0] == "raises", (value, as_tensor)
            else:
                np.testing.assert_array_equal(results[0], results[1])
