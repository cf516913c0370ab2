"""DistributedDataParallel trains like one process on the global batch: the demo CNN and
an MLP, within float32 tolerance and bit for bit in the exact mode (check_equivalence);
no_sync, find_unused_parameters, shared parameters; different models are refused."""
from __future__ import annotations

import pytest
from dist_helpers import job


@pytest.mark.parametrize("device", ["cpu", "opencl:0"])
def test_ddp_equals_single_process(device):
    done = job(2, "ddp", device, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.count("ddp ok") == 2
    assert done.stdout.count("(bit for bit): equal; max loss difference 0, max weight "
                             "difference 0") == 4          # cnn and mlp, on both ranks


def test_ddp_refuses_different_models():
    done = job(2, "model_mismatch", timeout=60)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        assert (f"rank {rank}: DistributedDataParallel: rank 1 holds a different model "
                "than rank 0: entry 2: parameter '1.weight' is float32 (8, 4) on rank 0, "
                "but rank 1 has parameter '1.weight', float32 (6, 4)") in done.stdout
