"""Tensors between processes (ember.multiprocessing, issue 12) and NumPy's array protocol
(issue 18): by value, safely, with clear refusals."""
from __future__ import annotations

import copy
import pickle

import ember
import ember.multiprocessing as mp
import numpy as np
import pytest
from ember.errors import EmberError

DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
          ember.float16, ember.bfloat16, ember.float32, ember.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_tensors_pickle_by_value(dtype):
    t = (ember.arange(12) % 3).to(dtype).reshape(3, 4).T           # a strided view
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype is dtype and back.shape == (4, 3) and back.tolist() == t.tolist()
    assert not np.shares_memory(back.numpy(), t.numpy())
    w = ember.nn.Parameter(ember.ones(2))
    again = copy.deepcopy(w)
    assert isinstance(again, ember.nn.Parameter) and again.requires_grad
    assert pickle.loads(pickle.dumps(ember.zeros(0, 2))).shape == (0, 2)


def test_a_device_tensor_comes_back_on_its_device(opencl_device):
    t = ember.arange(5.0, device=opencl_device)
    back = pickle.loads(pickle.dumps(t))
    assert back.device == t.device and back.tolist() == t.tolist()


def test_a_forged_tensor_pickle_is_refused():
    from ember.multiprocessing import _rebuild_tensor
    with pytest.raises(ValueError, match="carries 3 bytes"):
        _rebuild_tensor("float32", (2,), b"abc", "cpu")
    with pytest.raises(EmberError):
        _rebuild_tensor("object", (1,), b"a", "cpu")


def _train(rank, queue, weights, sent):
    queue.put((rank, (weights * (rank + 1)).sum().item(), ember.ones(rank + 1)))
    if rank == 0:
        sent.set()
    else:
        # spawn stops the other processes at the first failure (as PyTorch's does): fail
        # only once rank 0 has sent, or it may be stopped before it can
        sent.wait(timeout=120)
        raise ValueError(f"rank {rank} broke")


def test_spawn_sends_tensors_both_ways_and_raises_the_first_error():
    ctx = mp.get_context("spawn")
    queue, sent = ctx.SimpleQueue(), ctx.Event()      # SimpleQueue: put() has written
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: rank 1 broke") as info:
        mp.spawn(_train, args=(queue, ember.arange(4.0), sent), nprocs=2)
    assert info.value.error_index == 1 and sent.is_set()
    got = sorted(queue.get() for _ in range(2))
    assert [(r, s, t.tolist()) for r, s, t in got] == [(0, 6.0, [1.0]), (1, 12.0, [1.0, 1.0])]


def test_numpy_sees_cpu_tensors_without_a_copy():
    t = ember.arange(4.0)
    view = np.asarray(t)
    view[0] = 10                                          # the same memory
    assert t.tolist() == [10.0, 1.0, 2.0, 3.0]
    assert not np.shares_memory(np.array(t), t.numpy())   # np.array copies by default
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.asarray(t, copy=False) is not None
    with pytest.raises(ValueError, match="copy is needed"):
        np.asarray(t, dtype=np.int32, copy=False)


def test_numpy_refuses_device_tensors_pointing_to_cpu(opencl_device):
    t = ember.ones(3, device=opencl_device)
    with pytest.raises(TypeError, match=r"on opencl:0.*tensor\.cpu\(\)"):
        np.asarray(t)
    assert np.asarray(t.cpu()).tolist() == [1.0, 1.0, 1.0]
