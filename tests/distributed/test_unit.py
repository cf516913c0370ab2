"""The pieces that need no MPI job: launcher variables, the TCP rendezvous, the sampler,
the NCCL backend's probe (no GPU here)."""
from __future__ import annotations

import socket
import threading

import pytest
from ember.distributed.errors import DistributedError
from ember.distributed.group import launch_env
from ember.distributed.store import StoreControl
from ember.utils.data import DistributedSampler


def test_launch_env_reads_every_launcher():
    assert launch_env({}) is None
    mpich = launch_env({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0",
                        "MPI_LOCALNRANKS": "2", "RANK": "2", "WORLD_SIZE": "4"})
    assert (mpich.source, mpich.rank, mpich.size, mpich.local_rank) == ("MPICH", 2, 4, 0)
    ompi = launch_env({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "3"})
    assert (ompi.source, ompi.rank, ompi.size, ompi.local_rank) == ("Open MPI", 1, 3, 1)
    torchrun = launch_env({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1",
                           "LOCAL_WORLD_SIZE": "4", "SLURM_PROCID": "0", "SLURM_NTASKS": "2"})
    assert (torchrun.source, torchrun.rank, torchrun.local_size) == ("torchrun", 3, 4)
    with pytest.raises(DistributedError, match="are not integers"):
        launch_env({"RANK": "x", "WORLD_SIZE": "2"})


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tcp_rendezvous_gathers_every_ranks_bytes():
    port, out = _port(), {}

    def rank(r):
        control = StoreControl("127.0.0.1", port, r, 3, timeout=20)
        out[r] = [control.allgather_bytes(f"rank {r}".encode()),
                  control.allgather_bytes(b"x" * r)]
        control.close()
    threads = [threading.Thread(target=rank, args=(r,)) for r in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    for r in range(3):
        assert out[r] == [[b"rank 0", b"rank 1", b"rank 2"], [b"", b"x", b"xx"]]


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 4, False), (10, 4, True),
                                                     (11, 3, False), (8, 4, True),
                                                     (3, 5, False)])
def test_sampler_matches_torch(n, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    del torch


def test_sampler_shuffles_by_epoch_the_same_on_every_rank():
    def shares(epoch, **kw):
        out = []
        for rank in range(3):
            s = DistributedSampler(range(20), 3, rank, seed=5, **kw)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    first, again, other = shares(0), shares(0), shares(1)
    assert first == again and first != other
    everything = sorted(i for share in first for i in share)
    assert sorted(set(everything)) == list(range(20)) and len(everything) == 21   # 1 padded
    evaluation = shares(0, pad=False)
    assert sorted(i for share in evaluation for i in share) == list(range(20))
    assert [len(s) for s in evaluation] == [7, 7, 6]
    with pytest.raises(ValueError, match="rank must be in"):
        DistributedSampler(range(4), 2, 2)


def test_nccl_probe_says_why_not():
    from ember.backends.cupy.nccl import NCCLBackend
    probe = NCCLBackend().probe()
    if probe.available:
        pytest.skip("NCCL is present: the GPU jobs cover it")
    assert probe.reason and probe.fix and probe.reference.startswith("nccl-")


def test_ember_run_hostfile_becomes_mpiexec_f(tmp_path):
    import argparse

    import pytest
    from ember.tools.run import add_arguments, command
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node1:4\nnode2:4\n")
    args = parser.parse_args(["-n", "8", "--hostfile", str(hostfile), "train.py"])
    cmd = command(args, "mpiexec")
    assert cmd[:5] == ["mpiexec", "-n", "8", "-f", str(hostfile)]
    with pytest.raises(SystemExit, match="is not a file"):
        command(parser.parse_args(["--hostfile", str(tmp_path / "no"), "t.py"]), "mpiexec")
