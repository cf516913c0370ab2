"""A rank that crashes, dies, leaves early, stalls or calls another collective ends the job
with an error that names it, within the collective timeout (2 s here), never a hang."""
from __future__ import annotations

import pytest
from dist_helpers import JOBS, ember_run, job

CASES = {
    "raise": ["rank 1 failed (RuntimeError)", "rank 1 breaks on purpose"],
    "skip": ["all_reduce #3 in group 'world' (3 ranks) did not complete within 2 s",
             "did not arrive: rank 1 (pid", "has exited; its last collective was "
             "all_reduce #2"],
    "stall": ["did not complete within 2 s", "did not arrive: rank 1 (pid",
              "is running its own code; its last collective was all_reduce #2"],
}


@pytest.mark.parametrize("mode", sorted(CASES))
def test_a_failing_rank_ends_the_job(mode):
    done = job(3, "fail", mode, timeout=45)
    assert done.returncode != 0
    assert "was not stopped" not in done.stdout
    for text in CASES[mode]:
        assert text in done.stderr, (text, done.stderr)


def test_debug_mode_names_each_ranks_call_site():
    done = job(3, "fail", "mismatch", timeout=45, env={"EMBER_DISTRIBUTED_DEBUG": "1"})
    assert done.returncode != 0
    assert "was not stopped" not in done.stdout
    assert "called different collectives (EMBER_DISTRIBUTED_DEBUG=1)" in done.stderr
    assert "rank 1: collective #3 barrier() at " + JOBS in done.stderr
    assert "rank 0: collective #3 all_reduce(float32, (3,), SUM) at " + JOBS in done.stderr


@pytest.mark.parametrize("mode, says", [
    ("kill", "ember run: rank 1 failed: killed by SIGKILL"),
    ("raise", "ember run: rank 1 failed: RuntimeError: rank 1 breaks on purpose"),
    ("skip", "failed: DistributedTimeoutError: ember.distributed: all_reduce #3"),
])
def test_ember_run_names_the_rank_that_failed(mode, says):
    done = ember_run(3, JOBS, "fail", mode, timeout=45)
    assert done.returncode != 0
    assert "was not stopped" not in done.stdout
    summary = [line for line in done.stderr.splitlines() if line.startswith("ember run: ")]
    assert len(summary) == 1 and says in summary[0], done.stderr
    if mode == "skip":
        assert "did not arrive: rank 1 (pid" in summary[0]
