"""The NCCL communication backend (RCCL on ROCm), through CuPy's `cupy.cuda.nccl`.

init_process_group(backend="nccl"), or backend=None where a GPU tensor meets a
collective.  Each operation is enqueued on the device's current stream (after the kernels
that produced its input) and followed by an event; the core polls the event against the
timeout, and a communicator that timed out is aborted (ncclCommAbort), never waited on.
The unique id comes from the group's control channel (MPI, or the TCP store of torchrun's
MASTER_ADDR/MASTER_PORT).

Written against CuPy 14's API; it has not run on a GPU yet (no GPU was available where it
was written): tests/distributed runs it where `ember devices` shows a cuda device.
"""
from __future__ import annotations

import json

from ember.backend import Probe
from ember.plugins import hookimpl

REDUCE_DTYPES = frozenset({"float16", "float32", "float64", "int8", "uint8", "int32",
                           "int64"})


class _Event:
    """A request: done when the GPU has passed the event recorded after the operation."""

    __slots__ = ("event", "keep")

    def __init__(self, cp, stream, keep=()):
        self.event = cp.cuda.Event(disable_timing=True)
        self.event.record(stream)
        self.keep = keep              # buffers the GPU still reads or writes

    def test(self) -> bool:
        if self.event.done:
            self.keep = ()
            return True
        return False


