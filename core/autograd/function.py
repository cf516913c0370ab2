"""autograd.Function: custom forward and backward rules, run by ember's autograd engine.

Function.apply runs forward with grad mode off and records one graph node whose op calls
the subclass's backward, so custom functions mix with ember ops in one graph (backward,
autograd.grad, hooks, retain_graph, create_graph for double backward) exactly like
built-in ops.  Both of torch's styles work: forward(ctx, *args), and forward(*args) with a
separate setup_context(ctx, inputs, output).

A graph node has one output.  A function that returns several differentiable tensors gets
one small node per output; in backward those nodes hand their gradients to the function's
node (through a 0-d placeholder tensor that only orders the graph), which then calls
backward once with every output's gradient.
"""
from __future__ import annotations

import functools
import inspect
import re
import weakref
from typing import Any

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import AutogradError, EmberTypeError
from ..tensor import Tensor, version
from .grad_mode import is_grad_enabled, no_grad
from .node import SAVED_HOOKS, Node, _Packed, pack_saved

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The `ctx` a Function's forward/setup_context fills and its backward reads.

    Any attribute may be set on it; the methods below are torch's."""

    def __init__(self) -> None:
        self.needs_input_grad: tuple[bool, ...] = ()
        self.materialize_grads = True
        self._saved: tuple = ()
        self._non_differentiable: tuple = ()
        self._dirty: tuple = ()

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (inputs, outputs or intermediates) for backward; read them back as
        ctx.saved_tensors.  Changing one in place before backward is an error there."""
        for t in tensors:
            if t is not None and type(t) is not Tensor:
                raise EmberTypeError(f"save_for_backward can only save tensors (or None), "
                                     f"got {type(t).__name__}; keep other values as ctx "
                                     "attributes")
        if SAVED_HOOKS:                 # torch.autograd.graph.saved_tensors_hooks
            self._saved = tuple(None if t is None else pack_saved(t) for t in tensors)
            return
        self._saved = tuple(None if t is None else _Saved(t) for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        return tuple(None if s is None else s.get() if type(s) is _Packed else s.unpack()
                     for s in self._saved)

    saved_variables = saved_tensors

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """These outputs get no gradient (e.g. indices); backward still receives a zero
        gradient for them."""
        self._non_differentiable = args

    def mark_dirty(self, *args: Tensor) -> None:
        """These inputs were modified in place by forward and are returned as outputs."""
        self._dirty = args

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def save_for_forward(self, *tensors) -> None:
        raise AutogradError("save_for_forward: ember has no forward-mode autograd (jvp) "
                            "yet; use backward mode (Function.backward)")


class _Saved:
    """A saved tensor and its version when saved.  An output is held weakly (a strong
    reference would close a cycle output -> node -> ctx -> output) with an alias of its
    data for when the output itself has gone."""

    __slots__ = ("tensor", "ref", "alias", "grad_fn", "version")

    def __init__(self, t: Tensor) -> None:
        self.tensor = t
        self.ref = self.alias = self.grad_fn = None
        self.version = version(t)

    def as_output(self) -> None:
        t = self.tensor
        self.ref = weakref.ref(t)
        self.alias = t.detach()
        self.grad_fn = weakref.ref(t.grad_fn) if t.grad_fn is not None else None
        self.tensor = None

    def unpack(self) -> Tensor:
        t = self.tensor if self.ref is None else self.ref()
        if t is None:                      # an output nobody holds any more
            t = self.alias
            node = self.grad_fn() if self.grad_fn is not None else None
            if node is not None and is_grad_enabled():
                t = t.detach()             # reattached for create_graph=True
                t.grad_fn, t.requires_grad = node, True
            return t
        if version(t) != self.version:
            raise AutogradError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t._dtype.name} tensor of shape {list(t.shape)}] "
                f"saved by save_for_backward is at version {version(t)}; expected version "
                f"{self.version} instead. Hint: .clone() the tensor before modifying it.")
        return t


def _node_name(cls: type) -> str:
    # Node.name() capitalises the parts of the op name: "my_func" -> "MyFuncBackward0"
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cls.__name__)


class _FunctionOp:
    """The op of a Function's graph node: calls the user's backward with every output's
    gradient and checks what comes back."""

    save_out = False
    uses = ()                   # version checks are done by ctx.saved_tensors instead
    saves_through_hooks = False  # ctx.save_for_backward runs the saved-tensor hooks
    fresh_grads = False         # backward may return g, a saved tensor or a view: copy it
    complex_grad = True         # the user's backward takes torch's complex gradients as is

    def __init__(self, cls, ctx, n_inputs: int, outputs: list) -> None:
        self.name = _node_name(cls)
        self.node_name = cls.__name__ + "Backward"      # torch's grad_fn name
        self.cls = cls
        self.ctx = ctx
        self.n_inputs = n_inputs
        # (shape, dtype, device) of each output, to make zero gradients
        self.meta = [(o._data.shape, o._dtype, o._device) if type(o) is Tensor else None
                     for o in outputs]
        self.grads: list = [None] * len(outputs)
        self.direct: int | None = None    # the output index when it is the node's output

    def vjp(self, g, out, *inputs):
        grads, self.grads = self.grads, [None] * len(self.grads)
        if self.direct is not None:
            grads[self.direct] = g
        if self.ctx.materialize_grads:
            grads = [ops.zeros(m[0], dtype=m[1], device=m[2]) if gi is None and m else gi
                     for gi, m in zip(grads, self.meta)]
        result = _backward_of(self.cls)(self.ctx, *grads)
        return self._check(result, inputs)

    def _check(self, result, inputs) -> tuple:
        name = self.cls.__name__ + "Backward"
        if type(result) is not tuple:
            result = (result,)
        n = self.n_inputs
        if len(result) < n or any(r is not None for r in result[n:]):
            raise AutogradError(f"function {name} returned an incorrect number of gradients "
                                f"(expected {n}, got {len(result)})")
        out = []
        for i, (r, x) in enumerate(zip(result, inputs)):
            if r is None:
                out.append(None)
                continue
            if type(x) is not Tensor:
                raise AutogradError(f"function {name} returned a gradient different than "
                                    f"None at position {i + 1}, but the corresponding "
                                    "forward input was not a Tensor")
            if type(r) is not Tensor:
                raise AutogradError(f"function {name} returned a {type(r).__name__} as the "
                                    f"gradient at position {i + 1}; expected a Tensor or None")
            shape, gshape = x._data.shape, r._data.shape
            if gshape != shape and not _sums_to(gshape, shape):
                raise AutogradError(f"Function {name} returned an invalid gradient at index "
                                    f"{i} - got {list(gshape)} but expected shape compatible "
                                    f"with {list(shape)}")
            out.append(r if x.requires_grad else None)
        return tuple(out)


def _sums_to(gshape, shape) -> bool:
    """Whether a gradient of gshape sums back to shape (shape broadcasts to gshape)."""
    try:
        return np.broadcast_shapes(shape, gshape) == tuple(gshape)
    except ValueError:
        return False


class _OutputOp:
    """The node of one output of a multi-output Function: passes its gradient on to the
    function's node and returns a zero for the 0-d placeholder."""

    save_out = False
    uses = ()
    fresh_grads = False
    saves_through_hooks = False

    def __init__(self, function_op: _FunctionOp, index: int, zero: Tensor) -> None:
        self.name = function_op.name
        self.function_op = function_op
        self.index = index
        self.zero = zero

    def vjp(self, g, out, placeholder):
        self.function_op.grads[self.index] = g
        return (self.zero,)


