"""ember.compile on OpenCL: a captured graph replayed as the launches it made.

The generic replay (ember.graph.replay) calls each node's kernel from Python; on OpenCL a
kernel call is the backend's Python (fusion, layouts, arguments) before the one launch it
makes, so a replayed demo step still spent ~6 ms on the host for ~5 ms of device work.
Here the second replay runs the nodes with a Recorder on the runtime, which notes
every launch (kernel, sizes, arguments), upload and allocation; later replays enqueue
those launches again and nothing else, as a CUDA graph replays its kernels.

What makes that right:
- Every argument but a buffer is a value the recorded code computed from shapes, dtypes,
  layouts and the graph's constants, which the guards fix (a kernel that reads data back
  on the host, or a transfer, makes the graph unrecordable: it keeps the generic replay).
- Buffers are of four kinds. An input's buffer is replaced by the input's buffer at each
  call (its layout, offset and which inputs share memory must match the recording, else
  that call takes the generic replay). A result (output or gradient) made during the
  recording gets a new buffer at each call: what a previous call returned is never
  overwritten. A random draw (a "host" node) is drawn again at each call and its buffer
  takes the recorded one's place. Every other buffer the recording allocated stays the
  graph's own for its lifetime (as a CUDA graph's memory pool does): the same memory is
  rewritten at each call, and its liveness is what the recording's allocator made of it.
- Index checks run as in eager, on the values of this call, between the launches they
  sat between; a check on inputs that no earlier node writes runs first (the wait for the
  device is then a wait on an idle queue), unless an effect comes before it.
- Arrays the caller left pending are computed before the first launch, as a kernel that
  may write into existing memory does in eager.
"""
from __future__ import annotations

import threading
import time

import pyopencl as cl
from ember.graph.replay import Recorded

from .fusion import LazyArray
from .runtime import CLArray

# a recorded graph holds its intermediates for good: past this share of the device's
# memory it keeps the generic replay, which frees each array after its last use
MAX_HELD_SHARE = 0.25


class Recorder:
    """Installed on a Runtime (rt.recorder) while one replay runs: what it enqueued."""

    def __init__(self):
        self.thread = threading.get_ident()
        self.commands: list = []      # ("k", kernel, global, local, args, offset), ("u", ...)
        self.made: dict = {}          # id(buffer) -> buffer allocated while recording
        self.seen: dict = {}          # id(buffer) -> buffer met in a command, made or not
        self.paused = 0
        self.failed: str | None = None

    def _mine(self) -> bool:
        return not self.paused and threading.get_ident() == self.thread

    def allocated(self, buffer) -> None:
        if threading.get_ident() == self.thread:
            # held until the graph goes: no later allocation of the recording reuses it
            self.made[id(buffer)] = buffer

    def uploaded(self, buffer, host) -> None:
        if self._mine():
            self.seen[id(buffer)] = buffer
            self.commands.append(("u", buffer, host))

    def read_on_host(self) -> None:
        if self._mine() and self.failed is None:
            self.failed = "a kernel read data back on the host (what follows depends on it)"

    def launched(self, kernel, global_size, local_size, args, offset) -> None:
        if not self._mine():
            return
        for a in args:
            if isinstance(a, cl.MemoryObjectHolder):
                self.seen[id(a)] = a
        self.commands.append(("k", kernel, global_size, local_size, list(args), offset))


def compile_graph(graph, runtime):
    """A replay function for `graph` on `runtime` (see the module docstring)."""
    from ember.graph.replay import generate
    generic = generate(graph)
    return LaunchReplay(graph, runtime, generic)


