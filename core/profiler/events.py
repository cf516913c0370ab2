"""A finished recording as torch.autograd.profiler's objects: FunctionEvent, EventList
(.key_averages(), .table(), .export_chrome_trace()) and FunctionEventAvg.

Times are microseconds (floats), as torch's.  "Self" time is an event's time less its
direct children's on the same thread (ranges nest: record_function > autograd node > op);
device time is the device kernels' (start to end on the device) enqueued while the event
ran, so an op's device time is the kernels it launched.
"""
from __future__ import annotations

import bisect
import json
import os
from collections import defaultdict

from ..errors import EmberValueError
from ._record import (
    E_ARGS,
    E_BYTES,
    E_DEVICE,
    E_DTYPES,
    E_END,
    E_KERNEL,
    E_KIND,
    E_NAME,
    E_OWN,
    E_SHAPES,
    E_STACK,
    E_START,
    E_TID,
)

# category names in the Chrome trace, as torch's (cpu_op, user_annotation, kernel, ...)
CATEGORY = {"op": "cpu_op", "autograd": "cpu_op", "dataloader": "user_annotation",
            "compiled": "user_annotation", "user": "user_annotation",
            "step": "user_annotation", "kernel": "kernel"}


class FunctionEvent:
    """One recorded op, range or device kernel."""

    def __init__(self, raw, base_ns, index):
        self.id = index
        self.name = raw[E_NAME]
        self.kind = raw[E_KIND]
        self.thread = raw[E_TID]
        self.start_ns = raw[E_START] - base_ns
        self.end_ns = (raw[E_END] if raw[E_END] is not None else raw[E_START]) - base_ns
        self.device = raw[E_DEVICE]
        self.input_shapes = [list(s) for s in raw[E_SHAPES] or ()]
        self.own_ns = raw[E_OWN]              # the profiler's own time around this op
        self.input_dtypes = list(raw[E_DTYPES] or ())
        self.kernel = raw[E_KERNEL]
        self.args = dict(raw[E_ARGS] or {})
        self.stack = (raw[E_STACK] or []) if self.kind != "kernel" else []
        self.host_enqueue_ns = (raw[E_STACK] - base_ns) if self.kind == "kernel" else None
        self.cpu_memory_usage = raw[E_BYTES] if self.device in (None, "cpu") else 0
        self.device_memory_usage = raw[E_BYTES] if self.device not in (None, "cpu") else 0
        self.cpu_parent = None
        self.cpu_children: list = []
        self.kernels: list = []           # device kernels this event (itself) enqueued
        self.is_async = False

    # times in microseconds, as torch's
    @property
    def cpu_time_total(self) -> float:
        return 0.0 if self.kind == "kernel" else (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        if self.kind == "kernel":
            return 0.0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if self.kind == "kernel":
            return (self.end_ns - self.start_ns) / 1e3
        return sum(k.self_device_time_total for k in self.kernels)

    @property
    def device_time_total(self) -> float:
        return self.self_device_time_total + sum(c.device_time_total
                                                 for c in self.cpu_children)

    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage

    @property
    def self_device_memory_usage(self) -> int:
        return self.device_memory_usage

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self):
        return (self.start_ns / 1e3, self.end_ns / 1e3)

    def __repr__(self) -> str:
        return (f"<FunctionEvent {self.name} {self.kind} on {self.device or 'host'} "
                f"cpu={self.cpu_time_total:.1f}us device={self.device_time_total:.1f}us>")


def build(raw_events: list, base_ns: int) -> EventList:
    """FunctionEvents with parents, children and each kernel under the event that enqueued
    it (the innermost host event running at its enqueue time, on any thread)."""
    events = [FunctionEvent(r, base_ns, i) for i, r in enumerate(raw_events)
              if r[E_KIND] != "memory" and r[E_END] is not None]
    host = [e for e in events if e.kind != "kernel"]
    by_thread = defaultdict(list)
    for e in host:
        by_thread[e.thread].append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e.start_ns, -e.end_ns))
        stack: list = []
        for e in evs:
            while stack and not (stack[-1].start_ns <= e.start_ns and
                                 e.end_ns <= stack[-1].end_ns):
                stack.pop()
            if stack:
                e.cpu_parent = stack[-1]
                stack[-1].cpu_children.append(e)
            stack.append(e)
    host.sort(key=lambda e: (e.start_ns, -e.end_ns))
    starts = [e.start_ns for e in host]
    for k in (e for e in events if e.kind == "kernel"):
        owner = _innermost(host, starts, k.host_enqueue_ns)
        if owner is not None:
            owner.kernels.append(k)
            k.cpu_parent = owner
    out = EventList(events)
    out.memory = [(r[E_START] - base_ns, r[E_DEVICE], r[E_BYTES], (r[E_ARGS] or {}).get(
        "Total Allocated", 0), r[E_TID]) for r in raw_events if r[E_KIND] == "memory"]
    return out