def _backward_of(cls):
    if cls.backward is not Function.backward:
        return cls.backward
    if cls.vjp is not Function.vjp:
        return cls.vjp
    raise NotImplementedError(f"{cls.__name__}: you must implement either the backward or "
                              "vjp method of a custom autograd.Function to use it with "
                              "backward mode AD")


@functools.lru_cache(maxsize=256)
def _signature(fn) -> inspect.Signature:
    return inspect.signature(fn)


class Function:
    """Base class of custom differentiable operations, as torch.autograd.Function.

    Subclasses define static methods forward and backward and are called through
    apply::

        class Exp(Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)

    backward returns one gradient (or None) per forward input.  forward runs with grad
    mode off; backward runs with grad mode on only under create_graph=True, and then its
    ops are recorded, so a backward written with ember ops differentiates again.
    """

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs):
        raise AutogradError("Legacy autograd function with non-static forward method is not "
                            "supported: make forward and backward @staticmethods and call "
                            f"{type(self).__name__}.apply(...)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def vjp(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        raise NotImplementedError("ember has no forward-mode autograd (jvp) yet")

    @classmethod
    def apply(cls, *args, **kwargs):
        separate = cls.setup_context is not Function.setup_context
        if separate or kwargs:
            # torch binds keyword and default arguments to positions: each positional
            # input may then get its gradient
            bound = _signature(cls.forward).bind(*((None,) if not separate else ()), *args,
                                                 **kwargs)
            bound.apply_defaults()
            args = bound.args if separate else bound.args[1:]
            kwargs = bound.kwargs
        ctx = FunctionCtx()
        grad_on = is_grad_enabled()
        ctx.needs_input_grad = tuple(grad_on and type(a) is Tensor and a.requires_grad
                                     for a in args)
        with no_grad():
            if separate:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        if not any(ctx.needs_input_grad):
            return output
        return _record(cls, ctx, args, output)


def _record(cls, ctx: FunctionCtx, args: tuple, output):
    """Attach the graph node(s) of one Function call to its outputs."""
    single = type(output) is not tuple
    outs = [output] if single else list(output)
    dirty = {id(t) for t in ctx._dirty}
    for t in ctx._dirty:
        if not any(t is a for a in args):
            raise AutogradError(f"{cls.__name__}: mark_dirty() was given a tensor that is "
                                "not an input of forward")
        if t.grad_fn is None and t.requires_grad:
            raise AutogradError(f"{cls.__name__}: a leaf Variable that requires grad is "
                                "being used in an in-place operation (mark_dirty)")
    non_diff = {id(t) for t in ctx._non_differentiable}
    originals = list(outs)
    for i, o in enumerate(outs):
        if type(o) is Tensor and id(o) not in dirty and any(o is a for a in args):
            outs[i] = o.detach()           # an input returned as is: its history stays
    differentiable = [i for i, o in enumerate(outs) if type(o) is Tensor and
                      id(originals[i]) not in non_diff and o._dtype.category >= D.FLOAT]
    op = _FunctionOp(cls, ctx, len(args), outs)
    if len(differentiable) == 1:
        i = differentiable[0]
        op.direct = i
        node = Node(op, outs[i], args, {})
        outs[i].grad_fn, outs[i].requires_grad = node, True
    elif differentiable:
        first = outs[differentiable[0]]
        placeholder = ops.zeros((), dtype=first.dtype, device=first.device)
        node = Node(op, placeholder, args, {})
        placeholder.grad_fn, placeholder.requires_grad = node, True
        for i in differentiable:
            o = outs[i]
            o.grad_fn = Node(_OutputOp(op, i, placeholder.detach()), o, (placeholder,), {})
            o.requires_grad = True
    # saved outputs are held weakly (see _Saved); inputs stay held by the node anyway
    position = {id(t): i for i, t in enumerate(originals) if type(t) is Tensor
                and (id(t) in dirty or not any(t is a for a in args))}
    for s in ctx._saved:
        if s is not None and type(s) is not _Packed and id(s.tensor) in position:
            s.tensor = outs[position[id(s.tensor)]]
            s.version = version(s.tensor)
            s.as_output()
    return outs[0] if single else tuple(outs)


class _OnceOp:
    """The op of a node that refuses to be differentiated (see once_differentiable)."""

    name = "once_differentiable"
    complex_grad = True
    save_out = False
    uses = ()
    fresh_grads = False

    def vjp(self, g, out, *inputs):
        raise AutogradError("trying to differentiate twice a function that was marked with "
                            "@once_differentiable")


def once_differentiable(fn):
    """Decorate a Function's backward that is not itself differentiable: it runs with grad
    mode off, and differentiating its result (create_graph=True) raises an error."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        sources = tuple(a for a in args if type(a) is Tensor and a.requires_grad)
        if not sources:
            return outputs
        single = type(outputs) is not tuple
        marked = []
        for o in ([outputs] if single else outputs):
            if type(o) is Tensor and o._dtype.category >= D.FLOAT:
                o = o.detach()
                o.grad_fn, o.requires_grad = Node(_OnceOp(), o, sources, {}), True
            marked.append(o)
        return marked[0] if single else tuple(marked)
    return wrapper
