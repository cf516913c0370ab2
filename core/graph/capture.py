"""Capture: run a function eagerly while the dispatch tail records every kernel call.

The tail calls the capture hook after each kernel (dispatch.add_hook); the other places
where arrays are born or leave for Python report here too: host arrays (constants, random
draws), device transfers, gradient reads and writes (Tensor.grad), index checks, and reads
to the host (`.item()`, `.numpy()`, printing), which are graph breaks.  The result is a
Trace: the Graph, the function's own result, and what made the graph unusable, if anything.
Capture is per thread: a capture in one thread records nothing of another.
"""
from __future__ import annotations

import threading
import time
import traceback
import zlib
from dataclasses import dataclass, field

import numpy as np

from .. import dispatch
from ..errors import EmberError
from ..tensor import Tensor, wrap
from .ir import Const, Graph, Input, Node, Value, check_structure, flatten

_lock = threading.Lock()
_active: dict = {}                 # thread ident -> Tracer
_CONSTS = (bool, int, float, complex, str, type(None))


class GraphBreak(EmberError, RuntimeError):
    """Data-dependent Python in a function compiled with fullgraph=True.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


@dataclass
class Trace:
    """What :func:`capture` returns: the graph, the eager result, the graph breaks seen
    (what, where), the reasons the graph cannot replay, and the time it took.

    PyTorch
    -------
    None: ember's capture record (``torch._dynamo.explain`` reports graph breaks likewise).
    """

    graph: Graph
    result: object
    breaks: list = field(default_factory=list)       # [(what, where)]
    unsupported: list = field(default_factory=list)  # reasons the graph cannot replay
    seconds: float = 0.0
    fingerprint: tuple = ()
    tracer: object = None            # kept only by callers that capture a backward after it

    @property
    def replayable(self) -> bool:
        return not self.breaks and not self.unsupported


class Tracer:
    """What one capture has seen so far."""

    def __init__(self, leaves: list, fullgraph: bool, autograd_outputs: bool = False,
                 forward=None):
        self.graph = Graph()
        self.autograd_outputs = autograd_outputs   # outputs may keep autograd history
        self.forward = forward                     # a forward Tracer this one reads from
        self.values: dict = {}             # id(native) -> Value
        self.keep: list = []               # every native and tensor seen, kept alive
        self.fullgraph = fullgraph
        self.breaks: list = []
        self.unsupported: list = []
        self.grad_owner: dict = {}         # id(gradient tensor) -> the tensor it belongs to
        self.grad_set: dict = {}           # id(tensor) -> tensor whose .grad was bound
        self.modules: dict = {}            # id(module) -> (module, training)
        self.optimizers: dict = {}         # id(optimizer) -> (optimizer, snapshot)
        self.backward = False
        self.fp: list = []                 # the fingerprint, built as nodes are recorded
        self.in_range: dict = {}           # id(index tensor) -> known bounds (ops/index.py)
        for k, t in enumerate(leaves):
            if type(t) is Tensor:
                self._input("arg", t, index=k)

    # -- values ------------------------------------------------------------------------
    def _input(self, kind, tensor, index=-1, owner=None) -> Value:
        v = Value(len(self.values), tuple(tensor._data.shape), tensor._dtype, tensor._device)
        self.values[id(tensor._data)] = v
        self.keep += [tensor._data, tensor]
        source = owner if kind == "grad" else tensor
        self.graph.inputs.append(Input(kind, v, index=index, tensor=source))
        if kind != "arg":
            self.graph.guards.setdefault("live", []).append(
                (kind, source, tensor._data, tensor.requires_grad))
        # an argument is its position; anything else the very object (stable across calls)
        self.fp.append(("in", kind, index, None if kind == "arg" else id(source),
                        tensor.requires_grad))
        return v

    def value_of(self, native, inputs, position, where) -> Value | None:
        v = self.values.get(id(native))
        if v is not None:
            return v
        tensor = None
        if position < len(inputs) and type(inputs[position]) is Tensor and \
                inputs[position]._data is native:
            tensor = inputs[position]
        else:
            tensor = next((t for t in inputs if type(t) is Tensor and t._data is native), None)
        if tensor is None:
            self.unsupported.append(f"{where}: an input array that no tensor holds")
            return None
        if self.forward is not None:
            saved = self.forward.values.get(id(native))
            if saved is not None:          # a backward reading what its forward made
                return self._saved(tensor, saved)
        owner = self.grad_owner.get(id(tensor))
        if owner is not None:
            return self._input("grad", tensor, owner=owner)
        return self._input("live", tensor)

    def _saved(self, tensor, forward_value) -> Value:
        v = Value(len(self.values), tuple(tensor._data.shape), tensor._dtype, tensor._device)
        self.values[id(tensor._data)] = v
        self.keep += [tensor._data, tensor]
        self.graph.inputs.append(Input("saved", v, index=forward_value.index))
        self.fp.append(("in", "saved", forward_value.index, None))
        return v

    def _output(self, native, device, dtype, node) -> Value:
        v = Value(len(self.values), tuple(native.shape), dtype, device, producer=node)
        self.values[id(native)] = v
        self.keep.append(native)
        return v

    def _arg(self, native, inputs, k, where):
        if native is None or type(native) in _CONSTS or isinstance(native, np.generic):
            self.fp.append(("c", type(native).__name__, native))
            return Const(native)
        v = self.value_of(native, inputs, k, where)
        self.fp.append(("v", v.index if v is not None else -1))
        return v if v is not None else Const(None)

    # -- records -------------------------------------------------------------------------
    def kernel(self, op, device, kernel, natives, attrs, inputs, result) -> None:
        args = [self._arg(n, inputs, k, op.name) for k, n in enumerate(natives)]
        node = Node("kernel", op.name, args, dict(attrs), None, op=op, fn=kernel,
                    device=device, inplace=result is None)
        if result is not None:
            node.out = self._output(result._data, device, result._dtype, node)
        self.graph.nodes.append(node)
        self.fp.append(("k", op.name, _attrs_key(attrs), result is None,
                        None if result is None else (node.out.shape, node.out.dtype.name)))

    def host(self, array, again, device, dtype, random: bool, name: str):
        """`array`, made on the host, moved to device; at replay again() makes it anew (a
        random draw advances the stream as eager would)."""
        native = _to_device(array, device)
        fn = _host_maker(again, device)
        node = Node("host", name, [], {}, None, fn=fn, device=device,
                    meta={"random": random})
        node.out = self._output(native, device, dtype, node)
        self.graph.nodes.append(node)
        key = (array.shape, str(array.dtype)) if random else (
            array.shape, str(array.dtype), zlib.crc32(np.ascontiguousarray(array).tobytes()))
        self.fp.append(("h", name, random, key, str(device)))
        return native

    def transfer(self, x: Tensor, device, move):
        native = move(x._data)
        arg = self._arg(x._data, (x,), 0, "to")
        node = Node("transfer", f"to_{device.type}", [arg], {}, None, fn=move, device=device)
        node.out = self._output(native, device, x._dtype, node)
        self.graph.nodes.append(node)
        self.fp.append(("t", str(device)))
        return native

    def check(self, name, fn, tensors, attrs=None) -> None:
        """fn(*natives) validates values (raising as eager would); it runs now and at every
        replay.  attrs: what it checks against (an index check's `size`), for the IR's
        consumers (export, ONNX)."""
        fn(*[t._data for t in tensors])
        args = [self._arg(t._data, tensors, k, name) for k, t in enumerate(tensors)]
        attrs = dict(attrs or {})
        self.graph.nodes.append(Node("check", name, args, attrs, None, fn=fn,
                                     device=tensors[0]._device))
        self.fp.append(("x", name, _attrs_key(attrs)))

    # -- what Python does with tensors -------------------------------------------------------
    def host_read(self, t: Tensor) -> None:
        v = self.values.get(id(t._data))
        made_by = v.producer.name if v is not None and v.producer is not None else None
        what = ".item()/.numpy()/print of " + (f"the output of {made_by}" if made_by
                                                 else "a tensor")
        where = _user_frame()
        if self.fullgraph:
            raise GraphBreak(f"graph break: {what} at {where}: the value reaches Python, so "
                             "what follows depends on data; with fullgraph=True this is an "
                             "error (move the read out of the compiled function, or compile "
                             "with fullgraph=False to run it eagerly)")
        self.breaks.append((what, where))

    def grad_read(self, owner: Tensor, g: Tensor) -> None:
        self.grad_owner[id(g)] = owner
        self.keep.append(g)

    def grad_bound(self, owner: Tensor, g) -> None:
        self.grad_set[id(owner)] = owner
        self.keep.append(owner)
        if g is not None:
            self.grad_owner[id(g)] = owner
            self.keep.append(g)

    def finish(self, result) -> None:
        graph = self.graph
        for owner in self.grad_set.values():
            g = (owner._meta or {}).get("grad")
            if g is None:
                graph.grads.append((owner, None))
                self.fp.append(("g", id(owner), None))
                continue
            v = self.values.get(id(g._data))
            if v is None:
                self.unsupported.append("a .grad bound to an array the graph did not make")
                continue
            graph.grads.append((owner, v))
            self.fp.append(("g", id(owner), v.index))
        try:
            check_structure(result, "compile")
        except EmberError as exc:
            self.unsupported.append(str(exc))
            return
        graph.outputs = self._outputs(result)
        self.fp.append(("out", _structure_key(graph.outputs)))
        graph.names = self._names()
        graph.guards["modules"] = list(self.modules.values())
        graph.guards["optimizers"] = list(self.optimizers.values())
        self.fp.append(("modules", tuple((id(m), tr) for m, tr in self.modules.values())))
        self.fp.append(("optim", tuple((id(o), s) for o, s in self.optimizers.values())))

    def _names(self) -> dict:
        """Parameter and buffer names from the modules called (the outermost first), and
        optimizer state as `<parameter>.<state>`, for printing."""
        names: dict = {}
        for module, _ in self.modules.values():
            for name, t in [*module.named_parameters(), *module.named_buffers()]:
                names.setdefault(id(t), name)
        for optimizer, _ in self.optimizers.values():
            for param, state in optimizer.state.items():
                for key, t in state.items():
                    if type(t) is Tensor:
                        names.setdefault(id(t), f"{names.get(id(param), 'param')}.{key}")
        return names

    def _outputs(self, value):
        if isinstance(value, tuple):
            return tuple(self._outputs(v) for v in value)
        if isinstance(value, list):
            return [self._outputs(v) for v in value]
        if isinstance(value, dict):
            return {k: self._outputs(v) for k, v in value.items()}
        if type(value) is Tensor:
            if value.requires_grad and value.grad_fn is not None and not self.backward \
                    and not self.autograd_outputs:
                self.unsupported.append(
                    "an output carries autograd history (it requires grad) and no backward "
                    "ran in the function: a replay has no autograd; compile the whole step "
                    "(forward, backward, optimizer) or call it under ember.no_grad()")
            v = self.values.get(id(value._data))
            if v is None:
                self.unsupported.append("an output tensor that the graph did not make")
                return Const(None)
            return v
        return Const(value)


def _attrs_key(attrs) -> tuple:
    return tuple(sorted((k, _freeze(v)) for k, v in attrs.items()))


def _freeze(v):
    if isinstance(v, (tuple, list)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, slice):
        return ("slice", v.start, v.stop, v.step)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _structure_key(s):
    if isinstance(s, (tuple, list)):
        return (type(s).__name__,) + tuple(_structure_key(x) for x in s)
    if isinstance(s, dict):
        return ("dict",) + tuple((k, _structure_key(v)) for k, v in s.items())
    if isinstance(s, Value):
        return ("v", s.index)
    return ("c", type(s.value).__name__, s.value)


def _to_device(array, device):
    if device.type == "cpu":
        return array
    return device.backend.from_host(np.ascontiguousarray(array), device.index)


def _host_maker(make, device):
    def fn():
        return _to_device(make(), device)
    return fn


def _user_frame() -> str:
    """file:line of the innermost frame outside ember (where the user's code is)."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))    # ember's package
    for frame in reversed(traceback.extract_stack()[:-2]):
        if not frame.filename.startswith(root):
            return f"{frame.filename}:{frame.lineno} ({frame.line})"
    return "inside ember"


# --- the hooks ------------------------------------------------------------------------------

class _Reporter:
    """What tensor.py and the dispatcher call while any thread captures."""

    @staticmethod
    def tracer():
        return _active.get(threading.get_ident())

    def __call__(self, op, device, kernel, natives, attrs, inputs, result):
        tr = _active.get(threading.get_ident())
        if tr is not None:
            tr.kernel(op, device, kernel, natives, attrs, inputs, result)

    def grad_read(self, owner, g):
        tr = _active.get(threading.get_ident())
        if tr is not None:
            tr.grad_read(owner, g)

    def grad_set(self, owner, g):
        tr = _active.get(threading.get_ident())
        if tr is not None:
            tr.grad_bound(owner, g)

    def host_read(self, t):
        tr = _active.get(threading.get_ident())
        if tr is not None:
            tr.host_read(t)


_REPORTER = _Reporter()


def current() -> Tracer | None:
    """The capture running in this thread, if any (for the few places that record
    themselves: host arrays, transfers, index checks, modules, optimizers)."""
    if Tensor._capture is None:
        return None
    return _active.get(threading.get_ident())


def notice_module(module) -> None:
    tr = current()
    if tr is not None:
        tr.modules[id(module)] = (module, module.training)


def notice_optimizer(optimizer) -> None:
    tr = current()
    if tr is not None:
        snapshot = tuple(tuple(sorted((k, _freeze(v)) for k, v in g.items() if k != "params"))
                         for g in optimizer.param_groups)
        tr.optimizers[id(optimizer)] = (optimizer, snapshot)


def cannot_replay(reason: str) -> None:
    """Say that what just ran cannot be replayed from a graph (work done outside kernels:
    a collective, I/O); a capture running in this thread then gives the graph up."""
    tr = current()
    if tr is not None:
        tr.unsupported.append(reason)


def notice_backward() -> None:
    tr = current()
    if tr is not None:
        tr.backward = True


def capture(fn, args=(), kwargs=None, *, fullgraph: bool = False,
            autograd_outputs: bool = False, forward: Trace | None = None,
            nested: bool = False) -> Trace:
    """Run fn(*args, **kwargs) eagerly in this thread, recording it into a Graph.

    autograd_outputs: outputs may carry autograd history (a forward whose backward is
    captured next, with `forward=` that trace: arrays the forward made become "saved"
    inputs of the backward graph).  nested: a capture inside a running one (vmap tracing
    its sample): the outer capture records none of this one's kernels, and resumes after.

    PyTorch
    -------
    ``torch.fx.symbolic_trace`` is the nearest; ember records a real eager run.
    """
    kwargs = kwargs or {}
    leaves = flatten(list(args) + list(kwargs.values()))
    tracer = Tracer(leaves, fullgraph, autograd_outputs,
                    forward.tracer if forward is not None else None)
    ident = threading.get_ident()
    outer = _active.get(ident) if nested else None
    if ident in _active and not nested:
        raise EmberError("capture: this thread is already capturing; nested captures (a "
                         "compiled function calling another while it is traced) are not "
                         "supported")
    with _lock:
        _active[ident] = tracer
        if len(_active) == 1 and outer is None:
            Tensor._capture = _REPORTER
            dispatch.add_hook("capture", _REPORTER)
    start = time.perf_counter()
    grad = dispatch.is_grad_enabled()
    try:
        result = fn(*args, **kwargs)
        tracer.finish(result)
    finally:
        with _lock:
            if outer is not None:
                _active[ident] = outer
            else:
                del _active[ident]
            if not _active:
                Tensor._capture = None
                dispatch.remove_hook("capture")
    graph = tracer.graph
    graph.guards["grad"] = grad
    tracer.fp.append(("grad", grad))
    return Trace(graph, result, tracer.breaks, tracer.unsupported,
                 time.perf_counter() - start, tuple(tracer.fp),
                 tracer if autograd_outputs else None)


def wrap_output(value, native):
    return wrap(native, value.device, value.dtype)
