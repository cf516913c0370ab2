"""An MPI communicator behind ember's Communicator contract: nonblocking mpi4py calls on
NumPy buffers (Iallreduce, Ibcast, ...), each returning a request the core polls."""
from __future__ import annotations

import numpy as np

FLOATS_AND_INTS = frozenset({"float32", "float64", "int8", "int16", "int32", "int64", "uint8"})


class _Request:
    """An mpi4py request as the core sees it: test() never blocks."""

    __slots__ = ("request", "status", "source")

    def __init__(self, request, status=None):
        self.request, self.status, self.source = request, status, None

    def test(self) -> bool:
        if self.status is None:
            return self.request.Test()
        if self.request.Test(self.status):
            self.source = self.status.Get_source()
            return True
        return False


class MPICommunicator:
    """Collectives on contiguous 1-D NumPy arrays; tensors of other devices arrive staged
    through host memory (MPICH from PyPI is not CUDA-aware)."""

    name = "mpi"
    device_types = ("cpu",)
    reduce_dtypes = FLOATS_AND_INTS

    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self._ops = {"sum": MPI.SUM, "prod": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX,
                     "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR}

    def __repr__(self) -> str:
        return f"<MPICommunicator rank {self.rank} of {self.size}>"

    @staticmethod
    def empty(n: int, dtype):
        return np.empty(n, dtype=dtype)

    def allreduce(self, send, recv, op: str) -> _Request:
        return _Request(self.comm.Iallreduce(self.MPI.IN_PLACE if send is None else send,
                                             recv, self._ops[op]))

    def broadcast(self, buf, root: int) -> _Request:
        return _Request(self.comm.Ibcast(buf, root))

    def allgather(self, send, recv) -> _Request:
        return _Request(self.comm.Iallgather(send, recv))

    def reduce_scatter(self, send, recv, op: str) -> _Request:
        return _Request(self.comm.Ireduce_scatter_block(send, recv, self._ops[op]))

    def reduce(self, buf, op: str, root: int) -> _Request:
        if self.rank == root:
            return _Request(self.comm.Ireduce(self.MPI.IN_PLACE, buf, self._ops[op], root))
        return _Request(self.comm.Ireduce(buf, None, self._ops[op], root))

    def gather(self, send, recv, root: int) -> _Request:
        return _Request(self.comm.Igather(send, recv if self.rank == root else None, root))

    def scatter(self, send, recv, root: int) -> _Request:
        return _Request(self.comm.Iscatter(send if self.rank == root else None, recv, root))

    def alltoall(self, send, send_counts, recv, recv_counts) -> _Request:
        byte = self.MPI.BYTE
        return _Request(self.comm.Ialltoallv(
            [send, (send_counts, _displacements(send_counts)), byte],
            [recv, (recv_counts, _displacements(recv_counts)), byte]))

    def barrier(self) -> _Request:
        return _Request(self.comm.Ibarrier())

    def send(self, buf, peer: int, tag: int) -> _Request:
        return _Request(self.comm.Isend(buf, peer, tag))

    def recv(self, buf, peer: int | None, tag: int) -> _Request:
        source = self.MPI.ANY_SOURCE if peer is None else peer
        return _Request(self.comm.Irecv(buf, source, tag), self.MPI.Status())

    def split(self, ranks: list[int]) -> MPICommunicator | None:
        # Split is collective over every rank of this communicator, members or not
        member = self.rank in ranks
        comm = self.comm.Split(0 if member else self.MPI.UNDEFINED,
                               ranks.index(self.rank) if member else 0)
        return MPICommunicator(comm) if member else None

    def abort(self, code: int) -> None:
        self.MPI.COMM_WORLD.Abort(code)

    def close(self) -> None:
        if self.comm != self.MPI.COMM_NULL:
            self.comm.Free()


def _displacements(counts) -> list[int]:
    out, total = [], 0
    for n in counts:
        out.append(total)
        total += n
    return out
