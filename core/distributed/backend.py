"""The contract of a communication backend (MPI, NCCL, ...): what a plugin's
`ember_process_groups()` hook returns, and the communicator it connects.

The core speaks to a communicator in native arrays only (1-D and contiguous: NumPy arrays
for a host backend, CuPy arrays for NCCL) and never waits inside it: every operation
starts at once and returns a Request the core polls, so that the core can time it out.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..backend import Probe

# the reductions a communicator implements; ReduceOp.AVG is SUM and a division, and bool
# tensors are reduced as uint8 with MAX and MIN, both done by the core
REDUCTIONS = ("sum", "prod", "min", "max", "band", "bor", "bxor")


@runtime_checkable
class Request(Protocol):
    def test(self) -> bool:
        """True once the operation has completed; never blocks."""


class Communicator(Protocol):
    """A connected set of processes; `rank` of `size`."""

    rank: int
    size: int
    # device types whose tensors it moves without a copy through the host ("cpu" for MPI,
    # "cuda"/"rocm" for NCCL); tensors of other devices are staged through host memory
    device_types: tuple[str, ...]
    # numpy dtype names it reduces natively; other floats are reduced as float32
    reduce_dtypes: frozenset

    def allreduce(self, send, recv, op: str) -> Request:
        """recv = op over ranks of send (send None: recv is the input, in place)."""

    def broadcast(self, buf, root: int) -> Request: ...

    def allgather(self, send, recv) -> Request:
        """recv (size * len(send) elements) = every rank's send, in rank order."""

    def reduce_scatter(self, send, recv, op: str) -> Request:
        """recv = chunk `rank` of op over ranks of send (size * len(recv) elements)."""

    def reduce(self, send, recv, op: str, root: int) -> Request:
        """recv (on root only; None elsewhere) = op over ranks of send."""

    def gather(self, send, recv, root: int) -> Request: ...

    def scatter(self, send, recv, root: int) -> Request: ...

    def alltoall(self, send, recv) -> Request: ...

    def barrier(self) -> Request: ...

    def send(self, buf, peer: int, tag: int) -> Request: ...

    def recv(self, buf, peer: int, tag: int) -> Request: ...

    def split(self, ranks: list[int]) -> Communicator | None:
        """A communicator of `ranks` (in that order); collective over this one, None on
        the ranks outside."""

    def abort(self, code: int) -> None:
        """End every process of the job now (after a timeout, or an uncaught error)."""

    def close(self) -> None: ...


class CommBackend(Protocol):
    """What `ember_process_groups()` returns: one object per backend name."""

    name: str                              # "mpi", "nccl": init_process_group(backend=name)
    device_types: tuple[str, ...]          # devices it serves natively (see Communicator)

    def probe(self) -> Probe:
        """Whether it can run here, and if not why and what to install; never raises."""

    def connect(self, *, rank: int | None, size: int | None, control, device_index,
                timeout: float) -> Communicator:
        """The world communicator.  A launcher-based backend (MPI) knows rank and size
        itself and gets None; others get them with `control`, a host channel with
        allgather_bytes(data) -> list[bytes] (for exchanging a unique id)."""
