"""The declared kernels of issue 30 (atan2, the bit operations, topk, unique): each
backend kernel and the decomposition a device without it runs give PyTorch's answers."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import ops
from ember.ops import bitwise as B
from ember.ops import sorting

torch = pytest.importorskip("torch")

INTS = ["uint8", "int8", "int16", "int32", "int64"]


def _pair(dtype, rng):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -2 ** 62), min(info.max, 2 ** 62)
    a = rng.integers(lo, hi, 64, dtype=np.int64, endpoint=True).astype(dtype)
    b = rng.integers(lo, hi, 64, dtype=np.int64, endpoint=True).astype(dtype)
    a[:4] = [info.min, info.max, 0, -1 if info.min else 1]
    return a, b


@pytest.mark.parametrize("dtype", INTS)
def test_bit_kernels_and_decompositions_match_torch(dtype):
    rng = np.random.default_rng(1)
    a, b = _pair(dtype, rng)
    bits = 8 * np.dtype(dtype).itemsize
    s = rng.integers(-bits - 3 if dtype != "uint8" else 0, bits + 3, 64).astype(dtype)
    ta, tb, ts = (torch.from_numpy(v.copy()) for v in (a, b, s))
    ea, eb, es = (ember.tensor(v) for v in (a, b, s))
    want = {"and": ta & tb, "or": ta | tb, "xor": ta ^ tb, "not": ~ta, "left": ta << ts,
            "right": ta >> ts}
    kernel = {"and": ea & eb, "or": ea | eb, "xor": ea ^ eb, "not": ~ea, "left": ea << es,
              "right": ea >> es}
    decomposed = {"and": B.bytewise("and", ea, eb), "or": B.bytewise("or", ea, eb),
                  "xor": B.bytewise("xor", ea, eb), "not": B.invert(ea),
                  "left": B.left_shift(ea, es), "right": B.right_shift(ea, es)}
    for name, w in want.items():
        for got in (kernel[name], decomposed[name]):
            assert got.dtype.name == dtype, name
            np.testing.assert_array_equal(got.numpy(), w.numpy(), err_msg=name)


def test_negative_shift_counts_shift_everything_out_as_torch():
    x = ember.tensor([5, -5, 7])
    s = ember.tensor([-1, -1, -70])
    np.testing.assert_array_equal((x << s).numpy(), [0, 0, 0])
    np.testing.assert_array_equal((x >> s).numpy(), [0, -1, 0])


def test_bit_ops_refuse_floats():
    with pytest.raises(ember.EmberError, match="bitwise_and"):
        ember.bitwise_and(ember.ones(2), ember.ones(2))
    with pytest.raises(ember.EmberError, match="bitwise_left_shift"):
        ember.tensor([True]) << ember.tensor([True])


def test_atan2_kernel_keeps_the_signed_zero_quadrants():
    y = [0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0]
    x = [0.0, 0.0, -0.0, -0.0, -np.inf, np.inf, np.inf, -np.inf, 1.0, -3.0]
    want = torch.atan2(torch.tensor(y), torch.tensor(x)).numpy()
    got = ember.atan2(ember.tensor(y), ember.tensor(x)).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    w = ember.tensor([0.5, -2.0], requires_grad=True)
    ember.atan2(w, ember.tensor([1.5, 0.25])).sum().backward()
    tw = torch.tensor([0.5, -2.0], requires_grad=True)
    torch.atan2(tw, torch.tensor([1.5, 0.25])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def _devices():
    from ember.testing import devices_under_test
    return [pytest.param(d, marks=[pytest.mark.skip(reason=why)] if why else [], id=d)
            for d, why in devices_under_test()]


# OpenCL's kernel selects per chunk of 4096 keys (k <= 64; larger k sort): the 4106-key
# lines have two chunks, the last with fewer keys than k = 64
@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("shape, dim", [((200,), 0), ((5, 40), 1), ((40, 5), 0),
                                        ((3, 30, 4), 1), ((2, 4106), 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_selection_matches_torch_with_ties(device, shape, dim, largest):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 5, shape).astype(np.float32)          # many ties
    x.reshape(-1)[::11] = np.nan                               # nan counts as the largest
    n = shape[dim]
    for k in (0, 1, 3, 64, 65, n - 1, n):
        if k > n:
            continue
        got = ember.topk(ember.tensor(x, device=device), k, dim, largest)
        keys = np.where(np.isnan(x), -np.inf, -x) if largest else np.where(np.isnan(x),
                                                                           np.inf, x)
        want_idx = np.take(np.argsort(keys, dim, kind="stable"), np.arange(k), dim)
        np.testing.assert_array_equal(got[1].numpy(), want_idx)
        values = torch.topk(torch.from_numpy(x), k, dim, largest).values.numpy()
        np.testing.assert_array_equal(got[0].numpy(), values)
        # the decomposition (a device without the kernel) agrees
        dec = sorting._topk_decompose(ember.tensor(x), axis=dim, k=k, largest=largest)
        np.testing.assert_array_equal(dec.numpy(), want_idx)


def test_topk_with_nan_and_its_gradient():
    x = ember.tensor([1.0, np.nan, 3.0, np.nan, 2.0], requires_grad=True)
    values, index = ember.topk(x, 3)
    np.testing.assert_array_equal(index.numpy(), [1, 3, 2])
    values[2].backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 0, 0])


@pytest.mark.parametrize("values", [[3, 1, 2, 3, 1, 5, -4], [],
                                    [1.5, -0.0, 0.0, np.nan, np.nan, 1.5]])
def test_unique_kernel_and_decomposition_match_torch(values):
    x = np.array(values, dtype=np.float64)
    want = torch.unique(torch.from_numpy(x)).numpy()
    got = ember.unique(ember.tensor(x)).numpy()
    dec = sorting._unique_sorted(ember.tensor(x), ember.tensor(x), False, False).numpy()
    for g in (got, dec):
        np.testing.assert_array_equal(g, want)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(want))
    assert ops.REGISTRY["unique"].kind == "composite"
