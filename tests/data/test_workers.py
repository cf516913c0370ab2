"""DataLoader worker processes: same batches as in-process, errors re-raised, no leaked process."""
from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time

import ember
import numpy as np
import pytest
from ember.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
    WorkerError,
    get_worker_info,
)


def _tensor_dataset(n=20):
    return TensorDataset(ember.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2)),
                         ember.arange(n))


class Failing(Dataset):
    """Raises at one index, as a corrupt sample would."""

    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"sample {i} is corrupt")
        return np.full(2, i, np.int64)


class Dying(Dataset):
    """Its worker process exits without a word, as one killed for memory would."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            os._exit(3)
        return i


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3)
        return i


class WhoAmI(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "worker": info.id, "seed": info.seed,
                "draw": ember.rand(1).item(), "n": info.num_workers}


class Sharded(IterableDataset):
    """Each worker streams its own share, as get_worker_info() makes possible."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def _no_children():
    # joined workers are gone at once; give the OS a moment in case one was just killed
    deadline = time.monotonic() + 5
    while mp.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return mp.active_children() == []


def _values(batches):
    return [[t.tolist() for t in b] for b in batches]


def test_workers_give_the_same_batches_as_one_process():
    ds = _tensor_dataset()
    single = DataLoader(ds, batch_size=3, shuffle=True, generator=ember.Generator().manual_seed(5))
    multi = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2, prefetch_factor=3,
                       generator=ember.Generator().manual_seed(5))
    for _ in range(2):                          # two epochs: orders follow the generator
        a, b = list(single), list(multi)
        assert _values(a) == _values(b) and len(b) == 7
        assert b[0][0].dtype == ember.float32 and b[0][0].device == ember.device("cpu")
    assert _no_children()


def test_bfloat16_and_nested_batches_cross_the_process_boundary():
    ds = TensorDataset(ember.arange(6).to(ember.bfloat16))
    out = list(DataLoader(ds, batch_size=4, num_workers=1))
    assert out[0][0].dtype == ember.bfloat16 and out[1][0].tolist() == [4.0, 5.0]
    infos = list(DataLoader(WhoAmI(), batch_size=2, num_workers=2))
    assert {w for b in infos for w in b["worker"].tolist()} == {0, 1}
    seeds = {b["worker"][0].item(): b["seed"][0].item() for b in infos}
    assert seeds[1] == seeds[0] + 1             # base seed + worker id, as in PyTorch
    assert all(b["n"].tolist() == [2, 2] for b in infos)


def test_worker_exception_is_reraised_with_its_traceback():
    loader = DataLoader(Failing(12, bad=7), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    text = str(info.value)
    assert "Caught ValueError in DataLoader worker process" in text
    assert "sample 7 is corrupt" in text and "__getitem__" in text
    assert _no_children()


def test_worker_init_fn_failure_is_reported():
    def init(worker_id):
        raise RuntimeError(f"cannot open shard {worker_id}")
    with pytest.raises(RuntimeError, match="cannot open shard"):
        next(iter(DataLoader(_tensor_dataset(), num_workers=1, worker_init_fn=init)))
    assert _no_children()


def test_dead_worker_is_detected():
    with pytest.raises(WorkerError, match="exited with code 3"):
        list(DataLoader(Dying(), batch_size=2, num_workers=2))
    assert _no_children()


def test_timeout():
    with pytest.raises(WorkerError, match="timed out after 0.5 s"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.5)))
    assert _no_children()


def test_abandoned_iterator_stops_its_workers():
    it = iter(DataLoader(_tensor_dataset(), batch_size=2, num_workers=2))
    next(it)
    assert len(mp.active_children()) == 2
    del it
    gc.collect()
    assert _no_children()


def test_persistent_workers_survive_epochs_and_stop_on_close():
    loader = DataLoader(_tensor_dataset(8), batch_size=2, num_workers=2, persistent_workers=True)
    first = _values(loader)
    pids = sorted(p.pid for p in mp.active_children())
    it = iter(loader)
    next(it)                                   # an epoch abandoned half way ...
    assert _values(loader) == first            # ... does not leak into the next one
    assert sorted(p.pid for p in mp.active_children()) == pids
    loader.close()
    assert _no_children()


