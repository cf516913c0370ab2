"""ember.multiprocessing: the standard library's multiprocessing, with tensors that travel.

As torch.multiprocessing: `Process`, `Queue`, `Pool`, `get_context`, ... are the standard
library's, and `spawn(fn, args, nprocs)` starts `fn(i, *args)` in nprocs processes and
raises, in the parent, the first error of any of them.  A tensor sent to another process
(a Queue item, a Process argument under 'spawn') pickles by value: its dtype, shape,
bytes and device, rebuilt by `_rebuild_tensor` on the same device in the receiver, whatever
its layout (a strided, offset, transposed, 0-d or empty view arrives as its values).  There
is no shared memory: a tensor changed in a child is not changed in the parent (PyTorch
shares CPU tensors; ember copies them).  Only ember's own processes exchange pickles this
way; ember.save and ember.load never pickle anything.

The standard library's Queue pickles an item later, in a background "feeder" thread: an
item that cannot be pickled is printed there and dropped, and the receiver waits forever.
ember's `Queue`, `JoinableQueue` and `SimpleQueue` (and those of `get_context(...)`)
pickle the item in put() itself, so an item that cannot travel raises `SendError` in the
sender, at the put() that sent it; the receiver's get() is the standard one.
"""
from __future__ import annotations

import io
import multiprocessing as _mp
import pickle
import signal
import sys
import time
import traceback
from multiprocessing import (
    Array,
    Barrier,
    Condition,
    Event,
    Lock,
    Manager,
    Pipe,
    Pool,
    Process,
    RLock,
    Semaphore,
    Value,
    active_children,
    cpu_count,
    current_process,
    get_all_start_methods,
    get_start_method,
    set_start_method,
)
from multiprocessing import queues as _queues
from multiprocessing.connection import wait as _wait
from multiprocessing.reduction import ForkingPickler as _ForkingPickler

from .errors import EmberError, EmberValueError, brief
from .methods import interop as _interop

__all__ = [
    "Array", "Barrier", "Condition", "Event", "JoinableQueue", "Lock", "Manager", "Pipe",
    "Pool", "Process", "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
    "Queue", "RLock", "Semaphore", "SendError", "SimpleQueue", "Value", "active_children",
    "cpu_count", "current_process", "get_all_start_methods", "get_context",
    "get_start_method", "set_start_method", "spawn", "start_processes",
]


# --- tensors by value ----------------------------------------------------------------------

# the rebuild function pickles of tensors name (Tensor.__reduce__, methods/interop.py)
_rebuild_tensor = _interop._rebuild_tensor


# --- queues that pickle in put() ------------------------------------------------------------

class SendError(EmberError, pickle.PicklingError):
    """An object put() cannot send to another process (it cannot be pickled), raised in the
    sending process by the put() that sent it; the cause is the pickling error."""


