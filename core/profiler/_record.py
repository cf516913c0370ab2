"""What a profile records, and the hooks it puts in place while it records.

One recorder at a time.  It installs the dispatch tail's timed kernel call
(dispatch.set_profiler), and for the time it records wraps a few class attributes: the
autograd node's apply (a backward node's row, named for its forward op), the DataLoader's
iterators' __next__ (the wait for a batch), ember.compile's call (a compiled step's row)
and the optimizer's step (a step boundary).  Each is put back when recording stops, so
nothing of this costs anything while no profile records.

An event is a plain list (cheap to make while recording): see the E_* indices.
"""
from __future__ import annotations

import os
import threading
import time
import traceback
import weakref

from .. import dispatch, plugins
from ..backend import optional
from ..errors import EmberError
from ..tensor import Tensor

# event fields
E_NAME, E_KIND, E_TID, E_START, E_END, E_DEVICE, E_SHAPES, E_DTYPES, E_KERNEL, E_BYTES, \
    E_ARGS, E_STACK, E_OWN = range(13)
KINDS = ("op", "autograd", "dataloader", "compiled", "user", "step", "kernel", "memory")

_now = time.perf_counter_ns
_cpu = time.thread_time_ns          # CPU time of this thread: a busy machine's waits left out
_ident = threading.get_ident
_active: list = []          # the recording Recorder, if any (a list: set from one place)


def active():
    return _active[0] if _active else None


def _shape(x):
    if type(x) is Tensor:
        return tuple(x._data.shape)
    return ()


def _nbytes(native) -> int:
    n = getattr(native, "nbytes", None)
    if n is None:
        size, dtype = getattr(native, "size", None), getattr(native, "dtype", None)
        n = int(size) * int(getattr(dtype, "itemsize", 0)) if size is not None else 0
    return int(n)


