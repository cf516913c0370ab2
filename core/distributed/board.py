"""The arrival board: each rank's last collective, in memory shared by the ranks of a host.

A collective that times out must say which ranks did not arrive, but MPI and NCCL have no
way to ask.  So every rank writes, before it starts a collective, the collective's sequence
number and kind into its slot of a small file mapped by every rank of its host (a few
stores, no communication); a rank that times out reads the slots of the others.  A rank
that is computing, stuck, or gone still shows where it last was.  Ranks on other hosts
are not visible here; the timeout message says so.
"""
from __future__ import annotations

import mmap
import os
import tempfile

import numpy as np

# what a rank is doing, as written in its slot
NEVER, RUNNING, WAITING, EXITED, FAILED = range(5)
STATE_WORDS = {NEVER: "has not joined", RUNNING: "is running its own code",
               WAITING: "is waiting in", EXITED: "has exited", FAILED: "has failed"}
RING = 8                       # the kinds of a rank's last RING collectives
_SLOT = 4 + RING               # int64 words: seq, state, pid, spare, ring


def _folder() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


class Board:
    """One group's slots on this host; `rank` writes its own, reads everyone's."""

    def __init__(self, name: str, size: int, rank: int):
        self.path = os.path.join(_folder(), f"ember-dist-{name}")
        self.size, self.rank = size, rank
        nbytes = size * _SLOT * 8
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < nbytes:
                os.ftruncate(fd, nbytes)
            self._map = mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
        self.slots = np.frombuffer(self._map, dtype=np.int64).reshape(size, _SLOT)
        self._mine = self.slots[rank]
        self._mine[2] = os.getpid()
        self._mine[1] = RUNNING

    def unlink(self) -> None:
        """Remove the file's name once every rank has mapped it (the mappings stay)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def enter(self, seq: int, kind: int) -> None:
        mine = self._mine
        mine[4 + seq % RING] = kind
        mine[0] = seq

    def state(self, state: int) -> None:
        self._mine[1] = state

    def read(self, rank: int) -> tuple[int, int, int, int]:
        """(last sequence number, state, pid, kind of that collective) of a rank."""
        seq, state, pid = (int(x) for x in self.slots[rank, :3])
        return seq, state, pid, int(self.slots[rank, 4 + seq % RING])

    def kind_at(self, rank: int, seq: int) -> int | None:
        """The kind of a rank's collective number seq, if the ring still holds it."""
        last = int(self.slots[rank, 0])
        if seq > last or last - seq >= RING:
            return None
        return int(self.slots[rank, 4 + seq % RING])

    def close(self) -> None:
        self.slots = self._mine = None
        try:
            self._map.close()
        except BufferError:        # a view still alive somewhere: the OS frees it at exit
            pass
