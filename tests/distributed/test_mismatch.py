"""Ranks that pass different dtypes, shapes, reductions or roots to a collective get an
error on every rank, naming each rank's call and call site, and no data moves; without
any debug flag, and never a hang (the job's collectives time out after 20 s, the job
after 90 s).  One job of 2 processes runs every case (jobs.py mismatch), with
init_process_group(backend="mpi") while the CUDA plugin is installed."""
from __future__ import annotations

import json

import pytest
from dist_helpers import JOBS, job

SITE = f" at {JOBS}:"
# case -> (rank 0's call, rank 1's call), as the error must name them
CALLS = {
    "all_reduce/shape": ("all_reduce(float32, (4,), SUM)", "all_reduce(float32, (5,), SUM)"),
    "all_reduce/float64": ("all_reduce(float32, (4,), SUM)", "all_reduce(float64, (4,), SUM)"),
    "all_reduce/int32": ("all_reduce(float32, (4,), SUM)", "all_reduce(int32, (4,), SUM)"),
    "all_reduce/op": ("all_reduce(float32, (4,), SUM)", "all_reduce(float32, (4,), MAX)"),
    "broadcast/shape": ("broadcast(float32, (2, 3), 0)", "broadcast(float32, (3, 2), 0)"),
    "broadcast/dtype": ("broadcast(float32, (6,), 0)", "broadcast(int64, (6,), 0)"),
    "broadcast/src": ("broadcast(float32, (6,), 0)", "broadcast(float32, (6,), 1)"),
    "all_gather/shape": ("all_gather(float32, (2,))", "all_gather(float32, (3,))"),
    "all_gather/dtype": ("all_gather(float32, (2,))", "all_gather(float64, (2,))"),
    "all_gather_into_tensor/shape": ("all_gather(float32, (2,))", "all_gather(float32, (3,))"),
    "reduce/op": ("reduce(float32, (4,), 0, SUM)", "reduce(float32, (4,), 0, MIN)"),
    "reduce_scatter_tensor/dtype": ("reduce_scatter(float32, (2,), SUM)",
                                    "reduce_scatter(float64, (2,), SUM)"),
    "gather/shape": ("gather(float32, (2,), 0)", "gather(float32, (3,), 0)"),
    "scatter/dtype": ("scatter(float32, (2,), 0)", "scatter(int32, (2,), 0)"),
    "all_to_all/sizes": ("all_to_all(float32)", "all_to_all(float32)"),
    "kind/all_reduce_vs_broadcast": ("all_reduce(float32, (4,), SUM)",
                                     "broadcast(float32, (4,), 0)"),
    "kind/barrier_vs_all_reduce": ("all_reduce(float32, (4,), SUM)", "barrier()"),
    "async/all_reduce": ("all_reduce(float32, (4,), SUM)", "all_reduce(float32, (5,), SUM)"),
}
# one rank refuses its own arguments: it raises its own error, the other a DistributedError
# naming it (instead of starting the collective alone and waiting for the timeout)
REFUSED = {
    "refused/gather_list": (0, "DistributedError", "gather_list must be a list of 2 tensors"),
    "refused/avg_of_int": (1, "DtypeNotSupportedError", "ReduceOp.AVG needs a floating tensor"),
}
DATA_CHANNEL = {"all_reduce/shape", "all_reduce/int32", "all_reduce/op", "broadcast/shape",
                "all_gather/dtype", "refused/gather_list", "all_to_all/sizes",
                "async/all_reduce"}


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mismatch")
    done = job(2, "mismatch", str(folder), timeout=90)
    assert done.returncode == 0, done.stderr[-4000:]
    records: dict = {}
    for rank in (0, 1):
        for line in (folder / f"rank{rank}.jsonl").read_text().splitlines():
            record = json.loads(line)
            key = ("backend" if "backend" in record else "done" if "done" in record
                   else record["channel"], record.get("case"), rank)
            records[key] = record
    return records


def test_backend_mpi_needs_only_mpi(seen):
    from ember.distributed.group import comm_backends
    backends = comm_backends()
    assert "nccl" in backends, "the CUDA plugin (ember-cuda12) should be installed here"
    for rank in (0, 1):
        assert seen[("backend", None, rank)]["backend"] == "mpi"
        assert ("done", None, rank) in seen          # and destroy_process_group ended


def _runs(cases) -> list:
    return [(c, "mpi") for c in sorted(cases)] + [(c, "data") for c in sorted(cases)
                                                  if c in DATA_CHANNEL]


@pytest.mark.parametrize("case, channel", _runs(CALLS))
def test_every_rank_raises_naming_every_call(seen, channel, case):
    for rank in (0, 1):
        record = seen[(channel, case, rank)]
        assert record["error"] == "CollectiveMismatchError", record
        message = record["message"]
        assert "so no data moved on any rank" in message
        for r, call in enumerate(CALLS[case]):
            assert f"\n  rank {r}: {call}{SITE}" in message, (r, call, message)
        if case != "all_to_all/sizes":
            assert f"rank 0: {CALLS[case][0]}; rank 1: {CALLS[case][1]}" in message.split(
                "\n")[0]
        else:
            assert "the ranks' sizes disagree" in message
        assert record["moved"] == [], f"rank {rank}: a tensor changed: {record}"


@pytest.mark.parametrize("case, channel", _runs(REFUSED))
def test_a_rank_that_refuses_its_arguments_stops_every_rank(seen, channel, case):
    refuser, error, text = REFUSED[case]
    own = seen[(channel, case, refuser)]
    assert own["error"] == error and text in own["message"], own
    other = seen[(channel, case, 1 - refuser)]
    assert other["error"] == "DistributedError", other
    assert (f"did not start on any rank: rank {refuser} refused its arguments"
            in other["message"]) and text in other["message"] and SITE in other["message"]
    assert own["moved"] == other["moved"] == []


@pytest.mark.parametrize("channel", ["mpi", "data"])
def test_a_failed_async_collective_does_not_stop_the_next(seen, channel):
    # the job checked the second all_reduce's result (jobs.py raises on a wrong value)
    for rank in (0, 1):
        assert (channel, "async/then_good", rank) in seen


@pytest.mark.parametrize("channel", ["mpi", "data"])
def test_an_async_collective_starts_while_its_rank_waits_for_a_recv(seen, channel):
    # rank 1 sends only after its all_reduce completed, which needs rank 0's data started
    # while rank 0 waits in recv; the job checked both results
    for rank in (0, 1):
        assert (channel, "async/progress", rank) in seen