def _user_stack(limit: int = 8) -> list:
    """The caller's frames outside ember, innermost first, as 'file(line): function'."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for fr in reversed(traceback.extract_stack(limit=40)[:-3]):
        if fr.filename.startswith(here):
            continue
        out.append(f"{fr.filename}({fr.lineno}): {fr.name}")
        if len(out) >= limit:
            break
    return out


class Recorder:
    """Events of one recording window (a profile's active steps)."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 devices=True, keep_samples=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.devices = devices
        self.keep_samples = keep_samples      # diagnose: one call per (op, shapes) to re-run
        self.samples: dict = {}
        self.events: list = []
        self.own_ns = 0                       # time the recording itself spent per op
        self.ops = 0
        self.live: dict = {}                  # device -> bytes alive (profile_memory)
        self.peak: dict = {}
        self.tracked: dict = {}               # id(native) -> its free event's finalizer
        self.loaders: dict = {}               # id(iterator) -> the loader's settings
        self.fallbacks_before = dict(dispatch.fallback_counts)
        self.fallbacks: dict = {}
        self.device_backends: list = []
        self._patched: list = []
        self._instrumented: dict = {}         # id(replay) -> (its globals, the originals)
        self.start_ns = self.end_ns = 0

    # -- start / stop ----------------------------------------------------------------------
    def start(self) -> None:
        if _active:
            raise EmberError("ember.profiler: another profile is recording in this process; "
                             "stop it first (profiles do not nest)")
        _active.append(self)
        self.start_ns = _now()
        if self.devices:
            for backend in {id(b): b for b in plugins.loaded_backends().values()}.values():
                fn = optional(backend, "profile_device")
                if fn is not None:
                    fn(True)
                    self.device_backends.append((backend, fn))
        self._patch()
        dispatch.set_profiler(self.call)

    def stop(self) -> None:
        dispatch.set_profiler(None)
        self._unpatch()
        for backend, fn in self.device_backends:
            self._device_events(backend.name, fn(False) or ())
        self.device_backends = []
        self.end_ns = _now()
        if _active and _active[0] is self:
            _active.clear()
        self.fallbacks = {k: v - self.fallbacks_before.get(k, 0)
                          for k, v in dispatch.fallback_counts.items()
                          if v > self.fallbacks_before.get(k, 0)}

    # -- the dispatch tail's kernel call -------------------------------------------------------
    def call(self, op, device, kernel, natives, attrs, inputs):
        t_in = _now()
        shapes = dtypes = None
        if self.record_shapes or self.keep_samples:
            shapes = [_shape(x) for x in inputs]
            dtypes = [x._dtype.name if type(x) is Tensor else type(x).__name__
                      for x in inputs]
        stack = _user_stack() if self.with_stack else None
        t0 = _now()
        out = kernel(*natives, **attrs) if attrs else kernel(*natives)
        t1 = _now()
        name = getattr(kernel, "__qualname__", None) or type(kernel).__name__
        ev = [op.name, "op", _ident(), t0, t1, str(device), shapes, dtypes, name, 0, None,
              stack, 0]
        self.events.append(ev)
        self.ops += 1
        if self.keep_samples and device.type == "cpu":
            key = (op.name, tuple(shapes), tuple(dtypes))
            if key not in self.samples:
                self.samples[key] = (kernel, dict(attrs), natives)
        if self.profile_memory and out is not None and not isinstance(out, (tuple, list)):
            self._allocated(ev, str(device), out)
        own = (t0 - t_in) + (_now() - t1)     # the recording's own time around this op
        ev[E_OWN] = own
        self.own_ns += own
        return out

    def _allocated(self, ev, device, native) -> None:
        if getattr(native, "base", None) is not None:
            return                     # a view: no memory of its own
        n = _nbytes(native)
        if not n:
            return
        ev[E_BYTES] = n
        # an array a kernel hands out again (the CPU's recycled results, backends/cpu/
        # spares.py) was let go by its previous holder: its free comes first
        freed = self.tracked.pop(id(native), None)
        if freed is not None and freed.alive:
            freed()
        live = self.live[device] = self.live.get(device, 0) + n
        if live > self.peak.get(device, 0):
            self.peak[device] = live
        self.events.append(["[memory]", "memory", ev[E_TID], ev[E_END], ev[E_END], device,
                            None, None, None, n, {"Total Allocated": live}, None, 0])
        try:
            # the recorder weakly: an array outliving the profile does not keep its events
            self.tracked[id(native)] = weakref.finalize(
                native, Recorder._freed, weakref.ref(self), device, n, ev[E_TID])
        except TypeError:
            pass                       # a native that takes no weak reference: not tracked

    @staticmethod
    def _freed(ref, device, n, tid) -> None:
        self = ref()
        if self is None or not _active or _active[0] is not self:
            return
        live = self.live[device] = self.live.get(device, 0) - n
        t = _now()
        self.events.append(["[memory]", "memory", tid, t, t, device, None, None, None, -n,
                            {"Total Allocated": live}, None, 0])

    # -- ranges ------------------------------------------------------------------------------
    def begin(self, name, kind="user", args=None):
        ev = [name, kind, _ident(), _now(), None, None, None, None, None, 0, args, None, 0]
        self.events.append(ev)
        return ev

    @staticmethod
    def end(ev) -> None:
        ev[E_END] = _now()

    # -- device events -------------------------------------------------------------------------
    def _device_events(self, backend_name, records) -> None:
        for index, name, host, queued, submit, start, end in records:
            args = {"queued": int(queued), "submit": int(submit), "start": int(start),
                    "end": int(end), "queue delay us": (start - queued) / 1e3}
            self.events.append([name, "kernel", -1, host + (start - queued),
                                host + (end - queued), f"{backend_name}:{index}", None, None,
                                name, 0, args, host, 0])

    # -- class attributes wrapped while recording --------------------------------------------------
    def _patch(self) -> None:
        from ..autograd.node import Node
        from ..graph.compile import CompiledFunction
        from ..optim.optimizer import Optimizer
        from ..utils.data import _workers, dataloader, fetch
        rec = self

        def patch(owner, attr, make):
            old = owner.__dict__[attr]
            setattr(owner, attr, make(old))
            self._patched.append((owner, attr, old))

        def node_apply(old):
            def apply(node, g):
                ev = rec.begin(f"autograd::engine::evaluate_function: {node.name()}",
                               "autograd", {"forward op": node.op.name})
                try:
                    grads = old(node, g)
                finally:
                    ev[E_END] = _now()
                if type(grads) is tuple and any(callable(x) and type(x) is not Tensor
                                                for x in grads):
                    # a lazy rule (linear's): the engine computes these right after, for
                    # the inputs that need them; the node's row lasts until they are done
                    grads = tuple(_lazy(x, ev) if callable(x) and type(x) is not Tensor
                                  else x for x in grads)
                return grads
            return apply

        def loader_iter(old):
            def __iter__(loader):
                it = old(loader)
                rec.loaders[id(it)] = {"num_workers": loader.num_workers,
                                       "pin_memory": loader.pin_memory,
                                       "batch_size": loader.batch_size}
                return it
            return __iter__

        def iter_next(old, label):
            def __next__(it):
                ev = rec.begin(f"enumerate(DataLoader)#{label}.__next__", "dataloader",
                               dict(rec.loaders.get(id(it)) or {}))
                cpu = _cpu()
                collated = rec.collate_ns
                try:
                    return old(it)
                finally:
                    ev[E_END] = _now()
                    ev[E_ARGS]["cpu_ns"] = _cpu() - cpu      # this thread's CPU time
                    # the part in collate_fn (this process's fetches: num_workers=0)
                    ev[E_ARGS]["collate_ns"] = rec.collate_ns - collated
            return __next__

        def fetcher_fetch(old):
            def fetch_(fetcher, indices):
                collate = fetcher.collate_fn

                def timed(batch):
                    t0 = _now()
                    try:
                        return collate(batch)
                    finally:
                        rec.collate_ns += _now() - t0
                fetcher.collate_fn = timed
                try:
                    return old(fetcher, indices)
                finally:
                    fetcher.collate_fn = collate
            return fetch_

        def compiled_call(old):
            def __call__(cf, *args, **kwargs):
                rec._instrument(cf)
                ev = rec.begin(f"CompiledFunction: {_fn_name(cf)}",
                               "compiled")
                steps = rec.optimizer_steps
                try:
                    return old(cf, *args, **kwargs)
                finally:
                    ev[E_END] = _now()
                    # a compiled training step replays its optimizer's update without
                    # calling step(): the call itself ends the step
                    if rec.on_optimizer_step is not None and steps == rec.optimizer_steps:
                        rec.on_optimizer_step()
            return __call__

        def optimizer_step(old):
            def step(opt, *args, **kwargs):
                ev = rec.begin(f"Optimizer.step#{type(opt).__name__}.step", "user")
                try:
                    return old(opt, *args, **kwargs)
                finally:
                    ev[E_END] = _now()
                    rec.optimizer_steps += 1
                    if rec.on_optimizer_step is not None:
                        rec.on_optimizer_step()
            return step

        patch(Node, "apply", node_apply)
        patch(dataloader.DataLoader, "__iter__", loader_iter)
        patch(dataloader._SingleProcessIter, "__next__",
              lambda old: iter_next(old, "_SingleProcessDataLoaderIter"))
        patch(_workers.MultiProcessIter, "__next__",
              lambda old: iter_next(old, "_MultiProcessingDataLoaderIter"))
        patch(fetch._Fetcher, "fetch", fetcher_fetch)
        patch(CompiledFunction, "__call__", compiled_call)
        patch(Optimizer, "step", optimizer_step)

    on_optimizer_step = None          # diagnose: a step boundary at each optimizer step
    collate_ns = 0                    # time in DataLoader collate_fns (num_workers=0)
    optimizer_steps = 0

    def _unpatch(self) -> None:
        while self._patched:
            owner, attr, old = self._patched.pop()
            setattr(owner, attr, old)
        for namespace, saved in self._instrumented.values():
            namespace.update(saved)
        self._instrumented.clear()

    def _instrument(self, cf) -> None:
        """Time each kernel call of cf's generated replays (graph/replay.generate's `steps`)
        while recording: a compiled call's row gets its kernels' rows under it."""
        entries = cf.__dict__.get("_entries") or {}
        for entry in list(entries.values()):
            backward = getattr(entry, "backward", None)
            for replay in (getattr(entry, "replay", None), getattr(backward, "replay", None)):
                fn = getattr(replay, "generic", replay)         # a backend's Recorded
                steps = getattr(fn, "steps", None)
                if steps is None or id(fn) in self._instrumented:
                    continue
                namespace = fn.__globals__
                saved = {var: namespace[var] for var, _, _ in steps}
                for var, name, device in steps:
                    namespace[var] = self._timed(saved[var], name, device)
                self._instrumented[id(fn)] = (namespace, saved)

    def _timed(self, fn, name, device):
        events = self.events

        def call(*args, **kwargs):
            t_in = _now()
            t0 = _now()
            out = fn(*args, **kwargs)
            t1 = _now()
            ev = [name, "op", _ident(), t0, t1, device, None, None, "ember.compile replay",
                  0, {"replayed": True}, None, 0]
            events.append(ev)
            ev[E_OWN] = (t0 - t_in) + (_now() - t1)
            return out
        return call


def _fn_name(cf) -> str:
    fn = cf.__dict__.get("_fn")
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _lazy(fn, ev):
    def compute():
        try:
            return fn()
        finally:
            ev[E_END] = _now()
    return compute
