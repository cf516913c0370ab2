"""The CPU table's fast forms of expand, gather and scatter_add (a cross-entropy step spent
~200 us in the general three on 128x10 arrays) give the general kernels' results bit for
bit; expand's is a view straight over x (as_strided's is not: its base is another object)."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.backends import array_api


def _kernels():
    return ember.device("cpu").kernels


def _general():
    table = array_api.numpy_like(np)
    table.update(array_api.numpy_extras(np))
    return table


@pytest.mark.parametrize("shape,index_shape,axis", [
    ((128, 10), (128, 1), 1), ((6, 5, 4), (6, 1, 4), 1), ((7, 3), (1, 3), 0),
    ((4, 9), (4, 3), 1)])
def test_gather_and_scatter_add_equal_the_general_kernels(shape, index_shape, axis):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    index = rng.integers(0, shape[axis], index_shape)
    src = rng.standard_normal(index_shape).astype(np.float32)
    fast, general = _kernels(), _general()
    got = fast["gather"](x, index, axis=axis)
    np.testing.assert_array_equal(got, general["gather"](x, index, axis=axis))
    if index_shape[axis] == 1:          # repeats along axis take the general kernel
        got = fast["scatter_add"](x, index, src, axis=axis)
        np.testing.assert_array_equal(got, general["scatter_add"](x, index, src, axis=axis))
        assert not np.shares_memory(got, x)


def test_scatter_add_with_repeated_indices_still_accumulates():
    x = np.zeros((2, 3), np.float32)
    index = np.array([[0, 0, 2], [1, 1, 1]])
    src = np.ones((2, 3), np.float32)
    got = _kernels()["scatter_add"](x, index, src, axis=1)
    np.testing.assert_array_equal(got, [[2, 0, 1], [0, 3, 0]])


def test_expand_is_a_view_of_x_with_its_writeability():
    fast = _kernels()["expand"]
    x = np.array([[0], [1], [2]], np.float32)
    view = fast(x, shape=(2, 3, 4))
    assert view.shape == (2, 3, 4) and view.strides == (0, 4, 0) and view.base is x
    np.testing.assert_array_equal(view, np.broadcast_to(x, (2, 3, 4)))
    view[0, 1, 0] = 7                   # a write reaches x (PyTorch's views)
    assert x[1, 0] == 7
    x.flags.writeable = False
    assert not fast(x, shape=(3, 4)).flags.writeable
    # a strided or empty x: the general as_strided form, same answers
    t = np.arange(6, dtype=np.float32).reshape(2, 3).T[:, :1]
    np.testing.assert_array_equal(fast(t, shape=(3, 5)), np.broadcast_to(t, (3, 5)))
    assert fast(np.zeros((0, 1), np.float32), shape=(0, 4)).shape == (0, 4)


def test_cross_entropy_step_uses_the_fast_forms():
    """The eager ops reach these kernels: gradients equal torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((16, 5)).astype(np.float32)
    target = rng.integers(0, 5, 16)
    x = ember.tensor(logits, requires_grad=True)
    ember.nn.functional.cross_entropy(x, ember.tensor(target)).backward()
    t = torch.tensor(logits, requires_grad=True)
    torch.nn.functional.cross_entropy(t, torch.tensor(target)).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-7)
