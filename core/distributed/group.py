"""Process groups: init_process_group, the default group, new_group, and what a group knows
about its ranks (where each one last was, for the timeout messages)."""
from __future__ import annotations

import atexit
import os
import secrets
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass
from datetime import timedelta

from . import check as _check
from .board import EXITED, FAILED, NEVER, RUNNING, STATE_WORDS, WAITING, Board
from .errors import DistributedError, DistributedTimeoutError

DEFAULT_TIMEOUT = 600.0      # seconds, as torch's NCCL default; EMBER_DISTRIBUTED_TIMEOUT

# What a collective is, for the arrival board and the fingerprints (index = code).
KINDS = ("init", "barrier", "all_reduce", "broadcast", "all_gather", "reduce_scatter",
         "reduce", "gather", "scatter", "all_to_all", "new_group", "control")
CODE = {k: i for i, k in enumerate(KINDS)}

# Launchers and the variables each sets: rank, world size, local rank, local size.
# MPI launchers first: `ember run` sets torchrun's variables too, for scripts that read
# them; torchrun before Slurm, since torchrun often runs inside a Slurm allocation.
LAUNCHERS = (
    ("MPICH", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("MVAPICH", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
     "MV2_COMM_WORLD_LOCAL_SIZE"),
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)


@dataclass(frozen=True)
class Launch:
    """Who started this process, and where it stands among its peers."""

    source: str
    rank: int
    size: int
    local_rank: int
    local_size: int


def launch_env(environ=None) -> Launch | None:
    """The rank and world size a launcher put into the environment; None if none did."""
    env = os.environ if environ is None else environ
    for source, rank, size, local_rank, local_size in LAUNCHERS:
        if rank in env and size in env:
            try:
                r, n = int(env[rank]), int(env[size])
                lr = int(env.get(local_rank, r))
                ln = int(str(env.get(local_size, n)).split("(")[0].split(",")[0])
            except ValueError:
                raise DistributedError(
                    f"init_process_group: {source} variables {rank}={env[rank]!r}, "
                    f"{size}={env[size]!r} are not integers; expected a rank and a world "
                    "size set by the launcher") from None
            return Launch(source, r, n, lr, ln)
    return None


def _seconds(timeout) -> float:
    if timeout is None:
        raw = os.environ.get("EMBER_DISTRIBUTED_TIMEOUT")
        try:
            return float(raw) if raw else DEFAULT_TIMEOUT
        except ValueError:
            raise DistributedError(f"EMBER_DISTRIBUTED_TIMEOUT={raw!r} is not a number of "
                                   "seconds; set it to e.g. 600") from None
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if not seconds > 0:
        raise DistributedError(f"init_process_group: timeout must be > 0 seconds, got "
                               f"{timeout!r}")
    return seconds


class ProcessGroup:
    """A set of ranks that run collectives together (torch.distributed.ProcessGroup).

    `comms` maps a device type to the communicator that moves its tensors ("*": every
    other type, staged through host memory); `control` is a host communicator of the same
    ranks, kept apart from the data so that checks never interleave with collectives.

    `checker` carries the check every collective makes before its data moves (check.py):
    the ranks agree on kind, dtype, shape, reduction and root.  `verify` = False skips it
    (benchmarks/distributed.py measures its cost that way); `pending` holds the collectives
    whose check has not settled yet, in call order.

    PyTorch
    -------
    ``torch.distributed.ProcessGroup``
    """

    def __init__(self, backend: str, ranks: list[int], rank: int, comms: dict, control,
                 timeout: float, board: Board, hosts: list[str], name: str, checker=None):
        self.backend, self.ranks, self.rank = backend, ranks, rank
        self.size = len(ranks)
        self.comms, self.control = comms, control
        self.timeout, self.board, self.hosts, self.name = timeout, board, hosts, name
        self.seq = 0
        self.debug = os.environ.get("EMBER_DISTRIBUTED_DEBUG", "") not in ("", "0")
        self.broken = ""
        self.lazy: dict = {}          # device type -> callable making its communicator
        self.nccl = self.device_id = None
        self.children = 0
        self.checker = checker
        self.verify = True
        self.pending: deque = deque()
        self.advancing = False

    def __repr__(self) -> str:
        return (f"<ember.distributed.ProcessGroup {self.name!r} backend={self.backend} "
                f"rank {self.rank} of {self.size}>")

    # -- ranks -------------------------------------------------------------------------
    def group_rank(self, global_rank: int, what: str) -> int:
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise DistributedError(
                f"{what}: rank {global_rank} is not in group {self.name!r} (its ranks are "
                f"{self.ranks}); pass a global rank of a member") from None

    def comm_for(self, device_type: str):
        comm = self.comms.get(device_type)
        if comm is None and device_type in self.lazy:
            comm = self.comms[device_type] = self.lazy.pop(device_type)()
        if comm is None:
            comm = self.comms.get("*")
        if comm is None:
            raise DistributedError(
                f"the {self.backend} process group moves tensors of "
                f"{', '.join(sorted(k for k in self.comms if k != '*'))} devices, not "
                f"{device_type}; move the tensor (.to(...)) or init_process_group with "
                "backend='mpi' (or None: MPI for the host, NCCL for GPUs)")
        return comm

    @property
    def checking(self) -> bool:
        """Whether collectives check the ranks' calls before moving data."""
        return self.verify and self.size > 1 and self.checker is not None

    def advance(self, until=None, deadline: float | None = None,
                since: float | None = None) -> None:
        """Settle the checks of pending collectives in call order (check.advance)."""
        _check.advance(self, until, deadline, since)

    # -- the arrival board --------------------------------------------------------------
    def start(self, kind: str) -> int:
        """Number a collective and post it on the board (before it starts)."""
        if self.broken:
            raise DistributedError(
                f"{kind}: process group {self.name!r} cannot be used after {self.broken}; "
                "the job ends at exit. Fix the cause and restart the job")
        self.seq += 1
        self.board.enter(self.seq, CODE[kind])
        return self.seq

    def waiting(self, flag: bool) -> None:
        self.board.state(WAITING if flag else RUNNING)

    def timed_out(self, work) -> DistributedTimeoutError:
        """The error for a collective (or a point-to-point op) past its deadline."""
        self.broken = f"the timeout of {work.kind} #{work.seq}"
        _WORLD_STATE["broken"] = True
        where = (f"{work.kind} #{work.seq}" if work.peer is None
                 else f"{work.kind} from any rank" if work.peer < 0
                 else f"{work.kind} with rank {self.ranks[work.peer]}")
        head = (f"ember.distributed: {where} in group {self.name!r} ({self.size} ranks) did "
                f"not complete within {self.timeout:g} s on rank {self.ranks[self.rank]}")
        lines = [head] + self._missing(work)
        lines.append(
            "fix: every rank must call the same collectives in the same order "
            "(EMBER_DISTRIBUTED_DEBUG=1 names the call site where they part); a rank "
            "that is only slow needs a longer timeout: init_process_group(timeout=...) "
            "or EMBER_DISTRIBUTED_TIMEOUT=seconds. The group is unusable now; the job "
            "ends when this process exits")
        return DistributedTimeoutError("\n  ".join(lines))

    def _missing(self, work) -> list[str]:
        here = self.hosts[self.rank]
        local = [r for r in range(self.size) if self.hosts[r] == here and r != self.rank]
        remote = [r for r in range(self.size) if self.hosts[r] != here]
        peers = local if work.peer is None or work.peer < 0 else [
            p for p in local if p == work.peer]
        behind, ahead, other_kind = [], [], []
        for r in peers:
            seq, state, pid, _kind = self.board.read(r)
            word = STATE_WORDS[state]
            last = (f"{KINDS[_kind]} #{seq}" if seq else "no collective yet")
            if work.peer is not None or seq < work.seq or state == NEVER:
                if state == WAITING:
                    behind.append(f"rank {self.ranks[r]} (pid {pid}) {word} {last}")
                elif state in (EXITED, FAILED):
                    behind.append(f"rank {self.ranks[r]} (pid {pid}) {word}; its last "
                                  f"collective was {last}")
                else:
                    behind.append(f"rank {self.ranks[r]} (pid {pid}) {word}; its last "
                                  f"collective was {last}")
            else:
                kind = self.board.kind_at(r, work.seq)
                if kind is not None and KINDS[kind] != work.kind:
                    other_kind.append(f"rank {self.ranks[r]} called {KINDS[kind]} as "
                                      f"collective #{work.seq}")
                else:
                    ahead.append(str(self.ranks[r]))
        lines = []
        if behind:
            lines.append("did not arrive: " + "; ".join(behind))
        if other_kind:
            lines.append("called something else: " + "; ".join(other_kind))
        if ahead and work.peer is None:
            lines.append(f"arrived: rank {', '.join(ahead + [str(self.ranks[self.rank])])}")
        if remote:
            hosts = sorted({self.hosts[r] for r in remote})
            lines.append(f"ranks {', '.join(str(self.ranks[r]) for r in remote)} run on "
                         f"other hosts ({', '.join(hosts)}): their state is not visible "
                         "from this one")
        if not behind and not other_kind and not remote:
            lines.append("every rank arrived, yet the collective did not complete: the "
                         "ranks passed different shapes, dtypes or roots, or the backend "
                         "is stuck")
        return lines

    # -- control: small host exchanges, timed ----------------------------------------------
    def allgather_bytes(self, data: bytes, kind: str = "control") -> list[bytes]:
        """Every rank's bytes, in rank order (for checks and descriptions, never tensors)."""
        return self.control.allgather_bytes(data, self, kind)


class _WorldMeta(type):
    """The metaclass of group and GroupMember: their class property WORLD is the default
    process group once init_process_group made it (None before), as torch's."""

    @property
    def WORLD(cls):  # noqa: N802  (torch's name)
        return _WORLD_STATE["group"]


class GroupMember(metaclass=_WorldMeta):
    """torch's sentinel: what new_group returns on the ranks it leaves out; WORLD is the
    default group.

    PyTorch
    -------
    ``torch.distributed.GroupMember``
    """

    NON_GROUP_MEMBER = object()


class group(metaclass=_WorldMeta):  # noqa: N801  (torch's name)
    """torch.distributed.group: group.WORLD is the default process group (None before
    init_process_group).

    PyTorch
    -------
    ``torch.distributed.group``
    """


_WORLD_STATE: dict = {"group": None, "broken": False, "guards": False}


def world() -> ProcessGroup:
    group = _WORLD_STATE["group"]
    if group is None:
        raise DistributedError(
            "ember.distributed: the default process group is not initialized; call "
            "ember.distributed.init_process_group() first (under `ember run -n N` or "
            "mpiexec)")
    return group


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run in this process.

    PyTorch
    -------
    ``torch.distributed.is_initialized``
    """
    return _WORLD_STATE["group"] is not None


def resolve(group) -> ProcessGroup | None:
    """The group a collective runs on: None for a rank outside it (torch: a no-op)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    return world() if group is None else group


# --- backends ------------------------------------------------------------------------------

def comm_backends() -> dict:
    """The communication backends of every installed plugin, by name (loads the plugins)."""
    from .. import plugins
    plugins.load_all()
    found: dict = {}
    for result in plugins.manager().hook.ember_process_groups():
        for backend in result or ():
            found.setdefault(backend.name, backend)
    return found


def _available(backends: dict, name: str):
    backend = backends.get(name)
    if backend is None:
        fix = ("pip install ember-mpi   (from this repository: pip install ./plugins/"
               "ember-mpi; it brings mpi4py and MPICH)" if name == "mpi" else
               "pip install ember-cuda12 (or ember-cuda13, ember-rocm): NCCL comes with "
               "CuPy's GPU plugins")
        raise DistributedError(
            f"init_process_group: no installed plugin provides the {name!r} communication "
            f"backend (installed: {', '.join(sorted(backends)) or 'none'})\n  fix: {fix}")
    probe = backend.probe()
    if not probe.available:
        raise DistributedError(
            f"init_process_group: the {name!r} backend is not usable here: {probe.reason}"
            + (f"\n  fix: {probe.fix}" if probe.fix else ""))
    return backend


def init_process_group(backend: str | None = None, init_method: str | None = "env://",
                       timeout=None, world_size: int = -1, rank: int = -1,
                       group_name: str = "world", device_id=None) -> None:
    """Join the default process group (torch.distributed.init_process_group).

    backend: "mpi" (every device; tensors off the CPU are staged through host memory),
    "nccl" (CUDA/ROCm tensors, through CuPy), or None: MPI, with NCCL for GPU tensors
    where CuPy's NCCL works.  Rank and world size come from the launcher (`ember run`,
    mpiexec, srun; torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT for "nccl").

    PyTorch
    -------
    ``torch.distributed.init_process_group``
    """
    if is_initialized():
        raise DistributedError("init_process_group: the default process group is already "
                               "initialized; call destroy_process_group() first")
    if backend is not None and backend not in ("mpi", "nccl"):
        raise DistributedError(
            f"init_process_group: unknown backend {backend!r}; expected 'mpi', 'nccl' or "
            "None (gloo is PyTorch's own; ember uses MPI for the host)")
    if init_method not in (None, "env://"):
        raise DistributedError(f"init_process_group: init_method {init_method!r} is not "
                               "supported; use 'env://' (the launcher's variables)")
    seconds = _seconds(timeout)
    launch = launch_env()
    backends = comm_backends()
    if backend == "nccl" and not _mpi_launched(launch):
        control = _store_control(launch, rank, world_size, seconds)
        comms = {}
        nccl = _available(backends, "nccl")
        rank_, size = control.rank, control.size
        host_comm = checker = None
    else:
        mpi = _available(backends, "mpi")
        host_comm = mpi.connect(rank=None, size=None, control=None, device_index=None,
                                timeout=seconds)
        _check_launch(launch, host_comm, rank, world_size)
        rank_, size = host_comm.rank, host_comm.size
        everyone = list(range(size))
        control = HostControl(host_comm.split(everyone))
        checker = _check.MPIChannel(host_comm.split(everyone), host_comm.split(everyone))
        comms = {"*": host_comm} if backend != "nccl" else {}
        # backend=None: NCCL is probed at the first GPU collective (importing CuPy here
        # would slow every job down), and GPU tensors go through MPI if it does not work;
        # backend="mpi" needs MPI alone: GPU tensors are staged through host memory
        nccl = (backends.get("nccl") if backend is None else
                _available(backends, "nccl") if backend == "nccl" else None)
    hosts, token = _meet(control, rank_, size, seconds)
    board = Board(f"{token}-0", size, rank_)
    group = ProcessGroup(backend or "mpi", list(range(size)), rank_, comms, control,
                         seconds, board, hosts, group_name, checker)
    _add_nccl(group, nccl, device_id)
    if checker is None:             # NCCL without MPI: checks on the data communicator
        group.checker = _check.DataChannel(group, nccl.device_types[0])
    _WORLD_STATE.update(group=group, broken=False, token=token, host_comm=host_comm)
    group.allgather_bytes(b"", "init")          # every rank has mapped the board
    if rank_ == min(r for r in range(size) if hosts[r] == hosts[rank_]):
        board.unlink()
    _install_guards()


def _mpi_launched(launch: Launch | None) -> bool:
    return launch is not None and launch.source != "torchrun"


def _check_launch(launch: Launch | None, comm, rank: int, world_size: int) -> None:
    expected = world_size if world_size > 0 else (launch.size if launch else comm.size)
    if comm.size != expected:
        how = (f"{launch.source} says {launch.size} (rank {launch.rank})" if launch
               else f"world_size={world_size}")
        raise DistributedError(
            f"init_process_group: MPI sees {comm.size} process(es) but {how}; the mpi "
            "backend needs an MPI launcher: run `ember run -n N script.py` or `mpiexec -n N "
            "python script.py` (torchrun starts processes that MPI cannot connect; with "
            "torchrun use backend='nccl')")
    if rank >= 0 and rank != comm.rank:
        raise DistributedError(f"init_process_group: rank={rank} was passed but the MPI "
                               f"launcher made this process rank {comm.rank}; drop rank=")


def _store_control(launch, rank, world_size, seconds):
    from .store import StoreControl
    if launch is None and (rank < 0 or world_size < 0):
        raise DistributedError(
            "init_process_group(backend='nccl'): no launcher variables (RANK, WORLD_SIZE, "
            "MASTER_ADDR, MASTER_PORT); start the job with `ember run -n N`, torchrun, or "
            "pass rank= and world_size= with MASTER_ADDR/MASTER_PORT set")
    r = rank if rank >= 0 else launch.rank
    n = world_size if world_size > 0 else launch.size
    return StoreControl(os.environ.get("MASTER_ADDR", "127.0.0.1"),
                        int(os.environ.get("MASTER_PORT", "29500")), r, n, seconds)


def _add_nccl(group: ProcessGroup, nccl, device_id) -> None:
    """GPU tensors of the group go to NCCL; its communicator is made at the first one
    (collectively: every rank's first GPU collective is the same call)."""
    group.nccl, group.device_id = nccl, device_id
    if nccl is None:
        return

    def make():
        if "*" in group.comms and not nccl.probe().available:
            return group.comms["*"]
        index = getattr(device_id, "index", device_id)
        if index is None:
            launch = launch_env()
            index = launch.local_rank if launch is not None else 0
        return nccl.connect(rank=group.rank, size=group.size, control=group,
                            device_index=index, timeout=group.timeout)

    for kind in nccl.device_types:
        group.lazy[kind] = make


def _meet(control, rank: int, size: int, seconds: float) -> tuple[list[str], str]:
    """Every rank's host name, and a token naming this job's boards (rank 0's)."""
    token = secrets.token_hex(8) if rank == 0 else ""
    mine = f"{socket.gethostname()}\n{token}".encode()
    seen = control.allgather_bytes(mine, _Bootstrap(size, rank, seconds), "init")
    hosts = [s.decode().split("\n")[0] for s in seen]
    return hosts, seen[0].decode().split("\n")[1]


class _Bootstrap:
    """Stands for the group while the group is being made (no board yet to post to)."""

    def __init__(self, size: int, rank: int, timeout: float):
        self.size, self.rank, self.timeout = size, rank, timeout
        self.ranks = list(range(size))
        self.name = "world"

    def start(self, kind: str) -> int:
        return 0

    def waiting(self, flag: bool) -> None:
        pass

    def timed_out(self, work) -> DistributedTimeoutError:
        _WORLD_STATE["broken"] = True
        return DistributedTimeoutError(
            f"init_process_group: the {self.size} ranks did not all join within "
            f"{self.timeout:g} s (rank {self.rank} waited); a rank failed before "
            "init_process_group or was not started. Check the other ranks' output")


class HostControl:
    """Small timed exchanges of bytes over a host communicator of the group's ranks."""

    def __init__(self, comm):
        self.comm = comm

    def allgather_bytes(self, data: bytes, group, kind: str = "control",
                        numbered: bool = True) -> list[bytes]:
        import numpy as np

        from .work import Work
        comm = self.comm
        seq = group.start(kind) if numbered else group.seq
        sizes = np.zeros(comm.size, dtype=np.int64)
        work = Work(group, kind, seq, [comm.allgather(np.array([len(data)], np.int64),
                                                      sizes)])
        work.wait()
        width = max(int(sizes.max()), 1)
        send = np.zeros(width, dtype=np.uint8)
        send[:len(data)] = np.frombuffer(data, dtype=np.uint8)
        recv = np.empty(width * comm.size, dtype=np.uint8)
        Work(group, kind, seq, [comm.allgather(send, recv)]).wait()
        return [recv[i * width:i * width + int(n)].tobytes() for i, n in enumerate(sizes)]

    def split(self, ranks):
        comm = self.comm.split(ranks)
        return None if comm is None else HostControl(comm)

    def close(self) -> None:
        self.comm.close()


# --- the end of a job ------------------------------------------------------------------------

def _install_guards() -> None:
    """An uncaught error on one rank ends the whole job at once, instead of leaving the
    others to wait for their timeout (and MPI to hang in MPI_Finalize)."""
    if _WORLD_STATE["guards"]:
        return
    _WORLD_STATE["guards"] = True
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        previous(kind, value, tb)
        end_job(1, kind.__name__)

    sys.excepthook = excepthook
    atexit.register(_at_exit)


def end_job(code: int, reason: str) -> None:
    """After an uncaught error on this rank: say so and end every rank of the job (the
    others would wait for their timeout).  Returns only when no group of >1 ranks exists."""
    group = _WORLD_STATE["group"]
    if group is None or group.size < 2:
        return
    group.board.state(FAILED)
    print(f"ember.distributed: rank {group.rank} failed ({reason}); ending the job's "
          f"{group.size} processes", file=sys.stderr, flush=True)
    # the launcher forwards each rank's output through a pipe: give it (and the other
    # ranks' own errors) a moment to get out before the job is killed
    time.sleep(0.5)
    abort(code)


def abort(code: int = 1) -> None:
    """End every process of the job now."""
    comm = _WORLD_STATE.get("host_comm")
    group = _WORLD_STATE["group"]
    if comm is None and group is not None:
        comm = next(iter(group.comms.values()), None)
    if comm is not None:
        comm.abort(code)
    os._exit(code)


def _at_exit() -> None:
    group = _WORLD_STATE["group"]
    if group is None:
        return
    if _WORLD_STATE["broken"] and group.size > 1:
        # pending requests after a timeout: MPI_Finalize would wait for them forever
        sys.stderr.flush()
        abort(1)
    group.board.state(EXITED)


def destroy_process_group(group=None) -> None:
    """Leave the default group (or free `group`); collectives need a new init after.

    PyTorch
    -------
    ``torch.distributed.destroy_process_group``
    """
    target = world() if group is None else group
    if target is GroupMember.NON_GROUP_MEMBER:
        return
    if target is _WORLD_STATE["group"]:
        if not _WORLD_STATE["broken"] and target.size > 1:
            target.allgather_bytes(b"", "barrier")     # nobody leaves while others work
        target.board.state(EXITED)
        _WORLD_STATE.update(group=None)
    for comm in {id(c): c for c in target.comms.values()}.values():
        if comm is not _WORLD_STATE.get("host_comm"):
            comm.close()
    if target.checker is not None:
        target.checker.close()
    target.board.close()


def new_group(ranks=None, timeout=None, backend=None):
    """A group of some ranks; every rank of the world calls it, in the same order.

    PyTorch
    -------
    ``torch.distributed.new_group``
    """
    parent = world()
    members = sorted(set(range(parent.size) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < parent.size:
            raise DistributedError(f"new_group: rank {r} is outside the world of "
                                   f"{parent.size} ranks")
    seconds = parent.timeout if timeout is None else _seconds(timeout)
    parent.children += 1
    parent.start("new_group")
    comms = {kind: comm.split(members) for kind, comm in parent.comms.items()}
    control = parent.control.split(members)
    checker = (parent.checker.split(members)
               if isinstance(parent.checker, _check.MPIChannel) else None)
    if parent.rank not in members:
        return GroupMember.NON_GROUP_MEMBER
    rank = members.index(parent.rank)
    board = Board(f"{_WORLD_STATE['token']}-{parent.children}", len(members), rank)
    group = ProcessGroup(backend or parent.backend, members, rank, comms, control, seconds,
                         board, [parent.hosts[r] for r in members],
                         f"group{parent.children}", checker)
    _add_nccl(group, parent.nccl, parent.device_id)
    if checker is None and parent.checker is not None:
        group.checker = parent.checker.split(members, group)
    group.allgather_bytes(b"", "init")
    if rank == min(r for r in range(group.size) if group.hosts[r] == group.hosts[rank]):
        board.unlink()
    return group


def get_rank(group=None) -> int:
    """This process's rank in `group` (default: the world); -1 outside the group.

    PyTorch
    -------
    ``torch.distributed.get_rank``
    """
    g = resolve(group)
    return -1 if g is None else g.rank


def get_world_size(group=None) -> int:
    """The number of processes in ``group`` (the default group when None).

    PyTorch
    -------
    ``torch.distributed.get_world_size``
    """
    g = resolve(group)
    return -1 if g is None else g.size


def get_backend(group=None) -> str:
    """The name of ``group``'s communication backend (``'mpi'`` or ``'nccl'``).

    PyTorch
    -------
    ``torch.distributed.get_backend``
    """
    return world().backend if group is None else group.backend


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of the processes in ``group``.

    PyTorch
    -------
    ``torch.distributed.get_process_group_ranks``
    """
    return list(resolve(group).ranks)
