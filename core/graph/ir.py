"""The graph IR: values (shape, dtype, device), nodes (declared ops with attrs), a printer and a
verifier.  One IR serves ember.compile (replay), ember.export and ember.onnx.

A graph is a straight-line program.  Its inputs are explicit: the function's tensor
arguments ("arg"), tensors that live outside the call and are read live at every replay
("live": parameters, buffers, optimizer state; "grad": the .grad of such a tensor), and
constants.  Its effects are explicit too: nodes that write into their first input
(in-place kernels, assign), the gradients it binds to tensors' .grad, and its outputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import EmberError, EmberValueError


class GraphError(EmberError, RuntimeError):
    """A graph that is malformed, or an operation a graph cannot express.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


@dataclass(eq=False)
class Value:
    """One array in the program: produced by a node, or an input.

    PyTorch
    -------
    None: ember's graph values; ``torch.fx.Node`` plays both roles.
    """

    index: int
    shape: tuple
    dtype: Any                      # an ember DType
    device: Any                     # an ember Device
    producer: Node | None = None    # None for inputs
    name: str = ""

    def __repr__(self) -> str:
        return self.name or f"v{self.index}"

    @property
    def type_text(self) -> str:
        dims = ",".join(str(n) for n in self.shape)
        return f"{self.dtype.name}[{dims}] {self.device}"


@dataclass(frozen=True)
class Const:
    """A Python value baked into the graph (a scalar, None, a dtype, a tuple...).

    PyTorch
    -------
    None: ember's graph constants.
    """

    value: Any

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(eq=False)
class Input:
    """Where an input value comes from at every replay.

    kind "arg": the function's positional tensor argument `index`; "live": the tensor
    object `tensor`, read live (its current memory); "grad": `tensor.grad`.

    PyTorch
    -------
    None: ember's graph inputs; ``torch.fx.Graph.placeholder`` is the nearest.
    """

    kind: str
    value: Value
    index: int = -1
    tensor: Any = None
    label: str = ""


@dataclass(eq=False)
class Node:
    """One step: kind "kernel" calls a backend kernel (op: its declaration); "host" makes a
    host array and moves it to a device (constants, random draws: `fn` makes it again at
    every replay); "transfer" copies a value to another device; "check" validates values
    (index bounds) and raises as eager would.  `out` is None for nodes that only write into
    their first input (in-place kernels) or only check.

    PyTorch
    -------
    ``torch.fx.Node`` is the nearest.
    """

    kind: str
    name: str
    args: list                      # Values or Consts, positional
    attrs: dict
    out: Value | None
    op: Any = None                  # the ember Op, for kernel nodes
    fn: Any = None                  # the callable replay runs (a kernel, a maker...)
    device: Any = None
    inplace: bool = False
    meta: dict = field(default_factory=dict)

    @property
    def effect(self) -> bool:
        """Whether the node must run even when nobody reads its output."""
        return self.inplace or self.kind == "check" or self.meta.get("random", False)


