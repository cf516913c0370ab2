"""tensor_split, diff, heaviside, tril/triu_indices, round(decimals), cummax/cummin, aminmax,
bit operations, index_put_, masked_scatter, tensor-form normal and WeightedRandomSampler,
against PyTorch: forward values and gradients (random upstream gradient) on cpu and opencl:0."""
from __future__ import annotations

import zlib
from collections import Counter

import ember
import numpy as np
import pytest
from ember.utils.data import WeightedRandomSampler
from parity_helpers import Rows, check_parity

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("clone", lambda T, a: (T.clone(a) * 2,), ("f", (2, 3)), grad_tol=1e-5)
case("tensor_split:sections", lambda T, a: T.tensor_split(a, 3, dim=1), ("f", (2, 7)),
     grad_tol=1e-5)
case("tensor_split:indices", lambda T, a: (*T.tensor_split(a, [1, 5, 9]),
                                           *a.tensor_split([4, 2])), ("f", (7, 2)),
     grad_tol=1e-5)
case("tensor_split:tensor", lambda T, a: T.tensor_split(a, T.tensor([2, -1]), 0), ("f", (5,)),
     grad_tol=1e-5)
case("diff", lambda T, a, p, q: (T.diff(a), T.diff(a, n=2, dim=0, prepend=p, append=q),
                                 a.diff(dim=0)), ("f", (3, 4)), ("f", (1, 4)), ("f", (2, 4)),
     grad_tol=1e-5)
case("diff:bool", lambda T, b: (T.diff(b, dim=1),), ("b", (3, 5)), grad=False)
case("heaviside", lambda T, a, v: (T.heaviside(a, v), a.heaviside(v)),
     ("v", (5,), [-1.0, 0.0, 2.0, 0.0, -0.0]), ("f", (5,)), grad=False)
case("tri_indices", lambda T: (T.tril_indices(3, 4), T.tril_indices(4, 3, 1),
                               T.triu_indices(3, 3, -1), T.triu_indices(2, 5, 2)), grad=False)
case("round_decimals", lambda T, a: (T.round(a * 100, decimals=1), a.round(decimals=2),
                                     T.round(a * 1000, decimals=-2), a.round()), ("f", (3, 4)),
     grad_tol=1e-5)
case("cummax_cummin", lambda T, a: (*T.cummax(a, 1), *T.cummin(a, 0), *a.cummax(dim=-1)),
     ("t", (4, 9)), grad_tol=1e-5)
case("cummax:nan", lambda T, a: (*T.cummax(a, 0), *T.cummin(a, 0)),
     ("v", (7,), [1.0, 3.0, 3.0, float("nan"), 2.0, float("nan"), 0.0]), grad=False)
case("cummax:int", lambda T, i: (*T.cummax(i, 0), *T.cummin(i, 1)),
     ("i", (5, 3), -4, 4, np.int64), grad=False)
case("aminmax", lambda T, a: (*T.aminmax(a), *T.aminmax(a, dim=1, keepdim=True),
                              *a.aminmax(dim=0)), ("t", (3, 5)), grad_tol=1e-5)
for _dtype in (np.int64, np.int32, np.int16, np.uint8):
    _lo = 0 if _dtype is np.uint8 else -100
    case(f"bitwise:{_dtype.__name__}", lambda T, i, j: (
        T.bitwise_and(i, j), T.bitwise_or(i, j), T.bitwise_xor(i, j), T.bitwise_not(i),
        i & j, i | j, i ^ j, ~i, i & 6, 5 | j, i.bitwise_xor(j)),
        ("i", (4, 5), _lo, 100, _dtype), ("i", (4, 5), _lo, 100, _dtype), grad=False)
case("bitwise:extremes", lambda T, i, j: (i & j, i | j, i ^ j, ~i),
     ("i", (6,), -2**62, 2**62, np.int64), ("i", (6,), -2**62, 2**62, np.int64), grad=False)
case("bitwise:bool", lambda T, a, b: (a & b, a | b, a ^ b, ~a, T.bitwise_and(a, b),
                                      T.bitwise_not(b)), ("b", (6,)), ("b", (6,)), grad=False)
case("shifts", lambda T, i, s: (i << s, i >> s, T.bitwise_left_shift(i, 3),
                                T.bitwise_right_shift(i, s), i << 2, i >> 1),
     ("i", (3, 4), -1000, 1000, np.int64), ("i", (3, 4), 0, 12, np.int64), grad=False)
