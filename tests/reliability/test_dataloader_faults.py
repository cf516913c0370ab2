"""DataLoader faults (issues 12 and 20): errors name the sample, nothing hangs, Ctrl-C is
clean however often it comes."""
from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zlib

import ember
import numpy as np
import pytest
from ember.utils.data import DataLoader, Dataset, RandomSampler, Sampler


class Corrupt(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 7:
            raise ValueError("sample 7 is corrupt")
        return np.full(2, i)


def test_errors_name_the_dataset_index_and_the_batch():
    with pytest.raises(ValueError) as info:
        list(DataLoader(Corrupt(), batch_size=4, num_workers=2))
    assert ("while loading dataset[7] (in the batch of dataset indices [4, 5, 6, 7])"
            in str(info.value))
    with pytest.raises(ValueError, match="sample 7") as info:
        list(DataLoader(Corrupt(), batch_size=4))
    if sys.version_info >= (3, 11):
        assert "while loading dataset[7] (in the batch of dataset indices [4, 5, 6, 7])" \
            in " ".join(info.value.__notes__)
    with pytest.raises(TypeError) as info:
        list(DataLoader(Corrupt(), batch_size=2, num_workers=1,
                        collate_fn=lambda batch: batch[0] + None))
    assert "the collate_fn of the batch of dataset indices [0, 1]" in str(info.value)


_START_FAILS = textwrap.dedent("""
    import numpy as np
    from ember.utils.data import DataLoader, Dataset, Sampler

    class Data(Dataset):
        def __len__(self):
            return 10
        def __getitem__(self, i):
            return np.zeros(2)

    class Broken(Sampler):
        def __iter__(self):
            raise RuntimeError("the sampler broke")
        def __len__(self):
            return 10

    loader = DataLoader(Data(), sampler=Broken(), num_workers=2)
    it = iter(loader)
""")


def test_an_exception_while_starting_workers_ends_the_program():
    # it hung after the traceback: the iterator's cleanup ran at interpreter exit
    done = subprocess.run([sys.executable, "-c", _START_FAILS], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and "RuntimeError: the sampler broke" in done.stderr


_CTRL_C = textwrap.dedent("""
    import multiprocessing as mp, signal, sys, time
    import numpy as np
    from ember.utils.data import DataLoader, Dataset
    signal.signal(signal.SIGINT, signal.default_int_handler)

    class Slow(Dataset):
        def __len__(self):
            return 400
        def __getitem__(self, i):
            time.sleep(0.002)
            return np.full(3, i)

    for r in range(int(sys.argv[1])):
        try:
            print(f"round {r}", flush=True)
            while True:
                for batch in DataLoader(Slow(), batch_size=4, num_workers=2,
                                        persistent_workers=r % 3 == 0, shuffle=r % 2 == 0):
                    pass
        except KeyboardInterrupt:
            pass
        deadline = time.monotonic() + 5
        while mp.active_children() and time.monotonic() < deadline:
            time.sleep(0.01)
        print(f"caught {r} children={len(mp.active_children())}", flush=True)
    print("done", flush=True)
""")


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="sends Ctrl-C to a process group")
def test_dozens_of_caught_ctrl_c(tmp_path):
    rounds, rng = 30, random.Random(zlib.crc32(b"caught ctrl-c"))
    proc = subprocess.Popen([sys.executable, "-c", _CTRL_C, str(rounds)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)      # Ctrl-C reaches its whole group
    caught = []
    # a hang must fail this test, not stall the suite: the whole group dies after 120 s
    watchdog = threading.Timer(120, os.killpg, (proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        for line in proc.stdout:
            if line.startswith("round"):
                time.sleep(rng.uniform(0.0, 0.2))         # also while workers start
                os.killpg(proc.pid, signal.SIGINT)
            elif line.startswith("caught"):
                caught.append(line.split()[-1])
            elif line.startswith("done"):
                break
        _, err = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0 and caught == ["children=0"] * rounds, err
    assert "Traceback" not in err                          # no worker spoke


def test_pin_memory_and_a_huge_sampler_with_replacement():
    loader = DataLoader(Corrupt(), batch_size=2, pin_memory=True, pin_memory_device="",
                        sampler=[0, 1, 2])
    assert loader.pin_memory and [b.tolist() for b in loader] == [[[0, 0], [1, 1]], [[2, 2]]]
    sampler = RandomSampler(range(10), replacement=True, num_samples=10**10,
                            generator=ember.Generator().manual_seed(1))
    assert len(sampler) == 10**10
    first = list(itertools.islice(sampler, 100_000))     # crosses a chunk boundary
    assert len(first) == 100_000 and set(first) == set(range(10))
    batches = DataLoader(range(10), sampler=sampler, batch_size=4)
    assert len(batches) == 25 * 10**8 and len(next(iter(batches))) == 4


def test_torch_submodules_are_real_modules():
    import importlib
    for name, members in {"dataloader": ("DataLoader", "default_collate", "get_worker_info"),
                          "sampler": ("Sampler", "RandomSampler", "BatchSampler"),
                          "dataset": ("Dataset", "TensorDataset", "random_split"),
                          "distributed": ("DistributedSampler",)}.items():
        module = importlib.import_module(f"ember.utils.data.{name}")
        assert all(hasattr(module, m) for m in members), name
    assert issubclass(RandomSampler, Sampler)
