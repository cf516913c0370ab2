"""FullyShardedDataParallel and fully_shard train a transformer stack to the weights of one
process (2 ranks: every strategy; 4 ranks: bit for bit), and a sharded checkpoint saved on
4 ranks loads on 2 ranks and on 1 process (fsdp_jobs.py runs on every rank)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import ember
import numpy as np
import pytest
from dist_helpers import mpiexec, run_job
from ember.distributed import checkpoint as dcp
from ember.errors import CheckpointError, NotInEmberError

JOBS = str(Path(__file__).with_name("fsdp_jobs.py"))


def fsdp_job(n: int, *args: str, timeout: float = 120):
    if n == 1:
        return run_job([sys.executable, JOBS, *args], timeout)
    return run_job([mpiexec(), "-n", str(n), sys.executable, JOBS, *args], timeout)


def test_fsdp_equals_single_process_on_2_ranks():
    done = fsdp_job(2, "equivalence")
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout
    assert done.stdout.count("equivalence ok") == 2
    assert done.stdout.count("FULL_SHARD exact, Adam: 2 processes vs 1 over 3 steps (bit "
                             "for bit): equal; max loss difference 0, max weight difference "
                             "0") == 2
    for name in ("FULL_SHARD:", "SHARD_GRAD_OP:", "NO_SHARD:", "size policy"):
        assert done.stdout.count(f"{name}") >= 2 and "DIFFERENT" not in done.stdout


def test_fsdp_equals_single_process_on_4_ranks_bit_for_bit():
    done = fsdp_job(4, "equivalence", "exact")
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout
    assert done.stdout.count("FULL_SHARD exact, Adam: 4 processes vs 1 over 3 steps (bit "
                             "for bit): equal; max loss difference 0, max weight difference "
                             "0") == 4


def test_fsdp_features():
    """fully_shard = FSDP1, no_sync, bfloat16 mixed precision, state dicts, eval, async
    collectives and their mismatch error, NotInEmberError for what ember cannot honour."""
    done = fsdp_job(2, "features")
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout
    assert done.stdout.count("features ok") == 2


def test_fsdp_cpu_offload_of_an_opencl_model():
    done = fsdp_job(2, "offload", timeout=300)     # a first run compiles OpenCL programs
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout
    assert done.stdout.count("offload ok") == 2


def test_checkpoint_saved_on_4_loads_on_2_and_1(tmp_path):
    path = str(tmp_path / "dcp")
    done = fsdp_job(4, "save", path)
    assert done.returncode == 0, done.stderr[-4000:]
    files = sorted(os.listdir(path))
    assert files[0] == ".metadata" and len(files) == 5, files
    meta = dcp.read_metadata(path)
    assert meta.world_size == 4 and meta.values == {"step": 2}
    done = fsdp_job(2, "load", path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.count("load ok on 2 ranks") == 2
    done = fsdp_job(1, "load", path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "load ok on 1 process" in done.stdout


# --- one process, no MPI -----------------------------------------------------------------------

def _model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Linear(4, 2))


def test_checkpoint_in_one_process_and_its_errors(tmp_path):
    path = tmp_path / "ck"
    model = _model()
    dcp.save({"model": model.state_dict(), "epoch": 3}, checkpoint_id=path)
    first = sorted(os.listdir(path))
    other = _model()
    with ember.no_grad():
        for p in other.parameters():
            p.zero_()
    state = {"model": other.state_dict(), "epoch": 0}
    dcp.load(state, checkpoint_id=path)
    assert state["epoch"] == 3
    for k, v in model.state_dict().items():
        assert np.array_equal(other.state_dict()[k].numpy(), v.numpy())
    # torch's storage objects name the directory as well; a second save replaces the files
    # (fresh names) and removes the old ones
    dcp.save({"model": model.state_dict(), "epoch": 4},
             storage_writer=dcp.FileSystemWriter(path))
    again = {"epoch": 0}
    dcp.load(again, storage_reader=dcp.FileSystemReader(path))
    assert again["epoch"] == 4
    second = sorted(os.listdir(path))
    assert len(second) == 2 and second != first
    # consolidated into one ordinary file
    dcp.dcp_to_ember_save(path, tmp_path / "one.pt")
    assert ember.load(tmp_path / "one.pt")["epoch"] == 4

    with pytest.raises(CheckpointError, match="lacks \\['model.2.weight'\\]"):
        dcp.load({"model.2.weight": ember.zeros(2)}, checkpoint_id=path)
    with pytest.raises(CheckpointError, match="is \\[2, 4\\] in the model, \\[4, 3\\]"):
        dcp.load({"model.0.weight": ember.zeros(2, 4)}, checkpoint_id=path)
    with pytest.raises(CheckpointError, match="holds no checkpoint manifest"):
        dcp.load({}, checkpoint_id=tmp_path)
    with pytest.raises(CheckpointError, match="a checkpoint holds tensors"):
        dcp.save({"x": object()}, checkpoint_id=tmp_path / "bad")
    shard = [f for f in second if f.endswith(".distcp")][0]
    with open(path / shard, "ab") as fh:
        fh.write(b"x")
    with pytest.raises(CheckpointError, match="changed after it was written"):
        dcp.load({}, checkpoint_id=path)
    with pytest.raises(NotInEmberError, match="planners"):
        dcp.save({}, checkpoint_id=path, planner=object())


def test_post_accumulate_grad_hook_runs_per_accumulation():
    w = ember.ones(3, requires_grad=True)
    seen = []

    def hook(t):
        seen.append(t.grad.tolist())
        t.grad = None           # FSDP takes the gradient away
    w.register_post_accumulate_grad_hook(hook)
    (w * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]] and w.grad is None
    with pytest.raises(ember.EmberError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(hook)
