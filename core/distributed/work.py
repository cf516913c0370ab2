"""Work handles: a started collective, waited on by polling against a deadline.

MPI and NCCL cannot time out a collective, so none is ever waited on blindly: the core
starts it nonblocking and polls it.  Polling spins for the first milliseconds (a blocking
MPI call spins too, and most collectives end there), then yields the core to other
processes, then sleeps a millisecond between polls: a rank that waits for a slow one costs
little CPU, and a fast collective is not slowed by sleeps.
"""
from __future__ import annotations

import time
from collections.abc import Callable

SPIN_S = 0.005          # poll without yielding
YIELD_S = 0.25          # then poll with sched_yield between tests, then sleep


def poll(requests, deadline: float | None, progress: Callable[[], None] | None = None,
         since: float | None = None) -> bool:
    """Wait until every request tests complete (True) or the deadline passes (False).

    progress, if given, runs between rounds of tests: the group's checked collectives
    whose check completes meanwhile start their data (check.advance), as they would have
    started at their call without the check.  since: when the caller began to wait (a
    collective's check and then its data share one spin budget: spinning twice as long
    would take the CPU from a peer rank that needs it, where cores are few)."""
    start = since
    for request in requests:
        test = request.test
        if test():
            continue
        if start is None:
            start = time.monotonic()
        while True:
            for _ in range(32):             # the clock is read once per 32 tests
                if test():
                    break
            else:
                if progress is not None:
                    progress()
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return False
                waited = now - start
                if waited > YIELD_S:
                    time.sleep(0.001)
                elif waited > SPIN_S:
                    time.sleep(0)
                continue
            break
    return True


class Work:
    """What an async_op=True collective returns: wait() for it, then use its outputs.

    `finish` runs once, when the requests have completed (it writes staged results back
    into the output tensors).  A collective that does not complete before the group's
    timeout raises DistributedTimeoutError naming the ranks that did not arrive.

    A checked collective (see check.py) holds its `check` until every rank agreed on the
    call, and `start`, which issues its data then; a failed check completes the Work with
    its error, raised by wait().

    PyTorch
    -------
    ``torch.distributed.Work``
    """

    __slots__ = ("group", "kind", "seq", "requests", "finish", "outputs", "peer", "deadline",
                 "check", "start", "_done", "_error")

    def __init__(self, group, kind: str, seq: int, requests: list,
                 finish: Callable[[], None] | None = None, outputs: list | None = None,
                 peer: int | None = None, start: Callable[[], list] | None = None):
        self.group, self.kind, self.seq = group, kind, seq
        self.requests, self.finish, self.outputs, self.peer = requests, finish, outputs, peer
        self.deadline = time.monotonic() + group.timeout
        self.check = None
        self.start = start
        self._done = False
        self._error: BaseException | None = None

    def is_completed(self) -> bool:
        if self.check is not None:
            self.group.advance()
            if self.check is not None:
                return False
        if not self._done and all(r.test() for r in self.requests):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self._done and self._error is None

    def exception(self) -> BaseException | None:
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Block until done; True.  Raises DistributedTimeoutError at the deadline (the
        group's timeout from when the collective started, or `timeout` seconds from now
        if given), and the check's error when the ranks' calls did not agree."""
        deadline = self.deadline if timeout is None else time.monotonic() + timeout
        since = None
        if self.check is not None:
            since = time.monotonic()
            self.group.advance(self, deadline, since)
        if self._error is not None:
            raise self._error
        if self._done:
            return True
        group = self.group
        group.waiting(True)
        try:
            ok = poll(self.requests, deadline,
                      group.advance if getattr(group, "pending", None) else None, since)
        finally:
            group.waiting(False)
        if not ok:
            self._error = group.timed_out(self)
            raise self._error
        self._complete()
        return True

    def result(self) -> list:
        self.wait()
        return list(self.outputs or ())

    def _complete(self) -> None:
        self._done = True
        self.requests = ()
        if self.finish is not None:
            finish, self.finish = self.finish, None
            finish()

    def __repr__(self) -> str:
        state = ("failed" if self._error is not None else "completed" if self._done
                 else "checking" if self.check is not None else "pending")
        return f"<ember.distributed.Work {self.kind} #{self.seq} {state}>"


class Done:
    """A request that is already complete (a collective of one process)."""

    @staticmethod
    def test() -> bool:
        return True
