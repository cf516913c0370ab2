"""ember.compile: capture a function once, replay it without Python dispatch after that.

The first calls run eagerly and capture (graph/capture.py).  Two consecutive captures with
the same signature that record the same program (ops, attributes, Python scalars baked in,
the tensors read, the gradients bound) make the graph trusted; later calls check the
guards and replay it (graph/replay.py).  Guards: the arguments' shapes, dtypes and devices
and every non-tensor argument, grad mode, the autocast regions, the `training` flag of
every module called, the hyperparameters of every optimizer stepped, and that each tensor
read live still holds the same memory.  A guard that fails means a new signature: capture
again (at most `cache_limit` signatures, then a warning and eager calls).

Data-dependent Python (`.item()`, `.numpy()`, `bool(t)`, printing a tensor) is a graph
break: that signature runs eagerly from then on (with fullgraph=True it is an error naming
the op and the line).  Like jax.jit, Python side effects of the function (appending to a
list, a counter) happen only when it runs eagerly; what it does to tensors (in-place
updates, gradients) replays.  Outputs of a replay carry no autograd history.

torch.compile's modes, and what each does in ember (MODES; `options=` takes the same
switches by torch's option names, OPTIONS):
- "default": capture and replay; on OpenCL and CUDA the backend's replay re-enqueues the
  kernel launches it recorded (what torch's reduce-overhead adds with CUDA graphs), unless
  EMBER_OPENCL_GRAPHS=0 / EMBER_CUDA_GRAPHS=0 turn that off.
- "reduce-overhead": recorded launches always (the switches above notwithstanding).  On the
  CPU there are no launches to record: the generic replay, already without Python
  dispatch, is the whole effect (as torch's CUDA graphs do nothing for CPU code).
- "max-autotune": recorded launches, and the captures run under backend.autotuning(): the
  OpenCL backend times its matmul structures (naive, tiled, packed RMxRN) for each float32
  product shape the function meets and keeps the fastest for that shape (the device-wide
  choice otherwise).  NumPy (CPU) and cuBLAS (CUDA) have no kernel choice ember makes, so
  there it is "reduce-overhead".
- "max-autotune-no-cudagraphs": the autotuning, with the generic replay of each kernel
  call instead of recorded launches.
- "lite": ember's generic replay on every device (no fusion, no recorded launches): each
  replayed node is the eager kernel, so results are eager's bit for bit.
`backend=`: "inductor" (the default) is the above; "eager" and "aot_eager" replay
generically, as "lite" (torch's run the captured graph with eager kernels); "cudagraphs"
is "reduce-overhead"; torch's "openxla" and "tvm", and a callable (ember has no FX graph to
hand one), raise NotInEmberError.  `dynamic=True` (one graph for every shape) raises
NotInEmberError: ember compiles one graph per input shape, as dynamic=False does, and
dynamic=None (torch's default) does the same here (torch would generalize a shape that
changed; ember captures it again, up to cache_limit signatures).
"""
from __future__ import annotations

import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field

from .. import amp_policy, dispatch
from ..backend import autotuning
from ..errors import EmberError, EmberValueError, EmberWarning, NotInEmberError
from ..tensor import Tensor, bump_version, wrap
from .capture import Trace, _freeze, capture
from .ir import Const, Value, flatten
from .replay import build

TRACES_TO_SETTLE = 4          # captures of one signature before it is given up as unstable
_MISSING = object()

# torch.compile's modes, as torch's option sets (torch._inductor.list_mode_options) in the
# option names ember acts on (see the module docstring for what each does here)
MODES = {
    "default": {},
    "lite": {"fallback_by_default": True},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "triton.cudagraphs": False},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True},
}
# the torch (inductor) options ember has a meaning for; any other is refused by name
OPTIONS = {
    "triton.cudagraphs": "replay recorded kernel launches (True), or never (False)",
    "max_autotune": "time kernel choices per shape while capturing (OpenCL matmul)",
    "fallback_by_default": "ember's generic replay: the eager kernels, no backend replay",
}
BACKENDS = {"inductor": {}, "eager": {"fallback_by_default": True},
            "aot_eager": {"fallback_by_default": True},
            "cudagraphs": {"triton.cudagraphs": True}}
