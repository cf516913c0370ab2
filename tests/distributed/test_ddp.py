"""DistributedDataParallel trains like one process on the global batch: the demo CNN and
an MLP, within float32 tolerance and bit for bit in the exact mode (check_equivalence);
no_sync, find_unused_parameters, shared parameters; different models are refused."""
from __future__ import annotations

import pytest
from dist_helpers import job


# On opencl:0 the demo CNN's run (its convolution programs, built in each rank: ~30 s of
# CPU of the ~45) is under --full; by default opencl:0 runs the MLP and every other part of
# the job (buckets, no_sync, unused and shared parameters, the failing checks), and the CNN
# runs under DDP on the CPU.  The CNN's ops on opencl:0 are the conformance rows' and the
# demo's (tests/demo/test_demo.py::test_compare_lists_every_device).
@pytest.mark.parametrize("device,models", [
    ("cpu", "cnn,mlp"), ("opencl:0", "mlp"),
    pytest.param("opencl:0", "cnn", marks=pytest.mark.full)])
def test_ddp_equals_single_process(device, models):
    done = job(2, "ddp", device, models, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.count("ddp ok") == 2
    # each model, exact, on both ranks
    assert done.stdout.count("(bit for bit): equal; max loss difference 0, max weight "
                             "difference 0") == 2 * len(models.split(","))


def test_ddp_refuses_different_models():
    done = job(2, "model_mismatch", timeout=60)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        assert (f"rank {rank}: DistributedDataParallel: rank 1 holds a different model "
                "than rank 0: entry 2: parameter '1.weight' is float32 (8, 4) on rank 0, "
                "but rank 1 has parameter '1.weight', float32 (6, 4)") in done.stdout