class _Pickled:
    """An item already pickled by put(): the queue's feeder thread pickles this (its bytes)
    and the receiver's get() unpickles it back into the item itself."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self):
        return (_loads, (self.data,))


def _loads(data: bytes):
    return _ForkingPickler.loads(data)


def _pickled(obj, where: str) -> _Pickled:
    buffer = io.BytesIO()
    try:
        _ForkingPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(obj)
    except EmberError:
        raise                  # a tensor's own refusal already says what and why
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RuntimeError) as exc:
        raise SendError(f"ember.multiprocessing.{where}: cannot send {brief(obj, 80)} of type "
                        f"{type(obj).__name__} to another process: {type(exc).__name__}: "
                        f"{brief(str(exc), 300)}.  Send what pickles (tensors, numbers, "
                        "strings, containers, functions defined at module level)") from exc
    return _Pickled(buffer.getvalue())


class Queue(_queues.Queue):
    """multiprocessing.Queue whose put() pickles the item before it returns: an item that
    cannot travel raises SendError there, instead of being dropped by the feeder thread
    while the receiver waits forever."""

    def __init__(self, maxsize: int = 0, *, ctx=None):
        super().__init__(maxsize, ctx=ctx if ctx is not None else _mp.get_context())

    def put(self, obj, block: bool = True, timeout: float | None = None) -> None:
        super().put(_pickled(obj, "Queue.put"), block, timeout)


class JoinableQueue(_queues.JoinableQueue):
    """multiprocessing.JoinableQueue whose put() pickles the item before it returns (see
    Queue)."""

    def __init__(self, maxsize: int = 0, *, ctx=None):
        super().__init__(maxsize, ctx=ctx if ctx is not None else _mp.get_context())

    def put(self, obj, block: bool = True, timeout: float | None = None) -> None:
        super().put(_pickled(obj, "JoinableQueue.put"), block, timeout)


class SimpleQueue(_queues.SimpleQueue):
    """multiprocessing.SimpleQueue whose put() raises SendError for an item that cannot be
    pickled."""

    def __init__(self, *, ctx=None):
        super().__init__(ctx=ctx if ctx is not None else _mp.get_context())

    def put(self, obj) -> None:
        super().put(_pickled(obj, "SimpleQueue.put"))


class _Context:
    """A start method's multiprocessing context whose queues are the ones above."""

    def __init__(self, ctx):
        self._ctx = ctx

    def __getattr__(self, name: str):
        return getattr(self._ctx, name)

    def __repr__(self) -> str:
        return f"<ember.multiprocessing context {self._ctx.get_start_method()!r}>"

    def Queue(self, maxsize: int = 0) -> Queue:  # noqa: N802  (multiprocessing's name)
        return Queue(maxsize, ctx=self._ctx)

    def JoinableQueue(self, maxsize: int = 0) -> JoinableQueue:  # noqa: N802
        return JoinableQueue(maxsize, ctx=self._ctx)

    def SimpleQueue(self) -> SimpleQueue:  # noqa: N802
        return SimpleQueue(ctx=self._ctx)


def get_context(method: str | None = None) -> _Context:
    """multiprocessing.get_context(method), with queues that pickle in put() (Queue)."""
    return _Context(_mp.get_context(method))


# --- spawn ---------------------------------------------------------------------------------

class ProcessRaisedException(EmberError, RuntimeError):
    """A process started by spawn() raised; the message holds its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(EmberError, RuntimeError):
    """A process started by spawn() exited with a non-zero code or a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid
        self.exit_code, self.signal_name = exit_code, signal_name


def _wrap(fn, i: int, args: tuple, errors) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass                                   # the parent is stopping everyone
    except BaseException:                      # noqa: B036  (sent to the parent, then exit 1)
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one spawn(); join() until they end, raising the first failure."""

    def __init__(self, processes: list, error_queues: list):
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """True once every process exited cleanly; raises if one failed (after stopping the
        others); False if `timeout` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            alive = [p for p in self.processes if p.exitcode is None]
            failed = [i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
            if failed:
                self._stop()
                self._raise(failed[0])
            if not alive:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            _wait([p.sentinel for p in alive], timeout=0.1)

    def _stop(self) -> None:
        for p in self.processes:
            if p.exitcode is None:
                p.terminate()
        for p in self.processes:
            p.join(timeout=5)
            if p.exitcode is None:
                p.kill()
                p.join()

    def _raise(self, i: int):
        p = self.processes[i]
        if not self.error_queues[i].empty():
            text = self.error_queues[i].get()
            raise ProcessRaisedException(
                f"\n\n-- Process {i} terminated with the following error:\n{text}", i, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i,
                                         p.pid, code, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {code}", i, p.pid,
                                     code)


def start_processes(fn, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn"):
    """Start fn(i, *args) for i in range(nprocs) with `start_method`."""
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise EmberValueError(f"spawn: nprocs must be an int >= 1, got {nprocs!r}")
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        errors = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, tuple(args), errors), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(errors)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    try:
        context.join()
    except BaseException:
        context._stop()
        raise
    return None


def spawn(fn, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """As torch.multiprocessing.spawn: fn(i, *args) in nprocs fresh processes."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
