"""ember.compile over fixed memory: a captured graph replayed as device graphs (CUDA graphs).

A device graph (CUDA's cudaGraph, captured from a stream) replays its kernels on the
memory they were captured with: one launch for a whole segment of the step, no Python and
no per-kernel launch cost in between.  What makes that right for an ember graph, whatever
the device (the device brings a `strategy`, below; CuPy's is backends/cupy/graphs.py):

- **Segments.**  Runs of kernel nodes are captured; the other nodes (random draws, which
  must draw again at each call; host constants; index checks, which read values on the
  host; transfers) run as Python between the segments, as in the generic replay.  Index
  checks on inputs are hoisted first (ember.graph.replay.hoist_checks), so a train step
  whose only check is on its labels is one segment.
- **Inputs** come in two ways.  *Direct*: tensors the graph writes into (parameters,
  optimizer state) and live tensors it reads are captured on their own memory; each call
  checks that every one is the same memory in the same layout, else that call takes the
  generic replay.  *Staged*: the arguments and gradients it only reads are copied at each
  call into buffers of the graph's own (one device copy each), so a new batch in new
  memory replays.  A staged input that shares memory with one the graph writes is direct
  (eager would see the write through it).
- **Draws and constants** made between segments are copied into the graph's buffers
  where a segment reads them.
- **Results** (outputs, gradients) made inside segments live in the graph's memory, which
  the next call rewrites: each call returns copies, so what an earlier call returned is
  never overwritten.  A result in a direct input's memory (a parameter, a view of one) is
  returned as it is, as eager does; an input returned is the caller's own.
- **Memory**: every array a segment made is held for the graph's life (the allocator must
  never hand it to anyone else: CUDA graphs replay into it).  Past `strategy.limit` bytes
  the graph keeps the generic replay, which frees each array after its last use.
- **Failures**: a segment the device cannot capture (a kernel that reads data back on the
  host, an API the device refuses during capture) runs directly in that call, and the
  graph keeps the generic replay for good with the reason (`why_not`).
- The first call runs the generic replay (the device compiles and loads its kernels), the
  second records, later calls replay.

A strategy is an object with:
    capture(run) -> handle   run(call) makes one segment's kernel calls through
                             call(fn, args, attrs, inplace); when capture returns the
                             segment has run once.  Raises where it cannot capture, and
                             then nothing of the segment ran.
    launch(handle)           run a captured segment again, on the same memory
    layout(x)                a hashable (address, shape, strides, dtype)
    bounds(x)                (first byte, one past the last byte) of x's memory
    static_like(x)           a buffer of the graph's own with x's shape and dtype
    stage(dst, src)          dst[...] = src, on the device
    fresh(x)                 a copy of x in ordinary memory
    nbytes(x), limit         the bytes x holds, and the most a graph may hold
    held_bytes(arrays)       optional: what the graph holds, where the device counts more
                             than its arrays (CUDA: kernels' temporaries too)
"""
from __future__ import annotations

from ember.graph.replay import Recorded

VIEW_KERNELS = frozenset({"reshape", "permute", "expand", "slice"})


class StaticReplay(Recorded):
    """fn(inputs) -> (outputs, grads): generic, then recorded, then the device graphs."""

    def __init__(self, graph, strategy, generic):
        super().__init__(graph, generic)
        self.strategy = strategy

    def record(self, inputs):
        program = Program(self.graph, self.strategy)
        out = program.record(inputs)
        if program.failed is None:
            self.program = program
        else:
            self.why_not = program.failed
        return out