_TORCH_ONLY_BACKENDS = ("openxla", "openxla_eval", "tvm", "ts", "aot_ts", "onnxrt",
                        "tensorrt", "torch_tensorrt", "ipex")


def resolve(mode=None, backend=None, options=None, dynamic=None) -> dict:
    """ember's replay options for torch.compile's (mode, backend, options, dynamic), or
    the error torch gives (listing what there is), or NotInEmberError naming what ember
    does not do."""
    if mode is not None and options is not None:
        raise EmberValueError("ember.compile: Either mode or options can be specified, but "
                              "both can't be specified at the same time.")
    if dynamic is True:
        raise NotInEmberError(
            "ember.compile(dynamic=True): ember has no shape-generic graphs; it compiles one "
            "graph per input shape (as dynamic=False), up to cache_limit shapes. Fix: drop "
            "dynamic=True (raise cache_limit= if the function meets many shapes)")
    if dynamic not in (None, False):
        raise EmberValueError(f"ember.compile: dynamic must be None, True or False, got "
                              f"{dynamic!r}")
    chosen: dict = {}
    if backend is not None:
        if callable(backend):
            raise NotInEmberError(
                f"ember.compile(backend={getattr(backend, '__name__', backend)!r}): a custom "
                "backend receives a torch.fx graph, which ember does not make; use one of "
                f"{', '.join(BACKENDS)} (or ember.graph.capture for ember's own IR)")
        if backend in _TORCH_ONLY_BACKENDS:
            raise NotInEmberError(f"ember.compile(backend={backend!r}): ember has no {backend} "
                                  f"backend; it has {', '.join(BACKENDS)}")
        if backend not in BACKENDS:
            raise EmberValueError(f"ember.compile: Invalid backend: {backend!r}; ember has "
                                  f"{', '.join(BACKENDS)}")
        chosen.update(BACKENDS[backend])
    if mode is not None:
        if mode not in MODES:
            raise EmberValueError(f"ember.compile: Unrecognized mode={mode}, should be one "
                                  f"of: {', '.join(MODES)}")
        chosen.update(MODES[mode])
    if options is not None:
        if not isinstance(options, dict):
            raise EmberValueError(f"ember.compile: options must be a dict, got "
                                  f"{type(options).__name__}")
        unknown = sorted(k for k in options if k not in OPTIONS)
        if unknown:
            raise NotInEmberError(
                f"ember.compile: option(s) {', '.join(map(repr, unknown))} have no meaning in "
                f"ember; the options it has are {', '.join(map(repr, OPTIONS))}")
        chosen.update(options)
    return {"cudagraphs": (None if chosen.get("triton.cudagraphs") is None
                           else bool(chosen["triton.cudagraphs"])),
            "autotune": bool(chosen.get("max_autotune")),
            "generic": bool(chosen.get("fallback_by_default"))}


class RecompileWarning(EmberWarning):
    """A compiled function reached its cache limit, or will run eagerly.

    PyTorch
    -------
    None: PyTorch logs recompilations (``torch._logging``); ember warns.
    """


@dataclass
class Entry:
    signature: tuple
    trace: Trace
    replay: object = None
    calls: int = 0
    backward: object = None        # a compiled forward's backward (Backward), if any


@dataclass
class Stats:
    captures: int = 0
    replays: int = 0
    eager_calls: int = 0
    capture_seconds: float = 0.0
    signatures: int = 0
    reasons: dict = field(default_factory=dict)       # signature -> why it runs eagerly


class CompiledFunction:
    """What ember.compile returns: call it like the function (or module) it wraps.

    PyTorch
    -------
    None: what ``torch.compile`` returns is the nearest (an ``OptimizedModule`` or a
    wrapped function).
    """

    def __init__(self, fn, *, fullgraph: bool = False, cache_limit: int = 8,
                 options: dict | None = None):
        self._fn = fn
        self._fullgraph = fullgraph
        self._options = options or resolve()
        self._cache_limit = cache_limit
        self._entries: dict = {}           # signature -> Entry (trusted graph)
        self._last: dict = {}              # signature -> latest Trace, not yet trusted
        self._tries: dict = {}             # signature -> captures so far
        self._eager: dict = {}             # signature -> reason
        self.stats = Stats()

    # -- calling -----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        leaves = flatten(list(args) + list(kwargs.values()))
        sig = _signature(leaves, kwargs)
        entry = self._entries.get(sig)
        if entry is not None:
            natives = _guarded_inputs(entry.trace.graph, leaves)
            if natives is not None:
                self.stats.replays += 1
                entry.calls += 1
                if entry.backward is not None:
                    return entry.backward.forward(entry, leaves, natives)
                return _finish(entry, leaves, entry.replay(natives))
            # a live tensor changed under the graph: capture again, under the same signature
            del self._entries[sig]
            self._tries[sig] = 0
        if sig in self._eager:
            self.stats.eager_calls += 1
            return self._fn(*args, **kwargs)
        if sig not in self._tries and len(self._tries) >= self._cache_limit:
            warnings.warn(f"ember.compile: {_name(self._fn)} met {self._cache_limit} different "
                          "call signatures (shapes, dtypes, devices, non-tensor arguments, "
                          "grad mode); new ones run eagerly (raise cache_limit=)",
                          RecompileWarning, stacklevel=2)
            self._eager[sig] = "cache limit reached"
            self.stats.eager_calls += 1
            return self._fn(*args, **kwargs)
        return self._capture(sig, args, kwargs)

    def _capture(self, sig, args, kwargs):
        grad = dispatch.is_grad_enabled()
        tune = self._options["autotune"]
        with autotuning() if tune else nullcontext():
            trace = capture(self._fn, args, kwargs, fullgraph=self._fullgraph,
                            autograd_outputs=grad)
            backward = None
            if trace.replayable and grad and _has_history(trace.result) and \
                    not trace.tracer.backward:
                # a forward that autograd will differentiate later: capture its backward
                backward = Backward.capture(trace, args, kwargs)
        trace.graph.options = self._options
        if backward is not None and backward.trace is not None:
            backward.trace.graph.options = self._options
        trace.tracer = None                    # let the forward's arrays go
        self.stats.captures += 1
        self.stats.capture_seconds += trace.seconds
        self._tries[sig] = self._tries.get(sig, 0) + 1
        self.stats.signatures = len(self._tries)
        if not trace.replayable or (backward is not None and backward.why):
            self._give_up(sig, _why(trace) if not trace.replayable else backward.why)
            return trace.result
        if backward is not None:
            trace.fingerprint += backward.trace.fingerprint
        previous = self._last.get(sig)
        self._last[sig] = trace
        if previous is not None and previous.fingerprint == trace.fingerprint:
            trace.graph.verify()
            if backward is not None:
                backward.trace.graph.verify()
                entry = Entry(sig, trace, build(trace.graph, backward.saved), backward=backward)
                backward.build()
            else:
                entry = Entry(sig, trace, build(trace.graph))
            self._entries[sig] = entry
            del self._last[sig]
        elif self._tries[sig] >= TRACES_TO_SETTLE:
            self._give_up(sig, "the recorded program changes from call to call (Python "
                               "scalars that change each call, such as a step count, are "
                               "baked into a graph: keep them in tensors, e.g. "
                               "ember.optim.Adam(..., capturable=True))")
        return trace.result

    def _give_up(self, sig, reason: str) -> None:
        self._eager[sig] = reason
        self.stats.reasons[sig] = reason
        self._last.pop(sig, None)

    # -- the wrapped module, if any ----------------------------------------------------------
    def __getattr__(self, name):
        return getattr(self._fn, name)

    def explain(self, *args, **kwargs):
        return explain(self._fn, *args, **kwargs)

    @property
    def graphs(self) -> list:
        """The trusted graphs, one per signature."""
        return [e.trace.graph for e in self._entries.values()]


def _name(fn) -> str:
    return getattr(fn, "__qualname__", type(fn).__name__)


def _why(trace: Trace) -> str:
    if trace.breaks:
        what, where = trace.breaks[0]
        return f"graph break: {what} at {where}"
    return trace.unsupported[0]


def _signature(leaves, kwargs) -> tuple:
    # grad mode and the autocast regions decide what the function records, as its inputs do
    parts = [dispatch.is_grad_enabled(), amp_policy.state_key(), tuple(kwargs)]
    for x in leaves:
        if type(x) is Tensor:
            parts.append((x._data.shape, x._dtype, x._device, x.requires_grad))
        else:
            parts.append(("py", type(x).__name__, _hashable(x)))
    return tuple(parts)


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _guarded_inputs(graph, leaves):
    """The input natives for a replay, or None where a guard fails."""
    for module, training in graph.guards.get("modules", ()):
        if module.training != training:
            return None
    for optimizer, snapshot in graph.guards.get("optimizers", ()):
        groups = optimizer.param_groups
        if len(groups) != len(snapshot):
            return None
        for group, items in zip(groups, snapshot):
            if len(group) != len(items) + 1:            # + "params"
                return None
            for key, value in items:                     # lr, momentum, ... as captured
                now = group.get(key, _MISSING)
                if now != value and _freeze(now) != value:
                    return None
    natives = []
    for i in graph.inputs:
        if i.kind == "arg":
            natives.append(leaves[i.index]._data)
        elif i.kind == "live":
            native = i.tensor._data
            if native.shape != i.value.shape and tuple(native.shape) != i.value.shape:
                return None
            natives.append(native)
        else:
            g = (i.tensor._meta or {}).get("grad")
            if g is None or tuple(g._data.shape) != i.value.shape or g._dtype is not \
                    i.value.dtype:
                return None
            natives.append(g._data)
    for kind, tensor, native, requires_grad in graph.guards.get("live", ()):
        if kind == "live" and (tensor._data is not native or
                               tensor.requires_grad != requires_grad):
            return None        # its memory was replaced (x.data = ...), or it was frozen
    return natives


def _finish(entry, leaves, result):
    graph = entry.trace.graph
    outs, grads = result
    _effects(entry, leaves, grads)
    made = {id(v): native for v, native in zip(graph.output_values(), outs)}
    return _rebuild(graph.outputs, made, graph, leaves)


def _effects(entry, leaves, grads) -> None:
    """What a replay did besides its outputs: bind gradients, bump the versions of the
    tensors it wrote into."""
    graph = entry.trace.graph
    for (tensor, v), native in zip(graph.grads, grads):
        tensor._meta = tensor._meta or {}
        tensor._meta["grad"] = None if v is None else wrap(native, v.device, v.dtype)
    written = entry.__dict__.get("_written")
    if written is None:
        written = entry._written = _written_inputs(graph)
    for i in written:
        _bump(i, leaves)


def _written_inputs(graph) -> list:
    targets = {id(n.args[0]) for n in graph.nodes if n.inplace and isinstance(n.args[0], Value)}
    return [i for i in graph.inputs if id(i.value) in targets]


def _bump(inp, leaves) -> None:
    t = leaves[inp.index] if inp.kind == "arg" else (
        inp.tensor if inp.kind == "live" else inp.tensor.grad)
    if t is not None:
        bump_version(t)


def _rebuild(structure, made, graph, leaves):
    if isinstance(structure, tuple):
        return tuple(_rebuild(s, made, graph, leaves) for s in structure)
    if isinstance(structure, list):
        return [_rebuild(s, made, graph, leaves) for s in structure]
    if isinstance(structure, dict):
        return {k: _rebuild(s, made, graph, leaves) for k, s in structure.items()}
    if isinstance(structure, Const):
        return structure.value
    if structure.producer is None:             # an input returned as it is
        inp = next(i for i in graph.inputs if i.value is structure)
        if inp.kind == "arg":
            return leaves[inp.index]
        if inp.kind == "live":
            return inp.tensor
        return inp.tensor.grad
    return wrap(made[id(structure)], structure.device, structure.dtype)


def _has_history(result) -> bool:
    return any(type(t) is Tensor and t.grad_fn is not None for t in flatten(
        result if isinstance(result, (tuple, list, dict)) else [result]))


class Backward:
    """The backward of a compiled forward (a module called in training): captured once with
    ember.autograd.grad on the forward's output against a seed gradient, it replays as the
    VJP of one autograd node that the replayed output carries."""

    def __init__(self, trace, wrt, why=""):
        self.trace, self.wrt, self.why = trace, wrt, why
        self.saved = []               # forward values the backward reads, in its input order
        self.replay = None

    @classmethod
    def capture(cls, forward: Trace, args, kwargs):
        from ..autograd import grad
        from ..ops import zeros_like
        out = forward.result
        if type(out) is not Tensor:
            return cls(None, [], "a compiled forward whose outputs need autograd must return "
                                 "one tensor (compile the whole step to return more)")
        leaves = flatten(list(args) + list(kwargs.values()))
        wrt = [("arg", k, t) for k, t in enumerate(leaves) if type(t) is Tensor and
               t.requires_grad]
        wrt += [("live", -1, i.tensor) for i in forward.graph.inputs
                if i.kind == "live" and i.tensor.requires_grad]
        tensors = [t for _, _, t in wrt]
        seed = zeros_like(out)
        trace = capture(lambda g: tuple(grad([out], tensors, [g], retain_graph=True,
                                             allow_unused=True)),
                        (seed,), forward=forward)
        if not trace.replayable:
            return cls(trace, wrt, "its backward cannot be replayed: " + _why(trace))
        self = cls(trace, wrt)
        values = {v.index: v for v in forward.graph.values()}
        self.saved = [values[i.index] for i in trace.graph.inputs if i.kind == "saved"]
        return self

    def build(self) -> None:
        self.replay = build(self.trace.graph)
        self.trace.result = None
        # the trace-time tensors are not needed: keep only what identifies the inputs
        self.wrt = [(kind, k, t if kind == "live" else None) for kind, k, t in self.wrt]

    def forward(self, entry, leaves, natives):
        outs, grads, saved = entry.replay(natives)
        _effects(entry, leaves, grads)
        value = entry.trace.graph.output_values()[0]
        out = wrap(outs[0], value.device, value.dtype)
        from ..autograd.node import Node
        inputs = tuple(leaves[k] if kind == "arg" else t for kind, k, t in self.wrt)
        out.grad_fn = Node(_CompiledBackward(self, saved), out, inputs, {})
        out.requires_grad = True
        return out

    def run(self, g: Tensor, saved) -> tuple:
        graph = self.trace.graph
        natives, k = [], 0
        for i in graph.inputs:
            if i.kind == "arg":
                natives.append(g._data)
            elif i.kind == "saved":
                natives.append(saved[k])
                k += 1
            else:
                natives.append(i.tensor._data)
        outs, _ = self.replay(natives)
        made = iter(outs)
        grads = []
        for item in graph.outputs:
            if isinstance(item, Const):
                grads.append(None)
            else:
                grads.append(wrap(next(made), item.device, item.dtype))
        return tuple(grads)


class _CompiledBackward:
    """The op of the node a compiled forward's output carries."""

    name = "compiled_forward"
    save_out = False
    uses = None                   # every input is version-checked, as eager's ops would
    fresh_grads = False           # a gradient may be the seed itself or a saved array

    def __init__(self, backward: Backward, saved):
        self.backward, self.saved = backward, saved

    def vjp(self, g, out, *inputs):
        if dispatch.is_grad_enabled():
            from ..errors import AutogradError
            raise AutogradError("backward through a compiled forward with create_graph=True "
                                "(double backward) is not supported; call the module "
                                "uncompiled for higher-order gradients")
        return self.backward.run(g, self.saved)


def compile(fn=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend=None,
            mode: str | None = None, options: dict | None = None, disable: bool = False,
            cache_limit: int = 8):
    """Compile fn (a function or a Module): see this module's docstring, which says what
    each mode, backend and option does in ember (torch's names; anything else is torch's
    error, or NotInEmberError where torch has it and ember does not).

    Usable as a decorator (`@ember.compile` or `@ember.compile(mode="max-autotune")`).
    disable=True returns fn itself (torch's switch for testing).  cache_limit: signatures
    (shapes, dtypes, devices, ...) compiled before new ones run eagerly.

    PyTorch
    -------
    ``torch.compile``
    """
    chosen = resolve(mode, backend, options, dynamic)      # checked before any call
    if fn is None:
        return lambda f: compile(f, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable,
                                 cache_limit=cache_limit)
    if disable:
        return fn
    if isinstance(fn, CompiledFunction):
        return fn
    if not callable(fn):
        raise EmberError(f"ember.compile: expected a function or a Module, got "
                         f"{type(fn).__name__}")
    return CompiledFunction(fn, fullgraph=fullgraph, cache_limit=cache_limit, options=chosen)


@dataclass
class Explanation:
    """What ember.compile.explain found: graph breaks, reasons, guards, node counts."""

    graph: object
    breaks: list
    unsupported: list
    op_counts: dict
    nodes: int
    replayed_nodes: int
    capture_seconds: float
    guards: list

    def __str__(self) -> str:
        lines = [f"captured {self.nodes} nodes ({self.replayed_nodes} after dead-code "
                 f"elimination) in {self.capture_seconds * 1e3:.1f} ms"]
        if self.breaks:
            lines.append(f"{len(self.breaks)} graph break(s):")
            lines += [f"  - {what} at {where}" for what, where in self.breaks]
        if self.unsupported:
            lines.append("cannot replay:")
            lines += [f"  - {why}" for why in self.unsupported]
        if not self.breaks and not self.unsupported:
            lines.append("no graph breaks: the function compiles whole")
        lines.append("guards: " + "; ".join(self.guards))
        lines.append("ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(
            self.op_counts.items(), key=lambda kv: -kv[1])))
        return "\n".join(lines)


def explain(fn, *args, **kwargs) -> Explanation:
    """Run fn once, capturing, and say what ember.compile would make of it.

    PyTorch
    -------
    ``torch._dynamo.explain``
    """
    if isinstance(fn, CompiledFunction):
        fn = fn._fn
    start = time.perf_counter()
    trace = capture(fn, args, kwargs)
    from .replay import needed
    graph = trace.graph
    guards = [f"grad mode {graph.guards.get('grad')}",
              f"{sum(1 for i in graph.inputs if i.kind == 'arg')} tensor argument(s): shape, "
              "dtype, device",
              f"{sum(1 for i in graph.inputs if i.kind != 'arg')} live tensor(s): same memory",
              f"{len(graph.guards.get('modules', ()))} module training flag(s)",
              f"{len(graph.guards.get('optimizers', ()))} optimizer(s): hyperparameters"]
    return Explanation(graph, trace.breaks, trace.unsupported, graph.op_counts(),
                       len(graph.nodes), len(needed(graph)) if trace.replayable else 0,
                       time.perf_counter() - start, guards)


compile.explain = explain