case("shifts:int32", lambda T, i, s: (i << s, i >> s),
     ("i", (8,), -1000, 1000, np.int32), ("i", (8,), 0, 30, np.int32), grad=False)
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
def test_parity(row, device):
    check_parity(row, device)


def test_return_types_are_named():
    x = ember.tensor([[1.0, 3.0, 2.0]])
    values, indices = ember.cummax(x, 1)
    assert ember.cummax(x, 1).indices.tolist() == indices.tolist() == [[0, 1, 1]]
    assert ember.cummin(x, 1).values.tolist() == [[1.0, 1.0, 1.0]]
    assert (ember.aminmax(x).min.item(), ember.aminmax(x).max.item()) == (1.0, 3.0)
    assert "cummax(values=" in repr(ember.cummax(x, 1))


def test_normal_with_tensor_arguments(device):
    mean = ember.tensor([[0.0], [10.0], [-5.0]], device=device)
    std = ember.tensor([1.0, 0.5, 2.0, 0.0], device=device)
    ember.manual_seed(zlib.crc32(b"normal"))
    a = ember.normal(mean, std)
    ember.manual_seed(zlib.crc32(b"normal"))
    b = ember.normal(mean, std)
    assert tuple(a.shape) == (3, 4) and a.device == ember.Device(device)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert len(set(a.numpy()[:, 0].tolist())) == 3        # one draw per element
    np.testing.assert_array_equal(a.numpy()[:, 3], [0.0, 10.0, -5.0])   # std 0: the mean
    g = ember.Generator().manual_seed(3)
    wide = ember.normal(ember.full((20000,), 2.0, device=device), 3.0, generator=g).numpy()
    assert abs(wide.mean() - 2.0) < 0.1 and abs(wide.std() - 3.0) < 0.1
    assert tuple(ember.normal(1.0, ember.ones(2, 5, device=device)).shape) == (2, 5)
    with pytest.raises(ember.EmberError, match="std must be >= 0"):
        ember.normal(ember.zeros(2, device=device), ember.tensor([1.0, -1.0], device=device))
    with pytest.raises(ember.EmberError, match="std must be >= 0"):
        ember.normal(ember.zeros(2, device=device), -1.0)


def test_function_errors():
    with pytest.raises(ember.EmberError, match="number of sections must be > 0"):
        ember.tensor_split(ember.zeros(3), 0)
    with pytest.raises(ember.EmberError, match="expected integer or bool tensors"):
        ember.bitwise_and(ember.zeros(3), ember.zeros(3))
    with pytest.raises(ember.EmberError, match="bool tensors only"):
        ember.zeros(3) & ember.zeros(3)
    with pytest.raises(ember.EmberError, match="selects 3 elements but source has only 2"):
        ember.zeros(3).masked_scatter(ember.ones(3, dtype=ember.bool), ember.zeros(2))
    with pytest.raises(ember.EmberError, match="0-d"):
        ember.diff(ember.tensor(1.0))


def test_weighted_random_sampler():
    weights = [0.1, 0.0, 0.9, 2.0]
    draws = list(WeightedRandomSampler(weights, 20000,
                                       generator=ember.Generator().manual_seed(0)))
    counts = Counter(draws)
    assert len(draws) == 20000 and counts[1] == 0 and set(counts) == {0, 2, 3}
    for index, w in enumerate(weights):
        assert abs(counts[index] / 20000 - w / 3.0) < 0.02
    once = list(WeightedRandomSampler(ember.tensor([1.0, 2.0, 3.0, 0.0, 4.0]), 4,
                                      replacement=False))
    assert sorted(once) == [0, 1, 2, 4]
    ember.manual_seed(7)
    first = list(WeightedRandomSampler(weights, 50))
    ember.manual_seed(7)
    assert list(WeightedRandomSampler(weights, 50)) == first
    sampler = WeightedRandomSampler(weights, 9)
    assert len(sampler) == 9 and sampler.weights.dtype == ember.float64
    loader = ember.utils.data.DataLoader(ember.utils.data.TensorDataset(ember.arange(4)),
                                         batch_size=3, sampler=sampler)
    assert sum(len(b[0]) for b in loader) == 9
    with pytest.raises(ember.EmberError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ember.EmberError, match="positive int"):
        WeightedRandomSampler(weights, 0)