def _segments(nodes) -> list:
    """[("seg", [kernel nodes]) | ("py", node)] in order."""
    steps: list = []
    for node in nodes:
        if node.kind == "kernel":
            if steps and steps[-1][0] == "seg":
                steps[-1][1].append(node)
            else:
                steps.append(("seg", [node]))
        else:
            steps.append(("py", node))
    return steps


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class Program:
    """One graph's segments, captured on one call, and how each later call feeds them."""

    def __init__(self, graph, strategy):
        self.graph = graph
        self.s = strategy
        self.failed: str | None = None
        self.direct: list = []         # (input position, layout)
        self.staged: list = []         # (input position, static buffer)
        self.written_bounds: list = []  # memory of the direct inputs the graph writes
        self.steps: list = []           # ("seg", handle) | ("py", node, refs, slot, static)
        self.results: list = []         # ("in", k) | ("slot", j) | ("fixed", x) | ("copy", x)
        self.n_outs = 0
        self.nslots = 0
        self.held: list = []            # every array the segments made, for the graph's life

    # -- recording ------------------------------------------------------------------------
    def record(self, inputs):
        from ember.graph.ir import Value
        from ember.graph.replay import hoist_checks, needed
        s, graph = self.s, self.graph
        nodes = hoist_checks(graph, needed(graph))
        steps = _segments(nodes)
        root: dict = {}
        for n in nodes:
            if n.out is not None and n.kind == "kernel" and n.name in VIEW_KERNELS and \
                    isinstance(n.args[0], Value):
                root[id(n.out)] = root.get(id(n.args[0]), id(n.args[0]))
        written = {root.get(id(n.args[0]), id(n.args[0])) for n in nodes if n.inplace}
        read_by_kernels = {id(a) for n in nodes if n.kind == "kernel" for a in n.args
                           if isinstance(a, Value)}

        env: dict = {}                  # id(value) -> the array the segments use
        ref: dict = {}                  # id(value) -> how a Python step finds it
        direct_bounds: list = []
        for k, (inp, x) in enumerate(zip(graph.inputs, inputs)):
            ref[id(inp.value)] = ("in", k)
            if id(inp.value) in written or inp.kind == "live":
                env[id(inp.value)] = x
                self.direct.append((k, s.layout(x)))
                direct_bounds.append(s.bounds(x))
                if id(inp.value) in written:
                    self.written_bounds.append(s.bounds(x))
        for k, (inp, x) in enumerate(zip(graph.inputs, inputs)):
            if id(inp.value) in env:
                continue
            b = s.bounds(x)
            if any(_overlap(b, w) for w in self.written_bounds):
                env[id(inp.value)] = x       # aliases memory the graph writes: direct
                self.direct.append((k, s.layout(x)))
                direct_bounds.append(b)
                continue
            st = s.static_like(x)
            s.stage(st, x)
            env[id(inp.value)] = st
            self.staged.append((k, st))
        fresh: dict = {}                # slot -> this call's object (Python steps' outputs)
        capturing = True
        for step in steps:
            if step[0] == "py":
                node = step[1]
                refs = [ref[id(a)] if isinstance(a, Value) else ("const", a.value)
                        for a in node.args]
                args = [env[id(a)] if isinstance(a, Value) else a.value for a in node.args]
                out = node.fn(*args)
                slot = st = None
                if node.out is not None:
                    slot = self.nslots
                    self.nslots += 1
                    fresh[slot] = out
                    ref[id(node.out)] = ("slot", slot)
                    env[id(node.out)] = out
                    if id(node.out) in read_by_kernels:
                        st = s.static_like(out)
                        s.stage(st, out)
                        env[id(node.out)] = st
                        ref[id(node.out)] = ("fixed", st)
                        self.held.append(st)
                self.steps.append(("py", node, refs, slot, st))
                continue
            seg = step[1]
            made: list = []

            def run(call, seg=seg, made=made):
                for n in seg:
                    args = [env[id(a)] if isinstance(a, Value) else a.value for a in n.args]
                    out = call(n.fn, args, n.attrs, n.inplace)
                    if n.out is not None:
                        env[id(n.out)] = out
                        ref[id(n.out)] = ("fixed", out)
                        made.append(out)

            if capturing:
                try:
                    handle = s.capture(run)
                except Exception as exc:     # noqa: BLE001  (the device refused: run it plainly)
                    capturing = False
                    first = seg[0].name
                    self.failed = (f"the device could not capture the segment starting at "
                                   f"{first} ({type(exc).__name__}: {exc})")
                else:
                    self.steps.append(("seg", handle))
                    self.held.extend(made)
                    continue
            made.clear()
            run(_plain)
        outs = [v for v in graph.output_values()]
        grads = [v if isinstance(v, Value) else None for _, v in graph.grads]
        self.n_outs = len(outs)
        results = []
        for v in (*outs, *grads):
            if v is None:
                results.append(None)
                continue
            r = ref[id(v)]
            if r[0] == "fixed":
                b = s.bounds(r[1])
                r = ("fixed" if any(b[0] >= d[0] and b[1] <= d[1] for d in direct_bounds)
                     else "copy", r[1])
            results.append(r)
        self.results = results
        got = self._results(inputs, fresh)
        if self.failed is None:
            arrays = self.held + [x for _, x in self.staged]
            counted = getattr(s, "held_bytes", None)
            held = counted(arrays) if counted is not None else sum(s.nbytes(x) for x in arrays)
            if held > s.limit:
                self.failed = (f"its buffers ({held:,} bytes) would stay allocated, more "
                               f"than the {s.limit:,} bytes a graph may hold here")
        if self.failed is not None:
            self.steps = []
            self.held = []
            self.staged = []
        return got

    def _results(self, inputs, fresh):
        s = self.s
        made = []
        for r in self.results:
            if r is None:
                made.append(None)
            elif r[0] == "in":
                made.append(inputs[r[1]])
            elif r[0] == "slot":
                made.append(fresh[r[1]])
            elif r[0] == "fixed":
                made.append(r[1])
            else:
                made.append(s.fresh(r[1]))
        return tuple(made[:self.n_outs]), tuple(made[self.n_outs:])

    # -- replaying ------------------------------------------------------------------------
    def run(self, inputs):
        """(outputs, grads) of one call, or None where this call's inputs do not fit."""
        s = self.s
        layout = s.layout
        for k, lay in self.direct:
            if layout(inputs[k]) != lay:
                return None
        if self.written_bounds:
            bounds = s.bounds
            for k, _ in self.staged:
                b = bounds(inputs[k])
                for w in self.written_bounds:
                    if b[0] < w[1] and w[0] < b[1]:
                        return None
        stage = s.stage
        for k, st in self.staged:
            stage(st, inputs[k])
        fresh: dict = {}
        launch = s.launch
        for step in self.steps:
            if step[0] == "seg":
                launch(step[1])
                continue
            _, node, refs, slot, st = step
            args = [inputs[r[1]] if r[0] == "in" else fresh[r[1]] if r[0] == "slot" else r[1]
                    for r in refs]
            out = node.fn(*args)
            if slot is not None:
                fresh[slot] = out
                if st is not None:
                    stage(st, out)
        return self._results(inputs, fresh)


def _plain(fn, args, attrs, inplace=False):
    return fn(*args, **attrs) if attrs else fn(*args)