class NCCLCommunicator:
    """Collectives on contiguous 1-D CuPy arrays of one device."""

    name = "nccl"
    device_types = ("cuda", "rocm")
    reduce_dtypes = REDUCE_DTYPES

    def __init__(self, cp, nccl, comm, rank: int, size: int, device_index: int, control):
        self.cp, self.nccl, self.comm = cp, nccl, comm
        self.rank, self.size, self.device_index = rank, size, device_index
        self.control = control
        self._ops = {"sum": nccl.NCCL_SUM, "prod": nccl.NCCL_PROD, "min": nccl.NCCL_MIN,
                     "max": nccl.NCCL_MAX}
        self._types = {"int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8,
                       "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64,
                       "float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32,
                       "float64": nccl.NCCL_FLOAT64}

    def __repr__(self) -> str:
        return f"<NCCLCommunicator rank {self.rank} of {self.size} on GPU {self.device_index}>"

    # -- helpers --------------------------------------------------------------------------
    def _type(self, arr):
        try:
            return self._types[arr.dtype.name]
        except KeyError:
            from ember.errors import DtypeNotSupportedError
            raise DtypeNotSupportedError(f"nccl: {arr.dtype.name} arrays cannot be moved by "
                                         f"NCCL; expected one of {sorted(self._types)}") from None

    def _op(self, op: str):
        if op not in self._ops:
            from ember.errors import DtypeNotSupportedError
            raise DtypeNotSupportedError(f"nccl: NCCL has no {op!r} reduction (bitwise "
                                         "reductions need backend='mpi')")
        return self._ops[op]

    def _enqueue(self, launch, *keep):
        with self.cp.cuda.Device(self.device_index):
            stream = self.cp.cuda.get_current_stream()
            launch(stream.ptr)
            return _Event(self.cp, stream, keep)

    def empty(self, n: int, dtype):
        with self.cp.cuda.Device(self.device_index):
            return self.cp.empty(n, dtype=dtype)

    # -- collectives --------------------------------------------------------------------------
    def allreduce(self, send, recv, op: str):
        src = recv if send is None else send
        return self._enqueue(lambda s: self.comm.allReduce(
            src.data.ptr, recv.data.ptr, recv.size, self._type(recv), self._op(op), s),
            src, recv)

    def broadcast(self, buf, root: int):
        return self._enqueue(lambda s: self.comm.broadcast(
            buf.data.ptr, buf.data.ptr, buf.size, self._type(buf), root, s), buf)

    def allgather(self, send, recv):
        return self._enqueue(lambda s: self.comm.allGather(
            send.data.ptr, recv.data.ptr, send.size, self._type(send), s), send, recv)

    def reduce_scatter(self, send, recv, op: str):
        return self._enqueue(lambda s: self.comm.reduceScatter(
            send.data.ptr, recv.data.ptr, recv.size, self._type(recv), self._op(op), s),
            send, recv)

    def reduce(self, buf, op: str, root: int):
        return self._enqueue(lambda s: self.comm.reduce(
            buf.data.ptr, buf.data.ptr, buf.size, self._type(buf), self._op(op), root, s),
            buf)

    def _grouped(self, pairs, keep):
        """Sends and receives as one NCCL group: [(kind, array, peer)]."""
        def launch(s):
            self.nccl.groupStart()
            try:
                for kind, arr, peer in pairs:
                    if arr.size == 0:
                        continue
                    if kind == "send":
                        self.comm.send(arr.data.ptr, arr.size, self._type(arr), peer, s)
                    else:
                        self.comm.recv(arr.data.ptr, arr.size, self._type(arr), peer, s)
            finally:
                self.nccl.groupEnd()
        return self._enqueue(launch, *keep)

    def gather(self, send, recv, root: int):
        n = send.size
        if self.rank != root:
            return self._grouped([("send", send, root)], (send,))
        pairs = [("recv", recv[r * n:(r + 1) * n], r) for r in range(self.size) if r != root]
        with self.cp.cuda.Device(self.device_index):
            recv[root * n:(root + 1) * n] = send
        return self._grouped(pairs, (send, recv))

    def scatter(self, send, recv, root: int):
        n = recv.size
        if self.rank != root:
            return self._grouped([("recv", recv, root)], (recv,))
        pairs = [("send", send[r * n:(r + 1) * n], r) for r in range(self.size) if r != root]
        with self.cp.cuda.Device(self.device_index):
            recv[...] = send[root * n:(root + 1) * n]
        return self._grouped(pairs, (send, recv))

    def alltoall(self, send, send_counts, recv, recv_counts):
        pairs, s_at, r_at = [], 0, 0
        for peer in range(self.size):
            s_part = send[s_at:s_at + send_counts[peer]]
            r_part = recv[r_at:r_at + recv_counts[peer]]
            s_at += send_counts[peer]
            r_at += recv_counts[peer]
            if peer == self.rank:
                with self.cp.cuda.Device(self.device_index):
                    r_part[...] = s_part
            else:
                pairs += [("send", s_part, peer), ("recv", r_part, peer)]
        return self._grouped(pairs, (send, recv))

    def barrier(self):
        flag = self.empty(1, "int32")
        return self.allreduce(None, flag, "sum")

    def send(self, buf, peer: int, tag: int):
        return self._grouped([("send", buf, peer)], (buf,))

    def recv(self, buf, peer: int | None, tag: int):
        if peer is None:
            from ember.distributed.errors import DistributedError
            raise DistributedError("recv: NCCL needs the sender's rank (src=...); a receive "
                                   "from any rank needs backend='mpi'")
        return self._grouped([("recv", buf, peer)], (buf,))

    def split(self, ranks: list[int]):
        # collective over every rank of the parent group: the members' NCCL id goes round
        # on the control channel, which every rank calls
        member = self.rank in ranks
        uid = self.nccl.get_unique_id() if member and self.rank == ranks[0] else ()
        ids = self.control.allgather_bytes(json.dumps(list(uid)).encode())
        if not member:
            return None
        first = tuple(json.loads(ids[ranks[0]]))
        with self.cp.cuda.Device(self.device_index):
            comm = self.nccl.NcclCommunicator(len(ranks), first, ranks.index(self.rank))
        return NCCLCommunicator(self.cp, self.nccl, comm, ranks.index(self.rank), len(ranks),
                                self.device_index, self.control)

    def abort(self, code: int) -> None:
        self.comm.abort()

    def close(self) -> None:
        self.comm.destroy()