def test_a_dropped_persistent_loader_stops_its_workers_at_once():
    # no cycle between the loader and its iterator (torch's design): its workers stop when
    # the last reference goes, not when the cyclic garbage collector next runs
    enabled = gc.isenabled()
    gc.disable()
    try:
        expected = _values(DataLoader(_tensor_dataset(8), batch_size=2))
        loader = DataLoader(_tensor_dataset(8), batch_size=2, num_workers=2,
                            persistent_workers=True)
        assert _values(loader) == expected and len(mp.active_children()) == 2
        del loader
        assert _no_children()
        # a for loop over a loader nobody keeps: the loop holds the iterator, and the
        # workers last as long as the loop
        got = []
        for batch in DataLoader(_tensor_dataset(8), batch_size=2, num_workers=2,
                                persistent_workers=True):
            got.append(batch)
            assert len(mp.active_children()) == 2
        assert _values(got) == expected and _no_children()
    finally:
        if enabled:
            gc.enable()


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="forks workers")
def test_a_forked_worker_leaves_an_older_loaders_workers_alone():
    # a worker forked for a later loader holds a copy of every live loader and iterator;
    # closing or dropping those copies must neither stop the older workers (their done
    # event is shared) nor join processes that are not the worker's children
    expected = _values(DataLoader(_tensor_dataset(8), batch_size=2))
    persistent = DataLoader(_tensor_dataset(8), batch_size=2, num_workers=1,
                            persistent_workers=True, multiprocessing_context="fork")
    assert _values(persistent) == expected
    older = iter(DataLoader(_tensor_dataset(8), batch_size=2, num_workers=1,
                            multiprocessing_context="fork"))
    first = next(older)
    held = [older]
    del older

    def in_the_worker(worker_id):
        persistent.close()
        held.clear()                                # the last reference, in the worker
    later = DataLoader(_tensor_dataset(4), batch_size=2, num_workers=1,
                       multiprocessing_context="fork", worker_init_fn=in_the_worker)
    assert _values(later) == _values(DataLoader(_tensor_dataset(4), batch_size=2))
    assert _values([first, *held[0]]) == expected
    assert _values(persistent) == expected
    persistent.close()
    assert _no_children()


_CTRL_C_AFTER_DROP = textwrap.dedent("""
    import multiprocessing as mp, os, signal, sys, threading, time
    from ember.utils.data import DataLoader, Dataset, _workers
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _workers._JOIN_S = 5.0          # the busy worker is stopped 5 s after it is dropped

    class Busy(Dataset):
        def __len__(self):
            return 10
        def __getitem__(self, i):
            if i == 1:
                open(sys.argv[1], "w").close()      # the worker is busy from here on
                time.sleep(30)
            return i

    loader = DataLoader(Busy(), num_workers=1, persistent_workers=True)
    it = iter(loader)
    next(it)
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    start = time.monotonic()
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        del loader, it          # its workers are being stopped when the Ctrl-C comes
        print(f"dropped at once: {time.monotonic() - start < 0.25}", flush=True)
        time.sleep(20)
        print("Ctrl-C lost", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt before the worker stopped: {time.monotonic() - start < 4}",
              flush=True)
    deadline = time.monotonic() + 15
    while mp.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"children={len(mp.active_children())}", flush=True)
""")


def test_ctrl_c_while_a_dropped_loaders_workers_stop_reaches_the_program(tmp_path):
    # an iterator's finalizer that stopped its workers itself would hold the Ctrl-C and
    # raise it in __del__, where Python prints and drops it; they stop in a thread instead
    done = subprocess.run([sys.executable, "-c", _CTRL_C_AFTER_DROP, str(tmp_path / "busy")],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == ["dropped at once: True",
                                        "KeyboardInterrupt before the worker stopped: True",
                                        "children=0"], done.stderr
    assert done.returncode == 0 and "Exception ignored" not in done.stderr, done.stderr


def test_iterable_dataset_with_workers():
    got = [b.tolist() for b in DataLoader(Sharded(10), batch_size=2, num_workers=2)]
    assert sorted(v for b in got for v in b) == list(range(10))
    assert _no_children()


def test_spawned_workers_receive_a_tensor_dataset():
    loader = DataLoader(_tensor_dataset(6), batch_size=3, num_workers=1,
                        multiprocessing_context="spawn")
    assert _values(loader) == _values(DataLoader(_tensor_dataset(6), batch_size=3))
    assert _no_children()


_CTRL_C = textwrap.dedent("""
    import os, signal, sys, time
    import numpy as np
    from ember.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, i):
            time.sleep(0.05)
            return np.zeros(1)

    # a shell's background job starts with Ctrl-C ignored; a terminal's program does not
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def report(worker_id):
        # one write() of a whole line: two workers' print() calls could interleave
        os.write(1, f"worker {os.getpid()}\\n".encode())

    for batch in DataLoader(Slow(), batch_size=2, num_workers=2, worker_init_fn=report):
        print("batch", flush=True)
""")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_parent_and_workers(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(_CTRL_C)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        for line in proc.stdout:
            if line.startswith("worker"):
                pids.append(int(line.split()[1]))
            if line.startswith("batch") and len(pids) == 2:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert err.count("Traceback") == 1          # the workers ignored Ctrl-C quietly
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
