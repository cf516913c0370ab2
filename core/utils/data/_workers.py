"""DataLoader worker processes: the worker loop, and the parent's iterator that feeds them.

Protocol: the parent sends (epoch, task_id, indices) to one index queue per worker, round
robin, keeping prefetch_factor tasks per worker in flight; workers answer on one shared
result queue with (epoch, task_id, worker_id, kind, payload).  Payloads are pickled in the
worker (so an unpicklable batch becomes an error, not a silent loss in a feeder thread)
with tensors replaced by their NumPy arrays, and rebuilt as CPU tensors in the parent.
Between ember's own processes pickle is safe: nothing here reads files.

Ctrl-C: workers ignore SIGINT (the parent decides) and are born with it blocked, so one
that arrives while a worker starts cannot print a traceback from it; the parent keeps
SIGINT blocked while it starts or stops workers, so a second Ctrl-C waits until the
cleanup is done instead of leaving processes behind.  An iterator dropped without
shutdown() (with its loader, for persistent workers) has its workers stopped by a thread
(_Reaper): its finalizer runs no Python code, so no Ctrl-C can be raised there and dropped,
as Python drops the exceptions of finalizers.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import multiprocessing as mp
import os
import pickle
import queue
import random
import signal
import sys
import threading
import time
import traceback
import weakref
from dataclasses import dataclass
from typing import Any

from ...errors import EmberError

_POLL_S = 0.5          # how often a waiting side checks that the other is still alive
_JOIN_S = 1.0          # how long shutdown waits for workers before terminating them


class WorkerError(EmberError, RuntimeError):
    """A DataLoader worker died, timed out, or raised an exception that cannot be rebuilt.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker process.

    PyTorch
    -------
    ``torch.utils.data.get_worker_info`` returns PyTorch's ``WorkerInfo``.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's id, count, seed and dataset copy; None in the main process.

    PyTorch
    -------
    ``torch.utils.data.get_worker_info``
    """
    return _worker_info


# --- tensors across the process boundary ---------------------------------------------------

class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        from ...tensor import Tensor
        if isinstance(obj, Tensor):
            return ("ember.Tensor", obj.detach().cpu().numpy())
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        from ...ops.creation import from_host
        kind, array = pid
        if kind != "ember.Tensor":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        return from_host(array, "cpu")


def dumps(obj) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def loads(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


def _error_payload(worker_id: int, exc: BaseException, where: str) -> bytes:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        exc_type = pickle.loads(pickle.dumps(type(exc)))
    except Exception:  # noqa: BLE001  (a class defined in a function: rebuilt as WorkerError)
        exc_type = None
    return pickle.dumps((exc_type, type(exc).__name__, worker_id, where, text))


def _reraise(payload: bytes):
    exc_type, name, worker_id, where, text = pickle.loads(payload)
    message = (f"Caught {name} in DataLoader worker process {worker_id} while loading "
               f"{where}.\nOriginal {text}")
    exc = None
    if exc_type is not None:
        try:
            exc = exc_type(message)
        except Exception:  # noqa: BLE001  (its constructor needs more than a message)
            exc = None
    raise exc if exc is not None else WorkerError(message)


# --- the worker ----------------------------------------------------------------------------

def worker_loop(loader_parts: dict, index_queue, result_queue, done_event, worker_id: int,
                num_workers: int, seed: int, parent_pid: int) -> None:
    """Serve tasks until told to stop, the parent is gone, or shutdown is signalled."""
    global _worker_info
    # Ctrl-C reaches the whole process group; the parent decides, workers stay quiet.
    # SIGINT is blocked until here (see _sigint_held): ignore it, then let it in.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from ...device import set_default_device
    from ...ops.creation import manual_seed
    from .fetch import _Fetcher
    set_default_device("cpu")      # workers never touch an accelerator (forked contexts)
    random.seed(seed)
    manual_seed(seed)
    dataset = loader_parts["dataset"]
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    init_fn = loader_parts["worker_init_fn"]
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as exc:  # noqa: BLE001  (user code: any failure goes to the parent)
        init_error = _error_payload(worker_id, exc, f"worker_init_fn({worker_id})")
    fetcher, fetch_epoch = None, None
    try:
        while True:
            try:
                task = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                if done_event.is_set() or os.getppid() != parent_pid:
                    break
                continue
            if task is None or done_event.is_set():
                break
            epoch, task_id, indices = task
            if init_error is not None:
                result_queue.put((epoch, task_id, worker_id, "error", init_error))
                continue
            try:
                if fetch_epoch != epoch:   # a new epoch restarts an iterable dataset
                    fetcher = _Fetcher(dataset, **loader_parts["fetch"])
                    fetch_epoch = epoch
                kind, payload = "ok", dumps(fetcher.fetch(indices))
            except StopIteration:
                kind, payload = "stop", b""
            except Exception as exc:  # noqa: BLE001  (user code: reported to the parent)
                where = fetcher.where(indices) if fetcher is not None else "its dataset"
                kind, payload = "error", _error_payload(worker_id, exc, where)
            result_queue.put((epoch, task_id, worker_id, kind, payload))
    finally:
        # results nobody will read must not keep this process alive at exit
        result_queue.cancel_join_thread()


# --- the parent ----------------------------------------------------------------------------

@contextlib.contextmanager
def _sigint_held():
    """Ctrl-C waits until the block ends, then arrives once.

    SIGINT is blocked in this thread, so processes started here are born with it blocked
    (worker_loop lets it in once it ignores it), and caught by a handler that only notes
    it, for the threads that do not block it (queue feeders); it is raised again after.
    """
    if threading.current_thread() is not threading.main_thread() or sys.is_finalizing():
        yield
        return
    caught: list = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:            # installed outside Python: leave it alone
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    block = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if block else None
    try:
        yield
    finally:
        if block:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)


def _stop_workers(done, index_queues, result_queue, workers) -> None:
    done.set()
    # at interpreter exit no queue feeder thread can start (put would hang): the
    # workers see _done within _POLL_S instead
    if not sys.is_finalizing():
        for q in index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
    deadline = time.monotonic() + _JOIN_S
    for worker in workers:
        worker.join(timeout=max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.terminate()
            worker.join(timeout=1.0)
        if worker.is_alive():
            worker.kill()
            worker.join()
    for q in (*index_queues, result_queue):
        q.cancel_join_thread()
        q.close()


class _Reaper:
    """Stops the workers of iterators that were dropped without shutdown(), in its thread.

    An iterator's finalizer is a weakref callback that is C code (SimpleQueue.put): no
    Python code runs in it, so a Ctrl-C cannot be raised inside a finalizer (where Python
    prints and drops it: the program would never see its Ctrl-C), and dropping a loader does
    not wait for its workers.  torch stops them in the iterator's __del__ instead.  The
    thread runs only while some iterator is watched, and is joined before workers are forked
    when none is alive: no fork happens beside it (Python 3.12 warns of a fork with threads).
    """

    def __init__(self):
        self.pid = os.getpid()
        self._dropped: queue.SimpleQueue = queue.SimpleQueue()
        self._workers: dict = {}    # weakref to a live iterator -> what _stop_workers takes
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running = False

    def watch(self, iterator, parts: tuple) -> weakref.ref:
        ref = weakref.ref(iterator, self._dropped.put)
        with self._lock:
            self._workers[ref] = parts
            if not self._running:
                self._running = True
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="ember DataLoader reaper")
                self._thread.start()
        return ref

    def forget(self, ref: weakref.ref | None) -> None:
        with self._lock:
            self._workers.pop(ref, None)
            if not self._workers:
                self._dropped.put(None)     # wakes the thread, which then ends

    def before_fork(self) -> None:
        """Wait for the thread to end unless a live iterator is watched (whose own queue
        threads run anyway): it may be stopping a dropped iterator's workers, as torch's
        __del__ would have before this point."""
        with self._lock:
            idle = all(ref() is None for ref in self._workers)
            thread = self._thread if idle else None
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            ref = self._dropped.get()
            parts = self._workers.pop(ref, None) if ref is not None else None
            if parts is not None:
                try:
                    _stop_workers(*parts)
                except Exception:  # noqa: BLE001  (printed as a finalizer's error would be)
                    traceback.print_exc()
            with self._lock:
                if not self._workers:
                    self._running = False
                    return


_reaper: _Reaper | None = None
_reaper_lock = threading.Lock()


def _reset_reaper_lock() -> None:
    global _reaper_lock
    _reaper_lock = threading.Lock()


if hasattr(os, "register_at_fork"):     # a fork while another thread holds it
    os.register_at_fork(after_in_child=_reset_reaper_lock)


def _the_reaper() -> _Reaper:
    """This process's reaper (a forked child inherits its parent's, without its thread)."""
    global _reaper
    with _reaper_lock:
        if _reaper is None or _reaper.pid != os.getpid():
            _reaper = _Reaper()
        return _reaper


class MultiProcessIter:
    """Hands out tasks, restores the sampler's order, and stops workers on every exit path."""

    def __init__(self, loader, base_seed: int):
        # what it reads of the loader is copied, as torch's iterator does: a reference back
        # to the loader would make a cycle, and a dropped persistent loader's workers would
        # live until the cyclic garbage collector ran (the loader holds its iterator)
        self._index_sampler, self._timeout = loader._index_sampler, loader.timeout
        self._owner_pid = os.getpid()   # a forked worker inherits this object: not its own
        self._reaper, self._watch = _the_reaper(), None
        self._index_queues, self._workers = [], []
        ctx = loader.multiprocessing_context
        ctx = mp.get_context(ctx) if ctx is None or isinstance(ctx, str) else ctx
        self._n = loader.num_workers
        self._prefetch = loader.prefetch_factor * self._n
        self._persistent = loader.persistent_workers
        self._iterable = self._index_sampler is None
        self.closed = True           # nothing to shut down until the queues exist
        self._epoch = 0
        parts = {"dataset": loader.dataset, "worker_init_fn": loader.worker_init_fn,
                 "fetch": {"auto_collation": loader._auto_collation,
                           "collate_fn": loader.collate_fn, "drop_last": loader.drop_last,
                           "batch_size": loader.batch_size}}
        try:
            # Ctrl-C inside Queue.put can leave the queue's lock taken (raised after the
            # acquire, before the `with` that releases it), and shutdown's put would then
            # wait forever: the whole start, first tasks included, runs with it held
            with _sigint_held():
                self._result_queue = ctx.Queue()
                self._done = ctx.Event()
                self.closed = False
                self._reaper.before_fork()
                self._start(ctx, parts, base_seed)
                self._watch = self._reaper.watch(self, (self._done, self._index_queues,
                                                        self._result_queue, self._workers))
                self.reset(first=True)
        except BaseException:        # a failed start must not leave processes behind
            self.shutdown()
            raise

    def _start(self, ctx, parts: dict, base_seed: int) -> None:
        for worker_id in range(self._n):
            index_queue = ctx.Queue()
            # tasks for a worker that died must not block the parent's exit
            index_queue.cancel_join_thread()
            worker = ctx.Process(
                target=worker_loop, daemon=True,
                args=(parts, index_queue, self._result_queue, self._done, worker_id,
                      self._n, base_seed + worker_id, os.getpid()))
            self._index_queues.append(index_queue)
            worker.start()
            self._workers.append(worker)

    @property
    def worker_pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    def reset(self, first: bool = False) -> None:
        """Start an epoch: a fresh sampler pass, tasks of older epochs ignored."""
        self._epoch += 1
        index_sampler = self._index_sampler
        self._tasks = iter(index_sampler) if index_sampler is not None else None
        self._send_idx = self._rcvd_idx = 0
        self._owner: dict[int, int] = {}        # outstanding task -> worker
        self._results: dict[int, tuple] = {}    # arrived out of order
        self._active = [True] * self._n
        self._next_worker = itertools.cycle(range(self._n))
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self) -> None:
        if not any(self._active):
            return
        if self._tasks is not None:
            try:
                indices = next(self._tasks)
            except StopIteration:
                return
        else:
            indices = None
        worker_id = next(w for w in self._next_worker if self._active[w])
        with _sigint_held():         # never interrupted holding the queue's lock (above)
            self._index_queues[worker_id].put((self._epoch, self._send_idx, indices))
        self._owner[self._send_idx] = worker_id
        self._send_idx += 1

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return self._next()
        except StopIteration:
            if not self._persistent:
                self.shutdown()
            raise
        except BaseException:     # errors, Ctrl-C, worker death: no process outlives this
            self.shutdown()
            raise

    def _next(self):
        if self.closed:
            raise StopIteration
        while True:
            if self._rcvd_idx == self._send_idx:
                raise StopIteration
            result = self._results.pop(self._rcvd_idx, None)
            if result is None:
                epoch, task_id, worker_id, kind, payload = self._get()
                if epoch == self._epoch:
                    self._results[task_id] = (worker_id, kind, payload)
                continue
            worker_id, kind, payload = result
            del self._owner[self._rcvd_idx]
            self._rcvd_idx += 1
            if kind == "stop":                  # this worker's stream is exhausted
                self._active[worker_id] = False
                self._put_task()
                continue
            if kind == "error":
                self.shutdown()
                _reraise(payload)
            self._put_task()
            return loads(payload)

    def _get(self):
        timeout = self._timeout
        start = time.monotonic()
        while True:
            wait = _POLL_S if not timeout else min(_POLL_S, max(
                0.0, timeout - (time.monotonic() - start)))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            for worker_id, worker in enumerate(self._workers):
                if not worker.is_alive():
                    code = worker.exitcode
                    how = (f"was killed by signal {signal.Signals(-code).name}"
                           if code is not None and code < 0 else f"exited with code {code}")
                    raise WorkerError(
                        f"DataLoader worker {worker_id} (pid {worker.pid}) {how} while the "
                        "loader waited for its batch; if it ran out of memory, lower "
                        "num_workers, batch_size or prefetch_factor")
            if timeout and time.monotonic() - start >= timeout:
                raise WorkerError(
                    f"DataLoader timed out after {timeout} s waiting for a batch from the "
                    "workers; raise timeout= or look for a slow or stuck dataset")

    def shutdown(self) -> None:
        """Stop every worker and close the queues; safe to call more than once.

        Only in the process that started the workers: a worker forked later for another
        loader holds a copy of this object, and must neither stop nor join its siblings.
        """
        if self.closed or os.getpid() != self._owner_pid:
            return
        self.closed = True
        self._reaper.forget(self._watch)
        self._watch = None
        with _sigint_held():
            _stop_workers(self._done, self._index_queues, self._result_queue, self._workers)