class LaunchReplay(Recorded):
    """fn(inputs) -> (outputs, grads): generic, then recorded, then the launches again.

    The first call's generic replay also builds the programs of the elementwise trees it
    meets for the first time (fusion.ready), so the recording sees the launches every
    later generic replay would make."""

    def __init__(self, graph, runtime, generic):
        super().__init__(graph, generic)
        self.rt = runtime

    def __call__(self, inputs):
        if self.rt._pending:
            self.rt.flush()   # arrays the caller left pending read memory this may write
        return super().__call__(inputs)

    def record(self, inputs):
        from ember.graph.replay import hoist_checks, needed
        rt = self.rt
        graph = self.graph
        nodes = hoist_checks(graph, needed(graph))
        other = [n for n in nodes if n.kind not in ("kernel", "check", "host")]
        if other:
            self.why_not = f"a {other[0].kind} node ({other[0].name}) runs no launch here"
            return self.generic(inputs)
        for x in inputs:
            x.buffer                    # noqa: B018  (a pending input is computed now)
        recorder = Recorder()
        program = Program(rt, graph, inputs)
        rt.recorder = recorder
        try:
            outs, grads = _interpret(graph, nodes, inputs, recorder, program)
            for x in (*outs, *grads):
                if x is not None:
                    x.buffer            # noqa: B018  (computed inside the recording)
        finally:
            rt.recorder = None
        if recorder.failed is None:
            recorder.failed = program.finish(recorder, outs, grads)
        if recorder.failed is None:
            self.program = program
        else:
            self.why_not = recorder.failed
        return outs, grads


def _interpret(graph, nodes, inputs, recorder, program):
    """Run `nodes` as the generic replay does (each array released after its last use),
    telling `program` about the nodes that replay as Python: checks and random draws."""
    from ember.graph.ir import Value
    from ember.graph.replay import lifetimes
    last_use, keep = lifetimes(graph, nodes)
    env = {id(i.value): x for i, x in zip(graph.inputs, inputs)}
    for k, node in enumerate(nodes):
        args = [env[id(a)] if isinstance(a, Value) else a.value for a in node.args]
        if node.kind == "kernel":
            out = node.fn(*args, **node.attrs) if node.attrs else node.fn(*args)
        elif node.kind == "check":
            for a in args:
                if isinstance(a, LazyArray):
                    a.buffer                    # noqa: B018  (its launch is recorded)
            recorder.paused += 1
            try:
                node.fn(*args)
            finally:
                recorder.paused -= 1
            program.check(recorder, node, args)
            out = None
        elif node.kind == "host" and node.meta.get("random"):
            recorder.paused += 1
            try:
                out = node.fn()
            finally:
                recorder.paused -= 1
            program.draw(recorder, node, out)
        elif node.kind == "host":
            out = node.fn()                     # a constant: its upload is recorded
        else:
            raise AssertionError(node.kind)        # record() let only these three in
        if node.out is not None:
            env[id(node.out)] = out
        args = out = None          # held no longer than the generic replay holds them
        for a in node.args:
            if isinstance(a, Value) and last_use.get(id(a)) == k and id(a) not in keep:
                env.pop(id(a), None)
        if node.out is not None and id(node.out) not in last_use and \
                id(node.out) not in keep:
            env.pop(id(node.out), None)
    outs = tuple(env[id(v)] for v in graph.output_values())
    grads = tuple(env[id(v)] if isinstance(v, Value) else None for _, v in graph.grads)
    return outs, grads


def _layout(x: CLArray) -> tuple:
    return (x.shape, x.strides, x.offset, x.dtype)


