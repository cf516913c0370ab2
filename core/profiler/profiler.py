"""torch.profiler's API on ember's dispatch tail: profile, schedule, record_function,
ProfilerActivity, ProfilerAction, tensorboard_trace_handler.

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")          # Perfetto / chrome://tracing

Rows: every op (its device, kernel, input shapes and dtypes, host time of the kernel
call), each autograd node (named as torch's, with its forward op), each wait for a
DataLoader batch, each ember.compile call, record_function ranges and ProfilerStep#N;
device kernels with the device's own timestamps where the backend gives them (OpenCL's
profiling events); CUDA device time is not measured (host time only there).  While no
profile records, the dispatch tail pays one global read per op.
"""
from __future__ import annotations

import enum
import functools
import os
import socket
import time

from ..errors import EmberTypeError, EmberValueError, NotInEmberError
from . import _record
from .events import EventList, build, write_trace


class ProfilerActivity(enum.Enum):
    """What to record: CPU is the host's ops and ranges; the device activities add device
    kernels with their device timestamps where the backend gives them (OpenCL)."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    return set(ProfilerActivity)


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """torch.profiler.schedule: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps (the last one RECORD_AND_SAVE), `repeat`
    cycles (0: until the program ends)."""
    for name, v in (("wait", wait), ("warmup", warmup), ("active", active),
                    ("repeat", repeat), ("skip_first", skip_first)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise EmberValueError(f"schedule: {name} must be an int >= 0, got {v!r}")
    if active < 1:
        raise EmberValueError(f"schedule: active must be >= 1, got {active}")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait              # the first cycle starts at its warm-up
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:
    """torch.profiler.profile (see the module's doc).  Settings ember does not have raise
    NotInEmberError rather than being ignored."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None,
                 execution_trace_observer=None, acc_events: bool = False, use_cuda=None,
                 custom_trace_id_callback=None):
        if activities is None:
            activities = {ProfilerActivity.CPU, ProfilerActivity.CUDA}
        activities = set(activities)
        bad = [a for a in activities if not isinstance(a, ProfilerActivity)]
        if bad:
            raise EmberTypeError(f"profile: activities must be ProfilerActivity members, got "
                                 f"{bad!r}")
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        for name, value in (("with_flops", with_flops), ("with_modules", with_modules),
                            ("experimental_config", experimental_config),
                            ("execution_trace_observer", execution_trace_observer),
                            ("custom_trace_id_callback", custom_trace_id_callback)):
            if value:
                raise NotInEmberError(f"profile: {name} is not in ember's profiler yet; "
                                      "drop it (ops, shapes, memory and stacks are recorded)")
        if schedule is not None and not callable(schedule):
            raise EmberTypeError("profile: schedule must be a function of the step number "
                                 "(torch.profiler.schedule(...))")
        self.activities = activities
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.acc_events = bool(acc_events)
        self.schedule = schedule or _default_schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._rec = None
        self._step_event = None
        self._events: EventList | None = None
        self._metadata: dict = {}
        self._started = False
        self._keep_samples = False

    # -- torch's life cycle ----------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self) -> None:
        self._started = True
        self.current_action = self.schedule(self.step_num)
        if self.current_action in _RECORDING:
            self._begin()

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        if self._rec is not None:
            self._finish(save=True)
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """The program finished one step: the schedule's next action takes effect."""
        if not self._started:
            return
        prev = self.current_action
        self.step_num += 1
        now = self.schedule(self.step_num)
        if self._rec is not None and (now not in _RECORDING or
                                      prev is ProfilerAction.RECORD_AND_SAVE):
            self._finish(save=True)
        elif self._rec is not None:
            self._mark_step()
        self.current_action = now
        if self._rec is None and now in _RECORDING:
            self._begin()

    # -- recording ---------------------------------------------------------------------------------
    def _begin(self) -> None:
        devices = any(a is not ProfilerActivity.CPU for a in self.activities)
        self._rec = _record.Recorder(self.record_shapes, self.profile_memory, self.with_stack,
                                     devices, self._keep_samples)
        self._rec.start()
        self._mark_step()

    def _mark_step(self) -> None:
        if self._step_event is not None:
            self._end_step()
        self._step_event = self._rec.begin(f"ProfilerStep#{self.step_num}", "step",
                                           {"cpu_ns": time.thread_time_ns()})

    def _end_step(self) -> None:
        ev, self._step_event = self._step_event, None
        _record.Recorder.end(ev)
        ev[_record.E_ARGS]["cpu_ns"] = time.thread_time_ns() - ev[_record.E_ARGS]["cpu_ns"]

    def _finish(self, save: bool) -> None:
        rec, self._rec = self._rec, None
        if self._step_event is not None:
            self._end_step()
        rec.stop()
        events = build(rec.events, rec.start_ns)
        events.recorder = rec
        if self.acc_events and self._events is not None:
            # acc_events=True: the cycles' events together (each cycle's times from its start)
            events[:0] = self._events
            events.memory[:0] = self._events.memory
        self._events = events
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results -------------------------------------------------------------------------------
    def events(self) -> EventList:
        if self._events is None:
            raise EmberValueError("profile.events: nothing recorded yet; the profile records "
                                  "between start() and stop() (or in the schedule's active "
                                  "steps)")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        if group_by_input_shape and not self.record_shapes:
            raise EmberValueError("key_averages(group_by_input_shape=True) needs "
                                  "profile(record_shapes=True)")
        if group_by_stack_n and not self.with_stack:
            raise EmberValueError("key_averages(group_by_stack_n=...) needs "
                                  "profile(with_stack=True)")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> str:
        write_trace(self.events(), path, {"metadata": dict(self._metadata)} if
                    self._metadata else None)
        return path

    def add_metadata(self, key: str, value: str) -> None:
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        import json
        self._metadata[key] = json.loads(value)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Flame-graph lines 'frame;frame;op value' (needs with_stack=True)."""
        if not self.with_stack:
            raise EmberValueError("export_stacks needs profile(with_stack=True)")
        with open(path, "w", encoding="utf-8") as f:
            for e in self.events():
                if e.stack and e.kind == "op":
                    f.write(";".join(reversed(e.stack)) + f";{e.name} "
                            f"{int(getattr(e, metric))}\n")

    def export_memory_timeline(self, path: str, device: str | None = None) -> None:
        raise NotInEmberError("profile.export_memory_timeline is not in ember yet; the "
                              "Chrome trace has the [memory] events (profile_memory=True)")


class record_function:
    """A named range in the profile (context manager or decorator); free while no profile
    records."""

    def __init__(self, name: str, args: str | None = None):
        if not isinstance(name, str):
            raise EmberTypeError(f"record_function: name must be a str, got "
                                 f"{type(name).__name__}")
        self.name = name
        self.args = args
        self._ev = None

    def __enter__(self):
        rec = _record.active()
        if rec is not None:
            self._ev = rec.begin(self.name, "user",
                                 {"args": self.args} if self.args is not None else None)
        return self

    def __exit__(self, *exc):
        if self._ev is not None:
            _record.Recorder.end(self._ev)
            self._ev = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):
    """on_trace_ready that writes each trace to dir_name/<worker>.<ms>.pt.trace.json[.gz]
    (TensorBoard's profiler plugin and Perfetto read it)."""
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        stamp, n = time.time_ns() // 1_000_000, 0
        while True:           # two traces within one millisecond: neither overwrites
            name = f"{worker}.{stamp}{f'_{n}' if n else ''}.pt.trace.json"
            if use_gzip:
                name += ".gz"
            if not os.path.exists(os.path.join(dir_name, name)):
                break
            n += 1
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler
