"""Replay: a captured graph as one generated Python function that calls the recorded kernels.

No dispatch, no autograd bookkeeping, no Tensor objects in between: each node is one line
`v7 = k7(v3, v5)` over native arrays.  Nodes whose results nobody needs are left out
(their effects, in-place writes, checks and random draws, always run); each array is
released (`del`) right after its last use, so the allocator reuses its memory as eager
would.  A backend may replace all this for its device with `compile_graph(graph)`
(ember.backend documents it).
"""
from __future__ import annotations

import functools

from ..backend import optional
from .ir import Const, Graph, Value


def needed(graph: Graph, extra=()) -> list:
    """The nodes that replay must run, in order (dead-code elimination); `extra`: values
    wanted besides the outputs (a compiled forward's saved values)."""
    live = {id(v) for v in graph.output_values()} | {id(v) for v in extra}
    live |= {id(v) for _, v in graph.grads if isinstance(v, Value)}
    keep = []
    for node in reversed(graph.nodes):
        if node.effect or (node.out is not None and id(node.out) in live):
            keep.append(node)
            live |= {id(a) for a in node.args if isinstance(a, Value)}
    keep.reverse()
    return keep


def build(graph: Graph, extra=()):
    """fn(inputs: list of natives, in graph.inputs order) -> (outputs, grads) natives
    (and, with `extra` values, a third tuple: theirs)."""
    if extra or graph.options.get("generic"):
        return generate(graph, extra)
    backend = _single_backend(graph)
    custom = optional(backend, "compile_graph") if backend is not None else None
    if custom is not None:
        fn = custom(graph)
        if fn is not None:
            return fn
    return generate(graph)


def _single_backend(graph):
    devices = {v.device for v in graph.values()}
    if len(devices) != 1:
        return None
    return next(iter(devices)).backend


def hoist_checks(graph, nodes: list) -> list:
    """`nodes` with each index check moved before the nodes ahead of it, as far as no node
    with an effect (an in-place write, a random draw, another check) stands in between,
    together with the pure kernels that make what it reads from the graph's inputs (a
    check on anything else stays where it is): the values it reads are then the ones it
    would have read, and a replay's one wait for the device comes early."""
    inputs = {id(i.value) for i in graph.inputs}
    out: list = []
    for node in nodes:
        if node.kind != "check":
            out.append(node)
            continue
        k = len(out)
        while k and not out[k - 1].effect:
            k -= 1
        # the check, with the pure nodes that make what it reads from the inputs alone
        # (labels.reshape(-1) before a gather's check), moves to k: nothing between
        # writes anything, so they read what they would have read
        made = {id(n.out): n for n in out[k:] if n.out is not None}
        chain: list = []
        todo = [a for a in node.args if isinstance(a, Value)]
        movable = True
        while todo and movable:
            v = todo.pop()
            if id(v) in inputs:
                continue
            producer = made.get(id(v))
            if producer is None or producer.kind != "kernel":
                movable = False
            elif producer not in chain:
                chain.append(producer)
                todo += [a for a in producer.args if isinstance(a, Value)]
        if not movable:
            out.append(node)
            continue
        moved = [n for n in out[k:] if n in chain]
        out[k:] = moved + [node] + [n for n in out[k:] if n not in chain]
    return out


def lifetimes(graph: Graph, nodes: list, extra=()) -> tuple[dict, set]:
    """({id(value): index of the last node in `nodes` reading it}, {ids of the values
    wanted at the end: outputs, bound gradients, `extra`}): when a replay may let each
    array go."""
    results = graph.output_values() + [v for _, v in graph.grads if isinstance(v, Value)]
    keep_to_end = {id(v) for v in results} | {id(v) for v in extra}
    last_use: dict = {}
    for k, node in enumerate(nodes):
        for a in node.args:
            if isinstance(a, Value):
                last_use[id(a)] = k
    return last_use, keep_to_end


def generate(graph: Graph, extra=()):
    nodes = needed(graph, extra)
    last_use, keep_to_end = lifetimes(graph, nodes, extra)
    env: dict = {}
    lines = ["def replay(inputs):"]
    names = [f"v{i.value.index}" for i in graph.inputs]
    if names:
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = inputs")
    for k, node in enumerate(nodes):
        fn = node.fn
        if node.kind == "kernel" and node.attrs:
            fn = functools.partial(fn, **node.attrs)
        env[f"f{k}"] = fn
        args = []
        for j, a in enumerate(node.args):
            if isinstance(a, Value):
                args.append(f"v{a.index}")
            else:
                env[f"c{k}_{j}"] = a.value
                args.append(f"c{k}_{j}")
        call = f"f{k}({', '.join(args)})"
        lines.append(f"    v{node.out.index} = {call}" if node.out is not None else f"    {call}")
        dead = sorted({a.index for a in node.args if isinstance(a, Value)
                       and last_use.get(id(a)) == k and id(a) not in keep_to_end})
        if node.out is not None and id(node.out) not in last_use and \
                id(node.out) not in keep_to_end:
            dead.append(node.out.index)
        if dead:
            lines.append(f"    del {', '.join(f'v{i}' for i in dead)}")
    outs = [f"v{v.index}" for v in graph.output_values()]
    grads = [f"v{v.index}" if isinstance(v, Value) else "None" for _, v in graph.grads]
    more = [f"v{v.index}" for v in extra]
    tail = f", ({', '.join(more)}{',' if len(more) == 1 else ''})" if extra else ""
    lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''}), "
                 f"({', '.join(grads)}{',' if len(grads) == 1 else ''}){tail}")
    source = "\n".join(lines)
    code = compile(source, "<ember.compile replay>", "exec")
    namespace: dict = dict(env)
    exec(code, namespace)            # noqa: S102  (code we generated, calling our kernels)
    replay = namespace["replay"]
    replay.source = source
    replay.nodes = len(nodes)
    # (global name, node name, device) per call: ember.profiler times them while it records
    replay.steps = [(f"f{k}", node.name, str(node.device)) for k, node in enumerate(nodes)]
    return replay


class Recorded:
    """The shape of a backend's replay that records (OpenCL's launches, CUDA graphs): the
    first call runs the generic replay (the device builds and loads its kernels), the
    second records, later ones run the recording (`program.run(inputs)`, None where this
    call's inputs do not fit it: that call takes the generic replay).  Where recording
    fails, `why_not` says why and the generic replay serves for good.  Subclasses define
    `record(inputs)`, which returns the call's results and sets `program` or `why_not`."""

    def __init__(self, graph, generic):
        self.graph = graph
        self.generic = generic
        self.nodes = generic.nodes
        self.program = None
        self.why_not: str | None = None
        self.warm = False             # whether the generic replay ran once
        self.replays = 0              # calls run from the recording
        self.fallbacks = 0            # calls that took the generic replay after the first

    def __call__(self, inputs):
        program = self.program
        if program is not None:
            out = program.run(inputs)
            if out is not None:
                self.replays += 1
                return out
            self.fallbacks += 1
            return self.generic(inputs)
        if self.why_not is not None or not self.warm:
            self.fallbacks += self.warm
            self.warm = True
            return self.generic(inputs)
        return self.record(inputs)

    def record(self, inputs):
        raise NotImplementedError


__all__ = ["Recorded", "build", "generate", "hoist_checks", "lifetimes", "needed", "Const"]