class Program:
    """The recorded commands, with each buffer argument bound to a slot or fixed."""

    def __init__(self, rt, graph, inputs):
        self.rt = rt
        self.input_layouts = [_layout(x) for x in inputs]
        self.slot_of: dict = {}              # id(recorded buffer) -> slot
        self.sharing = []                    # per input: the first input with its buffer
        self.input_slots = []                # (input position, slot)
        for k, x in enumerate(inputs):
            b = x.buffer
            if id(b) in self.slot_of:
                self.sharing.append(next(j for j, y in enumerate(inputs) if y.buffer is b))
                continue
            self.sharing.append(k)
            self.slot_of[id(b)] = len(self.slot_of)
            self.input_slots.append((k, self.slot_of[id(b)]))
        self.python: dict = {}               # command index -> ("c", node, arg layouts)
        self.fresh: list = []                # (slot, bytes): a new buffer at each call
        self.steps: list = []
        self.results: list = []
        self.nslots = 0
        self.held: dict = {}

    # -- while recording ------------------------------------------------------------------
    def check(self, recorder, node, args) -> None:
        recorder.commands.append(("c", node, [(a.buffer, _layout(a)) if isinstance(a, CLArray)
                                              else (None, a) for a in args]))

    def draw(self, recorder, node, out: CLArray) -> None:
        self.slot_of[id(out.buffer)] = len(self.slot_of)
        recorder.commands.append(("p", node, self.slot_of[id(out.buffer)]))

    def finish(self, recorder, outs, grads) -> str | None:
        """Bind the recorded commands to slots; a reason where they cannot replay."""
        rt = self.rt
        results = [x for x in (*outs, *grads) if x is not None]
        for x in results:
            b = x.buffer
            if id(b) not in self.slot_of and id(b) in recorder.made:
                self.slot_of[id(b)] = len(self.slot_of)
                self.fresh.append((self.slot_of[id(b)], b.size))
        held = 0
        for key, b in recorder.made.items():
            if key not in self.slot_of:
                held += b.size
        limit = MAX_HELD_SHARE * int(rt.device.global_mem_size)
        if held > limit:
            return (f"its intermediates ({held:,} bytes) would stay allocated, more than "
                    f"{MAX_HELD_SHARE:.0%} of the device's memory")
        steps = []
        for cmd in recorder.commands:
            if cmd[0] == "k":
                _, kernel, gsize, lsize, args, offset = cmd
                subs = [(j, self.slot_of[id(a)]) for j, a in enumerate(args)
                        if isinstance(a, cl.MemoryObjectHolder) and id(a) in self.slot_of]
                steps.append(("k", kernel, gsize, lsize, args, offset, tuple(subs)))
            elif cmd[0] == "u":
                _, buffer, host = cmd
                if id(buffer) in self.slot_of:
                    return "a constant was uploaded into an input's memory"
                steps.append(("u", buffer, host))
            elif cmd[0] == "p":
                steps.append(cmd)
            else:
                _, node, layouts = cmd
                steps.append(("c", node, [(None, None, lay) if b is None else
                                          (self.slot_of.get(id(b)), b, lay)
                                          for b, lay in layouts]))
        self.steps = steps
        self.results = [None if x is None else
                        (self.slot_of.get(id(x.buffer)), x.buffer, _layout(x))
                        for x in (*outs, *grads)]
        self.n_outs = len(outs)
        self.nslots = len(self.slot_of)
        self.held = {k: b for k, b in recorder.made.items() if k not in self.slot_of}
        self.held.update((k, b) for k, b in recorder.seen.items() if k not in self.slot_of)
        return None

    # -- replaying ------------------------------------------------------------------------
    def run(self, inputs):
        """(outputs, grads) of one call, or None where this call's inputs do not fit."""
        rt = self.rt
        layouts = self.input_layouts
        sharing = self.sharing
        seen: dict = {}
        for k, x in enumerate(inputs):
            if _layout(x) != layouts[k]:
                return None
            if seen.setdefault(id(x.buffer), k) != sharing[k]:
                return None
        cur = [None] * self.nslots
        for k, slot in self.input_slots:
            cur[slot] = inputs[k].buffer
        allocate = rt.pool.allocate
        for slot, nbytes in self.fresh:
            cur[slot] = allocate(nbytes)
        queue, events = rt.queue, rt.events
        for step in self.steps:
            kind = step[0]
            if kind == "k":
                _, kernel, gsize, lsize, args, offset, subs = step
                if subs:
                    args = list(args)
                    for j, slot in subs:
                        args[j] = cur[slot]
                event = kernel(queue, gsize, lsize, *args, global_offset=offset)
                if events is not None:           # ember.profiler records (runtime.profile)
                    events.append((kernel.function_name, time.perf_counter_ns(), event))
            elif kind == "u":
                rt.upload(step[1], step[2])
            elif kind == "c":
                step[1].fn(*[lay if b is None else
                             CLArray(rt, b if slot is None else cur[slot], lay[0], lay[3],
                                     lay[1], lay[2]) for slot, b, lay in step[2]])
            else:                                   # "p": draw again
                cur[step[2]] = step[1].fn().buffer
        made = []
        for r in self.results:
            if r is None:
                made.append(None)
                continue
            slot, b, (shape, strides, offset, dtype) = r
            made.append(CLArray(rt, b if slot is None else cur[slot], shape, dtype, strides,
                                offset))
        return tuple(made[:self.n_outs]), tuple(made[self.n_outs:])