def _innermost(host, starts, t):
    """The innermost host event running at t: the last one started by t, or the first of
    its enclosing events still running then."""
    i = bisect.bisect_right(starts, t) - 1
    e = host[i] if i >= 0 else None
    while e is not None and e.end_ns < t:
        e = e.cpu_parent
    return e


class FunctionEventAvg:
    """The events of one key summed (key_averages)."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes or []
        self.stack = stack or []
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.devices: set = set()
        self.kinds: set = set()
        self.is_legacy = False

    def add(self, e) -> FunctionEventAvg:
        self.count += getattr(e, "count", 1)
        for name in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                     "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
                     "device_memory_usage", "self_device_memory_usage"):
            setattr(self, name, getattr(self, name) + getattr(e, name))
        dev = getattr(e, "device", None)
        self.devices |= getattr(e, "devices", {dev} if dev else set())
        self.kinds |= getattr(e, "kinds", {getattr(e, "kind", None)})
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def device_time(self) -> float:
        return self.device_time_total / max(self.count, 1)

    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.1f}us "
                f"device_time_total={self.device_time_total:.1f}us>")


SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "device_time_total",
             "self_device_time_total", "cuda_time_total", "self_cuda_time_total",
             "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
             "self_device_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage",
             "count", "cpu_time", "device_time", "cuda_time")
_ALIAS = {"cuda_memory_usage": "device_memory_usage",
          "self_cuda_memory_usage": "self_device_memory_usage", "cuda_time": "device_time"}


class EventList(list):
    """A list of FunctionEvents (or of FunctionEventAvgs, after key_averages)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.memory: list = []

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        groups: dict = {}
        for e in self:
            if getattr(e, "kind", None) == "kernel":
                continue       # a kernel's time counts in the op that launched it
            key = (e.key,)
            if group_by_input_shape:
                key += (str(e.input_shapes),)
            stack = (e.stack or [])[:group_by_stack_n] if group_by_stack_n else None
            if group_by_stack_n:
                key += (tuple(stack),)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None,
                    stack)
            avg.add(e)
        out = EventList(groups.values())
        out._grouped_by_shape = group_by_input_shape
        out._stack_n = group_by_stack_n
        return out

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            if getattr(e, "kind", None) != "kernel":
                total.add(e)
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        return table(self, sort_by, row_limit, max_name_column_width,
                     max_shapes_column_width, header, top_level_events_only,
                     max_src_column_width)

    def export_chrome_trace(self, path: str) -> None:
        write_trace(self, path)


def _fmt_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(n: int) -> str:
    sign, n = ("-" if n < 0 else ""), abs(n)
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if n >= size:
            return f"{sign}{n / size:.2f} {unit}"
    return f"{sign}{n} b"


