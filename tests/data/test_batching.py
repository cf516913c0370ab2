"""DataLoader's per-batch path over in-memory datasets: samples that are tensors collate
in one host stack (no kernel per sample), batches are cut without a step per index, and
x[i] stays a view.  Results equal torch.utils.data's."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import dispatch
from ember.errors import EmberError
from ember.utils.data import BatchSampler, DataLoader, default_collate

torch = pytest.importorskip("torch")


def _kernels_in(fn):
    """(fn's result, the names of the kernels it ran)."""
    names = []

    def hook(op, device, kernel, natives, attrs, inputs, result):
        names.append(op.name)
    dispatch.add_hook("count-kernels", hook)
    try:
        out = fn()
    finally:
        dispatch.remove_hook("count-kernels")
    return out, names


def test_tensor_samples_collate_without_a_kernel_per_sample():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3, 5)).astype(np.float32)
    samples = [ember.tensor(a) for a in x]
    got, names = _kernels_in(lambda: default_collate(samples))
    assert len(names) <= 1, names
    want = torch.utils.data.default_collate([torch.tensor(a) for a in x])
    assert got.dtype is ember.float32 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got.add_(1)                                  # new memory, as torch's stack
    np.testing.assert_array_equal(samples[0].numpy(), x[0])


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "bfloat16"])
def test_collate_keeps_each_dtype(dtype):
    base = ember.arange(12).reshape(4, 3).to(getattr(ember, dtype))
    got = default_collate([base[i] for i in range(4)])
    assert got.dtype is base.dtype
    np.testing.assert_array_equal(got.float().numpy(), base.float().numpy())


def test_collate_of_pairs_matches_torch():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.arange(10)
    got = default_collate([(ember.tensor(a), ember.tensor(b)) for a, b in zip(x, y)])
    want = torch.utils.data.default_collate([(torch.tensor(a), torch.tensor(b))
                                             for a, b in zip(x, y)])
    for g, w in zip(got, want):
        assert g.dtype.itemsize == w.dtype.itemsize and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_collate_of_samples_needing_grad_still_records_it():
    w = ember.ones(3, requires_grad=True)
    batch = default_collate([w * 2, w * 3])
    batch.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0, 5.0])


def test_collate_of_mixed_dtypes_promotes_as_torch():
    got = default_collate([ember.tensor([1, 2]), ember.tensor([0.5, 1.5])])
    want = torch.utils.data.default_collate([torch.tensor([1, 2]), torch.tensor([0.5, 1.5])])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("batch, words", [
    ([ember.zeros(2), ember.zeros(3)], "shape"),
    ([ember.zeros(2), np.zeros(2)], "ndarray"),
])
def test_collate_errors_name_the_sample(batch, words):
    with pytest.raises(EmberError, match=words):
        default_collate(batch)


@pytest.mark.parametrize("n, size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                (9, 3, False), (2, 5, False), (2, 5, True),
                                                (0, 4, False)])
def test_batch_sampler_cuts_as_torch(n, size, drop_last):
    got = list(BatchSampler(range(n), size, drop_last))
    want = list(torch.utils.data.BatchSampler(range(n), size, drop_last))
    assert got == want
    assert len(BatchSampler(range(n), size, drop_last)) == len(want)


def test_loader_over_a_list_of_tensors_matches_torch():
    x = np.arange(7 * 4, dtype=np.float32).reshape(7, 4)
    got = list(DataLoader([ember.tensor(a) for a in x], batch_size=3))
    want = list(torch.utils.data.DataLoader([torch.tensor(a) for a in x], batch_size=3))
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_integer_index_is_a_view_with_its_gradient():
    x = ember.arange(12.0).reshape(3, 4)
    row = x[-2]
    assert tuple(row.shape) == (4,)
    row.mul_(10)                                # writes reach the base, as torch's
    np.testing.assert_array_equal(x.numpy()[1], [40.0, 50.0, 60.0, 70.0])
    w = ember.ones(3, 4, requires_grad=True)
    (w[1] * ember.arange(4.0)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[1], [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(w.grad.numpy()[0], 0.0)