@dataclass(eq=False)
class Graph:
    """A captured program: its inputs, the nodes (backend kernel calls) in order, the
    output structure, the gradients it writes, the guards it assumed and the parameter
    names of its inputs.  :func:`ember.graph.capture` records one; ``ember.compile`` replays
    and fuses it.

    PyTorch
    -------
    ``torch.fx.Graph`` is the nearest (ember's graph holds backend kernel calls).
    """

    inputs: list = field(default_factory=list)         # [Input]
    nodes: list = field(default_factory=list)          # [Node]
    outputs: Any = None                                # the output structure (see flatten)
    grads: list = field(default_factory=list)          # [(tensor, Value | Input | None)]
    guards: dict = field(default_factory=dict)         # what the graph assumed (compile.py)
    names: dict = field(default_factory=dict)          # id(tensor) -> parameter name
    # what ember.compile's mode asks of the replay (compile.py): "cudagraphs" (None: the
    # backend's default, or True/False: recorded launches on/off), "generic" (True: ember's
    # generic replay, no backend compile_graph)
    options: dict = field(default_factory=dict)

    # -- reading -----------------------------------------------------------------------
    def values(self) -> list:
        out = [i.value for i in self.inputs]
        out += [n.out for n in self.nodes if n.out is not None]
        return out

    def output_values(self) -> list:
        return [v for v in flatten(self.outputs) if isinstance(v, Value)]

    def op_counts(self) -> dict:
        counts: dict = {}
        for n in self.nodes:
            counts[n.name] = counts.get(n.name, 0) + 1
        return counts

    # -- printing ----------------------------------------------------------------------
    def print(self, file=None) -> None:
        """Print the graph as a readable program."""
        print(self.format(), file=file)

    def format(self) -> str:
        args = [i for i in self.inputs if i.kind == "arg"]
        head = ", ".join(f"{i.value!r}: {i.value.type_text}" for i in args)
        lines = [f"graph({head}):"]
        for i in self.inputs:
            if i.kind != "arg":
                source = i.label or self.names.get(id(i.tensor), f"tensor@{id(i.tensor):x}")
                what = f"{source}.grad" if i.kind == "grad" else source
                lines.append(f"    {i.value!r}: {i.value.type_text} = {i.kind} {what}")
        for n in self.nodes:
            call = ", ".join([repr(a) for a in n.args] +
                             [f"{k}={_short(v)}" for k, v in n.attrs.items()])
            what = f"{n.name}({call})" if n.kind == "kernel" else f"{n.kind}:{n.name}({call})"
            if n.out is None:
                target = f"  # writes {n.args[0]!r}" if n.inplace else ""
                lines.append(f"    {what}{target}")
            else:
                lines.append(f"    {n.out!r}: {n.out.type_text} = {what}")
        for tensor, v in self.grads:
            label = self.names.get(id(tensor), f"tensor@{id(tensor):x}")
            lines.append(f"    {label}.grad <- {v!r}")
        lines.append(f"    return {_structure(self.outputs)}")
        return "\n".join(lines)

    __str__ = format

    # -- checking ----------------------------------------------------------------------
    def verify(self) -> None:
        """Raise GraphError where the graph is malformed: a value used before it is made,
        made twice, or unknown; a kernel node whose declared shape rule disagrees with its
        recorded output."""
        defined = set()
        for i in self.inputs:
            if id(i.value) in defined:
                raise GraphError(f"graph: input {i.value!r} is defined twice")
            defined.add(id(i.value))
        for k, n in enumerate(self.nodes):
            for a in n.args:
                if isinstance(a, Value) and id(a) not in defined:
                    raise GraphError(f"graph: node {k} ({n.name}) uses {a!r} before it is made")
                if not isinstance(a, (Value, Const)):
                    raise GraphError(f"graph: node {k} ({n.name}) has an argument of type "
                                     f"{type(a).__name__}; expected a Value or a Const")
            if n.inplace and not (n.args and isinstance(n.args[0], Value)):
                raise GraphError(f"graph: in-place node {k} ({n.name}) writes no value")
            if n.out is not None:
                if id(n.out) in defined:
                    raise GraphError(f"graph: node {k} ({n.name}) redefines {n.out!r}")
                defined.add(id(n.out))
                if n.out.producer is not n:
                    raise GraphError(f"graph: {n.out!r} does not name node {k} as its producer")
                _check_shape(k, n)
        for v in self.output_values():
            if id(v) not in defined:
                raise GraphError(f"graph: output {v!r} is never made")
        for _, v in self.grads:
            if isinstance(v, Value) and id(v) not in defined:
                raise GraphError(f"graph: a gradient binds {v!r}, which is never made")


def _check_shape(k, n) -> None:
    if n.kind != "kernel" or n.op is None or n.op.shape is None:
        return
    shapes = [_Shaped(a) if isinstance(a, Value) else a.value for a in n.args]
    try:
        want = tuple(n.op.shape(shapes, n.attrs))
    except Exception:         # noqa: BLE001  (a rule that cannot judge: nothing to compare)
        return
    if want != tuple(n.out.shape):
        raise GraphError(f"graph: node {k} ({n.name}) records shape {n.out.shape}; its "
                         f"declaration's shape rule gives {want}")


class _Shaped:
    """What shape rules read of a tensor (x._data.shape, x._dtype), for a Value."""

    def __init__(self, value: Value):
        self._data = _ShapeOnly(value.shape)
        self._dtype = value.dtype


class _ShapeOnly:
    def __init__(self, shape):
        self.shape = tuple(shape)


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def flatten(structure) -> list:
    """The leaves of an output structure (tuples, lists, dicts)."""
    if isinstance(structure, (tuple, list)):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for item in structure.values() for leaf in flatten(item)]
    return [structure]


def _structure(s) -> str:
    if isinstance(s, tuple):
        return "(" + ", ".join(_structure(x) for x in s) + ("," if len(s) == 1 else "") + ")"
    if isinstance(s, list):
        return "[" + ", ".join(_structure(x) for x in s) + "]"
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in s.items()) + "}"
    return repr(s)


def check_structure(value, where: str) -> None:
    """Outputs may be tensors, Python numbers/None/strings and tuples, lists, dicts of them."""
    from ..tensor import Tensor
    if isinstance(value, (tuple, list)):
        for v in value:
            check_structure(v, where)
    elif isinstance(value, dict):
        for v in value.values():
            check_structure(v, where)
    elif not (type(value) is Tensor or value is None or isinstance(value, (bool, int, float,
                                                                            str))):
        raise EmberValueError(f"{where}: cannot return a {type(value).__name__} from a "
                              "compiled function; return tensors, numbers, or tuples, lists "
                              "and dicts of them")
