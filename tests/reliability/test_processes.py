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


# --- every layout, dtype and device survives the trip (issue 27) ---------------------------

def _layouts(dtype, device="cpu") -> dict:
    base = (ember.arange(24) % 7).to(dtype).reshape(4, 6)
    if device != "cpu":
        base = base.to(device)
    return {"strided rows and columns": base[1:, ::2],          # issue 27's reproducer
            "transposed": base.T, "offset row": base[2], "offset column": base[:, 3],
            "0-d": base[1, 2], "empty": base[:0], "empty columns": base[:, 6:],
            "reversed-free slice of a view": base.T[1:4, ::3], "contiguous": base,
            "expanded": base[0:1].expand(3, 6)}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_every_layout_pickles_by_value(dtype):
    for name, t in _layouts(dtype).items():
        back = pickle.loads(pickle.dumps(t))
        assert back.dtype is dtype and back.shape == t.shape, name
        assert back.tolist() == t.tolist(), name


def _echo(inbox, outbox):
    while True:
        item = inbox.get()
        if item is None:
            return
        outbox.put(item)


def _round_trip(ctx, items, timeout: float):
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_echo, args=(inbox, outbox), daemon=True)
    child.start()
    try:
        back = []
        for item in items:
            inbox.put(item)
            back.append(outbox.get(timeout=timeout))    # a dropped item times out here
        inbox.put(None)
        child.join(timeout)
        return back
    finally:
        if child.is_alive():
            child.kill()


def test_every_layout_and_dtype_crosses_a_real_queue():
    items = [(dtype.name, name, t) for dtype in DTYPES for name, t in _layouts(dtype).items()]
    back = _round_trip(mp.get_context("fork"), [items], timeout=30)[0]
    for (dtype, name, t), (dtype2, name2, u) in zip(items, back):
        assert (dtype2, name2) == (dtype, name)
        assert u.dtype is t.dtype and u.shape == t.shape and u.tolist() == t.tolist(), name


def test_an_opencl_tensor_crosses_a_spawn_queue(opencl_device):
    items = list(_layouts(ember.float32, opencl_device).items())
    back = _round_trip(mp.get_context("spawn"), [items], timeout=120)[0]
    for (name, t), (name2, u) in zip(items, back):
        assert name2 == name and u.device == t.device, name
        assert u.shape == t.shape and u.tolist() == t.tolist(), name


def test_what_cannot_travel_fails_at_the_put_that_sent_it():
    ctx = mp.get_context("fork")
    for make in (ctx.Queue, ctx.JoinableQueue, ctx.SimpleQueue, mp.Queue):
        queue = make()
        with pytest.raises(mp.SendError, match=r"Queue\.put: cannot send .*lambda") as info:
            queue.put({"fn": lambda: 1})
        assert isinstance(info.value, EmberError) and isinstance(info.value, pickle.PicklingError)
        queue.put(ember.arange(3.0)[::2])       # the queue still works: nothing was half-sent
        got = queue.get() if isinstance(queue, mp.SimpleQueue) else queue.get(timeout=10)
        assert got.tolist() == [0.0, 2.0]


def _use_opencl_after_fork(inbox, outbox):
    try:
        outbox.put(("received", inbox.get().tolist()))
    except Exception as exc:  # noqa: BLE001  (sent back to the parent, which checks it)
        outbox.put((type(exc).__name__, str(exc)))


def test_a_forked_child_is_told_opencl_does_not_survive_fork(opencl_device):
    t = ember.arange(6.0, device=opencl_device)[::2]      # OpenCL started in the parent
    ctx = mp.get_context("fork")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_use_opencl_after_fork, args=(inbox, outbox), daemon=True)
    child.start()
    try:
        inbox.put(t)
        kind, message = outbox.get(timeout=60)            # a hang before: the child's copy
        child.join(30)
    finally:
        if child.is_alive():
            child.kill()
    assert kind == "DeviceUnavailableError", message
    assert "does not survive fork()" in message and "'spawn'" in message