class NCCLBackend:
    """The `nccl` communication backend; constructing it imports no CuPy."""

    name = "nccl"
    device_types = ("cuda", "rocm")

    def __repr__(self) -> str:
        return "NCCLBackend()"

    def probe(self) -> Probe:
        import warnings
        try:
            with warnings.catch_warnings():      # CuPy warns when libnccl is missing
                warnings.simplefilter("ignore")
                from cupy.cuda import nccl
        except Exception as exc:  # noqa: BLE001  (a probe says why, never raises)
            return Probe(False, f"CuPy cannot be imported ({type(exc).__name__}: {exc})",
                         "pip install ember-cuda12   (or ember-cuda13, ember-rocm)",
                         "nccl-no-cupy")
        if not getattr(nccl, "available", False):
            return Probe(False, "this CuPy build has no NCCL (cupy.cuda.nccl.available is "
                         "False)", "pip install nvidia-nccl-cu12   (CuPy loads it from "
                         "there); or use backend='mpi'", "nccl-not-in-cupy")
        return Probe(True)

    def connect(self, *, rank: int, size: int, control, device_index, timeout: float = 0.0):
        import cupy as cp
        from cupy.cuda import nccl
        uid = nccl.get_unique_id() if rank == 0 else ()
        ids = control.allgather_bytes(json.dumps(list(uid)).encode())
        index = int(device_index or 0) % max(cp.cuda.runtime.getDeviceCount(), 1)
        with cp.cuda.Device(index):
            comm = nccl.NcclCommunicator(size, tuple(json.loads(ids[0])), rank)
        return NCCLCommunicator(cp, nccl, comm, rank, size, index, control)


_VERSION = ("from cupy.cuda import nccl; print(nccl.available); "
            "print(nccl.get_version() if nccl.available else '')")


def doctor_check() -> list[dict]:
    """`ember doctor`: is NCCL in this CuPy (asked in a child process; no GPU touched).

    The CuPy probe's child (probe.query, once per process) already imported CuPy and tried
    NCCL's library: its facts answer for a CUDA CuPy without a second ~2 s child; a ROCm
    CuPy (whose query lists no libraries) and a missing answer ask CuPy here."""
    from .probe import query
    facts = query()
    if facts.get("query_error"):
        return [dict(reference="nccl-probe-hangs", severity="warning",
                     message=f"asking CuPy for NCCL did not finish: {facts['query_error']}")]
    if facts.get("import_error"):
        return [dict(reference="nccl-no-cupy", severity="warning",
                     message="no NCCL communication backend: CuPy cannot be imported",
                     seen=facts["import_error"],
                     fix="pip install ember-cuda12   (or ember-cuda13, ember-rocm)")]
    library = ((facts.get("toolkit") or {}).get("libraries") or {}).get("nccl")
    if not facts.get("is_hip") and isinstance(library, dict) and "available" in library:
        return _verdict(bool(library["available"]), library.get("version"))
    return _ask_cupy()


def _verdict(available: bool, version) -> list[dict]:
    if not available:
        return [dict(reference="nccl-not-in-cupy", severity="warning",
                     message="no NCCL communication backend: this CuPy has no NCCL",
                     fix="pip install nvidia-nccl-cu12   (CuPy loads it from there); "
                         "GPU tensors then go through host memory with backend='mpi'")]
    return [dict(reference="nccl-ok", severity="ok",
                 message="NCCL communication backend present (init_process_group('nccl'))",
                 seen=f"NCCL {version if version not in (None, '') else '?'} through CuPy")]


def _ask_cupy() -> list[dict]:
    import subprocess
    import sys
    try:
        done = subprocess.run([sys.executable, "-c", _VERSION], capture_output=True,
                              text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return [dict(reference="nccl-probe-hangs", severity="warning",
                     message="importing CuPy's NCCL did not finish within 120 s")]
    lines = done.stdout.split()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return [dict(reference="nccl-no-cupy", severity="warning",
                     message="no NCCL communication backend: CuPy cannot be imported",
                     seen=last, fix="pip install ember-cuda12   (or ember-cuda13, ember-rocm)")]
    return _verdict(lines[0] == "True", lines[1] if len(lines) > 1 else None)


@hookimpl
def ember_process_groups() -> list:
    return [NCCLBackend()]


@hookimpl
def ember_doctor_checks() -> list:
    return [doctor_check]