def table(events, sort_by=None, row_limit=100, name_width=55, shapes_width=80,
          header=None, top_level_only=False, src_width=75) -> str:
    """torch's key_averages().table(): one row per key, the columns that have data; rows
    grouped by their call stack (key_averages(group_by_stack_n=n)) end with a "Source
    Location" column, one stack frame per line, src_width characters at most."""
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise EmberValueError(f"table: sort_by={sort_by!r} is not a column; expected one "
                                  f"of {', '.join(SORT_KEYS)}")
        sort_by = _ALIAS.get(sort_by, sort_by).replace("cuda", "device")
    rows = list(events)
    if top_level_only:
        rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
    if rows and isinstance(rows[0], FunctionEvent):
        rows = [FunctionEventAvg(e.key, e.input_shapes).add(e) for e in rows
                if e.kind != "kernel"]
    if sort_by is not None:
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    self_cpu = sum(e.self_cpu_time_total for e in rows) or 1e-9
    self_dev = sum(e.self_device_time_total for e in rows)
    has_dev = self_dev > 0
    has_mem = any(e.cpu_memory_usage or e.device_memory_usage for e in rows)
    has_shapes = bool(getattr(events, "_grouped_by_shape", False))
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    width = min(name_width, max([len(e.key) for e in rows] + [4]) + 2)
    cols = [("Name", width)]
    for c in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"):
        cols.append((c, 12))
    if has_dev:
        for c in ("Self Device", "Self Device %", "Device total", "Device time avg"):
            cols.append((c, 15))
    if has_mem:
        for c in ("CPU Mem", "Self CPU Mem", "Device Mem", "Self Device Mem"):
            cols.append((c, 15))
    cols.append(("# of Calls", 12))
    if has_shapes:
        cols.append(("Input Shapes", shapes_width))
    has_src = bool(getattr(events, "_stack_n", 0)) and any(e.stack for e in rows)
    if has_src:
        cols.append(("Source Location", src_width))
    line = "  ".join("-" * w for _, w in cols)

    def fmt(values):
        out = []
        for i, ((_, w), v) in enumerate(zip(cols, values)):
            v = str(v)
            if len(v) > w:
                v = v[:w - 3] + "..."
            out.append(v.ljust(w) if i == 0 or cols[i][0] in ("Input Shapes",
                                                                "Source Location")
                       else v.rjust(w))
        return "  ".join(out)

    lines = []
    if header:
        lines.append("=" * len(line))
        lines.append(header)
    lines += [line, fmt([c for c, _ in cols]), line]
    for e in rows:
        vals = [e.key, f"{100 * e.self_cpu_time_total / self_cpu:.2f}%",
                _fmt_time(e.self_cpu_time_total),
                f"{100 * e.cpu_time_total / self_cpu:.2f}%", _fmt_time(e.cpu_time_total),
                _fmt_time(e.cpu_time_total / max(e.count, 1))]
        if has_dev:
            vals += [_fmt_time(e.self_device_time_total),
                     f"{100 * e.self_device_time_total / self_dev:.2f}%",
                     _fmt_time(e.device_time_total),
                     _fmt_time(e.device_time_total / max(e.count, 1))]
        if has_mem:
            vals += [_fmt_mem(e.cpu_memory_usage), _fmt_mem(e.self_cpu_memory_usage),
                     _fmt_mem(e.device_memory_usage), _fmt_mem(e.self_device_memory_usage)]
        vals.append(e.count)
        if has_shapes:
            vals.append(str(e.input_shapes))
        frames = list(e.stack) if has_src else []
        if has_src:
            vals.append(frames[0] if frames else "")
        lines.append(fmt(vals))
        for frame in frames[1:]:              # the rest of the stack, a line each
            lines.append(fmt([""] * (len(cols) - 1) + [frame]))
    lines.append(line)
    lines.append(f"Self CPU time total: {_fmt_time(self_cpu)}")
    if has_dev:
        lines.append(f"Self Device time total: {_fmt_time(self_dev)}")
    return "\n".join(lines) + "\n"


# -- the Chrome trace (Trace Event format; Perfetto and chrome://tracing open it) -------------

def trace_events(events: EventList, metadata: dict | None = None) -> dict:
    pid = os.getpid()
    tids: dict = {}
    device_pids: dict = {}
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
            "args": {"name": f"python {pid} (host)"}}]

    def tid_of(thread):
        if thread not in tids:
            tids[thread] = len(tids) + 1
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tids[thread],
                        "args": {"name": f"thread {tids[thread]} ({thread})"}})
        return tids[thread]

    for e in events:
        if e.kind == "kernel":
            dpid = device_pids.get(e.device)
            if dpid is None:
                dpid = device_pids[e.device] = 1_000_000 + len(device_pids)
                out.append({"ph": "M", "name": "process_name", "pid": dpid, "tid": 0,
                            "args": {"name": e.device}})
                out.append({"ph": "M", "name": "thread_name", "pid": dpid, "tid": 1,
                            "args": {"name": f"{e.device} stream 0"}})
            args = {"device": e.device, **e.args}
            if e.cpu_parent is not None:
                args["launched by"] = e.cpu_parent.name
            out.append({"ph": "X", "cat": "kernel", "name": e.name, "pid": dpid, "tid": 1,
                        "ts": e.start_ns / 1e3, "dur": (e.end_ns - e.start_ns) / 1e3,
                        "args": args})
            continue
        args = dict(e.args)
        if e.device:
            args["device"] = e.device
        if e.kernel:
            args["kernel"] = e.kernel
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.device_time_total:
            args["device time us"] = e.device_time_total
        out.append({"ph": "X", "cat": CATEGORY.get(e.kind, "cpu_op"), "name": e.name,
                    "pid": pid, "tid": tid_of(e.thread), "ts": e.start_ns / 1e3,
                    "dur": (e.end_ns - e.start_ns) / 1e3, "args": args})
    for t, device, nbytes, total, thread in getattr(events, "memory", ()):
        kind, _, index = (device or "cpu").partition(":")
        out.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                    "pid": pid, "tid": tid_of(thread), "ts": t / 1e3,
                    "args": {"Device Type": kind, "Device Id": int(index or -1),
                             "Bytes": nbytes, "Total Allocated": total}})
    return {"schemaVersion": 1, "traceEvents": out, "displayTimeUnit": "ms",
            "deviceProperties": [{"name": d} for d in device_pids],
            "traceName": "ember.profiler", **(metadata or {})}


def write_trace(events: EventList, path: str, metadata: dict | None = None) -> None:
    data = trace_events(events, metadata)
    if str(path).endswith(".gz"):
        import gzip
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(data, f)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
