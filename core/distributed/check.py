"""The check every collective makes before any data moves: the ranks agree that they called
the same collective on the same dtype and shape, with the same reduction and root.

Without it MPI moves whatever the ranks pass: an all_reduce of 4 values on one rank and 5
on another reads past the first rank's buffer, float32 against float64 gives garbage, and
each rank returns normally.

How: each rank sums three 64-bit lanes with the others in one small nonblocking
all-reduce, on a communicator of its own (so that it never meets the data, or the
group's control exchanges, in MPI's matching order):

- lane 0: a fingerprint of the call (kind, dtype, shape, reduction, root; cached per
  signature).  The ranks agree when the sum is size x this rank's fingerprint;
- lane 1: all_to_all's sizes: each rank adds a hash of every (sender, receiver, bytes)
  it sends and subtracts one of every pair it receives; the sum is 0 when every rank
  expects what its peers send;
- lane 2: 1 from a rank whose own arguments were refused (its local error), so that the
  others do not start the collective alone and wait for it until the timeout.

Every rank sees the same sums, so every rank reaches the same verdict: all start the data
(in call order), or all raise.  Only on a failed check do the ranks exchange readable
descriptions (each rank's call, shape, dtype, reduction and call site), on a second
communicator.  A collective with async_op=True does not wait for its check: its data
starts in call order as soon as the check completes (when any Work of the group is
polled or waited on, or the next collective is called), so that DDP's bucket all-reduces
overlap backward as before.

A group whose ranks have no MPI between them (NCCL under torchrun) checks on its data
communicator instead, at the call (DataChannel).
"""
from __future__ import annotations

import hashlib
import sys

import numpy as np

from .errors import CollectiveMismatchError, DistributedError
from .work import Done, Work, poll

MASK = (1 << 64) - 1
DESCRIPTION_BYTES = 1024        # each rank's description, cut to this width

_FINGERPRINTS: dict = {}


def fingerprint(signature: tuple) -> int:
    """A 64-bit hash of a collective's signature, the same in every process."""
    fp = _FINGERPRINTS.get(signature)
    if fp is None:
        if len(_FINGERPRINTS) > 4096:
            _FINGERPRINTS.clear()
        digest = hashlib.blake2b(repr(signature).encode(), digest_size=8).digest()
        fp = _FINGERPRINTS[signature] = int.from_bytes(digest, "little")
    return fp


def pair_hash(sender: int, receiver: int, nbytes: int) -> int:
    """splitmix64 of one all_to_all transfer (sender -> receiver, nbytes)."""
    z = (sender * 0x9E3779B97F4A7C15 + receiver * 0xBF58476D1CE4E5B9 + nbytes
         + 0x94D049BB133111EB) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def call_site() -> str:
    """file:line of the first caller outside ember (for DDP's bucket all-reduces: the
    line that called backward)."""
    frame = sys._getframe(1)
    while frame is not None and _ember(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _ember(name: str) -> bool:
    return name == "ember" or name.startswith("ember.")


def describe(kind: str, signature: tuple) -> str:
    """all_reduce(float32, (4, 3), SUM): a collective as the user called it."""
    parts = [str(tuple(x)) if isinstance(x, tuple) else str(x) for x in signature]
    return f"{kind}({', '.join(parts)})"


class Check:
    """One collective's pending check: its lanes (summed in place by the channel), what
    this rank called, and the error its own arguments raised, if any."""

    __slots__ = ("lanes", "request", "fingerprint", "kind", "signature", "error", "site")

    def __init__(self, kind: str, signature: tuple, pairs: int, error):
        self.kind, self.signature, self.error = kind, signature, error
        self.fingerprint = fp = fingerprint((kind, signature))
        self.lanes = np.array([fp, pairs & MASK, 1 if error is not None else 0], np.uint64)
        self.request = None
        self.site = None           # the call site, taken at the call for async collectives


# --- channels: where the lanes are summed and the descriptions exchanged ---------------------

class MPIChannel:
    """Checks over two host communicators of the group's ranks, apart from its data and
    control: one sums the lanes (nonblocking), the other carries descriptions after a
    failed check."""

    synchronous = False

    def __init__(self, lanes_comm, text_comm):
        self.lanes_comm, self.text_comm = lanes_comm, text_comm

    def start(self, check: Check, group, seq: int):
        check.request = self.lanes_comm.allreduce(None, check.lanes, "sum")

    def exchange(self, text: bytes, group, kind: str, seq: int) -> list[bytes]:
        return _exchange(self.text_comm, text, group, kind, seq)

    def split(self, ranks, group=None):
        lanes, text = self.lanes_comm.split(ranks), self.text_comm.split(ranks)
        return None if lanes is None else MPIChannel(lanes, text)

    def close(self) -> None:
        self.lanes_comm.close()
        self.text_comm.close()


class DataChannel:
    """Checks on the group's own data communicator (NCCL without MPI), completed at the
    call: the data is issued after the check on the same communicator, so the two can
    never cross in its order."""

    synchronous = True

    def __init__(self, group, device_type: str):
        self.group, self.device_type = group, device_type

    def _comm(self):
        return self.group.comm_for(self.device_type)

    def start(self, check: Check, group, seq: int):
        comm = self._comm()
        native = comm.empty(3, np.int64)
        lanes = check.lanes.view(np.int64)
        if isinstance(native, np.ndarray):
            native[:] = lanes
        else:
            native.set(lanes)                   # a device array (CuPy)
        Work(group, check.kind, seq, [comm.allreduce(None, native, "sum")]).wait()
        lanes[:] = native if isinstance(native, np.ndarray) else native.get()
        check.request = Done

    def exchange(self, text: bytes, group, kind: str, seq: int) -> list[bytes]:
        return _exchange(self._comm(), text, group, kind, seq)

    def split(self, ranks, group=None):
        return None if group is None else DataChannel(group, self.device_type)

    def close(self) -> None:
        pass


def _exchange(comm, text: bytes, group, kind: str, seq: int) -> list[bytes]:
    """Every rank's text (cut to DESCRIPTION_BYTES), over comm, within the timeout."""
    send = comm.empty(DESCRIPTION_BYTES, np.uint8)
    recv = comm.empty(DESCRIPTION_BYTES * group.size, np.uint8)
    mine = np.zeros(DESCRIPTION_BYTES, np.uint8)
    body = text[:DESCRIPTION_BYTES]
    mine[:len(body)] = np.frombuffer(body, np.uint8)
    if isinstance(send, np.ndarray):
        send[:] = mine
    else:
        send.set(mine)
    Work(group, kind, seq, [comm.allgather(send, recv)]).wait()
    host = recv if isinstance(recv, np.ndarray) else recv.get()
    return [host[r * DESCRIPTION_BYTES:(r + 1) * DESCRIPTION_BYTES].tobytes().rstrip(b"\0")
            for r in range(group.size)]


# --- the queue of checked collectives ----------------------------------------------------------

def submit(group, work: Work, check: Check, async_op: bool) -> None:
    """Start work's check; its data starts (in call order) once every rank agreed."""
    channel = group.checker
    if async_op or channel.synchronous:
        check.site = call_site()     # later, the stack is no longer the caller's
    channel.start(check, group, work.seq)
    work.check = check
    group.pending.append(work)
    if channel.synchronous or check.error is not None:
        advance(group, work)         # nothing may cross a synchronous check; a local
        if check.error is not None:  # error raises at the call, as without the check
            raise check.error


def advance(group, until: Work | None = None, deadline: float | None = None,
            since: float | None = None) -> None:
    """Settle the group's checked collectives in call order: start the data of each whose
    check passed, fail each whose check did not.  Without `until`, only those whose check
    has already completed; with it, wait (until `deadline`, by default its own) for every
    check up to `until` (`since`: when the wait began, see work.poll)."""
    pending = group.pending
    if until is None and group.advancing:
        return                       # polled from inside a settlement (its exchange)
    group.advancing = True
    try:
        _advance(group, pending, until, deadline, since)
    finally:
        group.advancing = False


def _advance(group, pending, until, deadline, since) -> None:
    while pending:
        work = pending[0]
        check = work.check
        if not check.request.test():
            if until is None:
                return
            group.waiting(True)
            try:
                ok = poll([check.request], until.deadline if deadline is None else deadline,
                          since=since)
            finally:
                group.waiting(False)
            if not ok:
                work._error = group.timed_out(work)
                work._done = True
                pending.popleft()
                raise work._error
        pending.popleft()
        work.check = None
        _settle(group, work, check)
        if work is until:
            return


def _settle(group, work: Work, check: Check) -> None:
    lanes = check.lanes
    if (int(lanes[0]) == (group.size * check.fingerprint) & MASK and int(lanes[1]) == 0
            and int(lanes[2]) == 0):
        start, work.start = work.start, None
        try:
            work.requests = start()
        except BaseException as exc:      # the communicator refused it (on every rank)
            work.finish, work._done, work._error = None, True, exc
            raise
        return
    work.start = work.finish = None
    work._done = True
    work._error = _failure(group, work, check)


def _failure(group, work: Work, check: Check) -> BaseException:
    """The error of a failed check, the same story on every rank."""
    site = check.site or call_site()
    error = check.error
    refusal = "" if error is None else f"{type(error).__name__}: {error}"
    mine = "\x1f".join([describe(check.kind, check.signature), site, refusal])
    parts = [t.decode("utf-8", "replace").split("\x1f") + ["", "", ""] for t in
             group.checker.exchange(mine.encode(), group, check.kind, work.seq)]
    if error is not None:
        return error              # this rank's own error, as without the check
    ranks, n = group.ranks, group.size
    refused = [r for r in range(n) if parts[r][2]]
    if refused:
        head = (f"ember.distributed: {check.kind} #{work.seq} in group {group.name!r} did "
                f"not start on any rank: rank {', '.join(str(ranks[r]) for r in refused)} "
                f"refused its arguments ({parts[refused[0]][2].splitlines()[0]})")
        lines = [f"rank {ranks[r]}: {parts[r][0]} at {parts[r][1]}"
                 + (f": {parts[r][2]}" if parts[r][2] else "") for r in range(n)]
        fix = "fix: the error of the rank that refused its arguments says what to change"
        return DistributedError("\n  ".join([head, *_cut(lines), fix]))
    calls: dict = {}
    for r in range(n):
        calls.setdefault(parts[r][0], []).append(str(ranks[r]))
    summary = "; ".join(f"rank{'s' if len(who) > 1 else ''} {', '.join(_cut(who, 8))}: "
                        f"{call}" for call, who in list(calls.items())[:4])
    head = (f"ember.distributed: {check.kind} #{work.seq} in group {group.name!r}: the "
            f"ranks' calls differ ({summary}{'; ...' if len(calls) > 4 else ''}), so no data "
            f"moved on any rank")
    lines = [f"rank {ranks[r]}: {parts[r][0]} at {parts[r][1]}" for r in range(n)]
    fix = ("fix: every rank must call the same collective with the same dtype and shape "
           "(and reduction op and root), in the same order; look for a branch on the rank "
           "or on data that differs between ranks")
    if check.kind == "all_to_all" and len(calls) == 1:
        fix = ("fix: output_tensor_list[i] on rank j must have as many elements as "
               "input_tensor_list[j] on rank i, for every pair of ranks")
        head = (f"ember.distributed: all_to_all #{work.seq} in group {group.name!r}: the "
                "ranks' sizes disagree (what a rank sends to another is not what that rank "
                "expects to receive), so no data moved on any rank")
    return CollectiveMismatchError("\n  ".join([head, *_cut(lines), fix]))


def _cut(items: list, most: int = 32) -> list:
    return items if len(items) <= most else [*items[:most], f"... ({len(items) - most} more)"]
