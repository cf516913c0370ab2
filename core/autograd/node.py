"""The autograd graph's node: what one recorded op keeps for its VJP, and its edges.

Dispatch makes one per recorded op (dispatch.record); the engine (engine.py) walks them.
"""
from __future__ import annotations

import weakref

from ..errors import AutogradError
from ..tensor import Tensor, version, wrap

# ops/index.py's regrow: a view's history made again from its root's (Node.__init__)
_regrow: list = [None]


def use_regrow(fn) -> None:
    _regrow[0] = fn


# torch.autograd.graph.saved_tensors_hooks: a stack of (pack, unpack) pairs (graph.py pushes);
# a pair of None and a message where disable_saved_tensors_hooks is active
SAVED_HOOKS: list = []


class _Shape:
    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape


class _Packed:
    """A saved tensor as the pack hook returned it, and the unpack hook that gives it back;
    its shape and dtype stay readable (the engine fits each gradient to its input's)."""

    __slots__ = ("value", "unpack", "_data", "_dtype")

    def __init__(self, value, unpack, like=None):
        self.value, self.unpack = value, unpack
        if like is not None:
            self._data, self._dtype = _Shape(like._data.shape), like._dtype

    def get(self):
        t = self.unpack(self.value)
        if type(t) is not Tensor:
            raise AutogradError(f"saved_tensors_hooks: the unpack hook must return a Tensor, "
                                f"got {type(t).__name__}")
        return t


def pack_saved(x):
    """x as the innermost saved_tensors_hooks keep it (a _Packed), or x itself."""
    pack, unpack = SAVED_HOOKS[-1]
    if pack is None:
        raise AutogradError(unpack)          # disable_saved_tensors_hooks' message
    return _Packed(pack(x), unpack, x)

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class Node:
    """One recorded op: what its VJP needs, and the edges to its inputs' history.

    The output is kept as its native array only (not the Tensor), so the node does not keep
    its own output alive in a cycle.
    """

    __slots__ = ("op", "inputs", "versions", "attrs", "out", "next", "meta", "__weakref__")

    def __init__(self, op, out, inputs, attrs):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        # an edge is the input's node, the input itself when it is a leaf that needs a
        # gradient, or None; loops, not generators: this runs once per recorded op.  A
        # version is kept for the inputs whose values the VJP reads (op.uses: None for all,
        # positions, or a function of the inputs: mul reads x only when y needs a gradient),
        # so only those are checked against in-place modification, as PyTorch's saved ones
        uses = op.uses
        if uses is not None and not isinstance(uses, tuple):
            uses = uses(inputs)
        versions, edges = [], []
        i = -1
        for x in inputs:
            i += 1
            if type(x) is Tensor:
                m = x._meta
                # the family's version (tensor.version: views and detached aliases share
                # it, as torch's counter); the int itself where x has no alias
                versions.append((x._version if m is None else version(x))
                                if uses is None or i in uses else None)
                fn = x.grad_fn
                if m is not None and "made_from" in m and \
                        m["base"].grad_fn is not m["made_from"]:
                    fn = _regrow[0](x)     # a view whose root took a new history since
                edges.append(fn if fn is not None else (x if x.requires_grad else None))
            else:
                versions.append(None)
                edges.append(None)
        self.versions = versions
        self.next = edges
        # the output's native array and a weak reference to the output (enough to see an
        # in-place change), only for rules that read the output
        self.out = (out._data, out._device, out._dtype, weakref.ref(out)) if op.save_out \
            else None
        self.meta = {"anomaly": _anomaly_trace()} if _anomaly[0] else None
        if SAVED_HOOKS and getattr(op, "saves_through_hooks", True):
            self._pack(uses, out)

    def _pack(self, uses, out) -> None:
        """What the VJP reads, handed to the pack hook now and to unpack at backward (torch
        runs the hooks on each saved tensor); the inputs kept only for their shapes are kept
        as they are.  An in-place change of a packed tensor is not detected (torch's: the
        hook may have copied it)."""
        inputs = list(self.inputs)
        for i, x in enumerate(inputs):
            if type(x) is Tensor and (uses is None or i in uses):
                inputs[i] = pack_saved(x)
                self.versions[i] = None
        self.inputs = tuple(inputs)
        if self.out is not None:
            self.out = pack_saved(out)
        self._meta()["packed"] = True

    def name(self) -> str:
        """PyTorch's name for the node: AddBackward0 for op add; an op may carry its own
        (node_name: a custom Function's is MyReLUBackward, as torch's)."""
        own = getattr(self.op, "node_name", None)
        if own is not None:
            return own
        return "".join(p.capitalize() for p in self.op.name.split("_")) + "Backward0"

    def __repr__(self) -> str:
        return f"<{self.name()}>"

    @property
    def next_functions(self):
        return tuple((e if isinstance(e, Node) else (_Leaf(e) if e is not None else None), 0)
                     for e in self.next)

    def _meta(self) -> dict:
        if self.meta is None:
            self.meta = {}
        return self.meta

    @property
    def pre_hooks(self):
        return None if self.meta is None else self.meta.get("pre_hooks")

    @property
    def retained(self):
        return None if self.meta is None else self.meta.get("retained")

    def register_hook(self, fn):
        self._meta().setdefault("pre_hooks", []).append(fn)

    def _output(self) -> Tensor:
        data, device, dtype, _ = self.out
        t = wrap(data, device, dtype)
        t.grad_fn = self
        t.requires_grad = True
        return t

    def apply(self, g: Tensor):
        inputs = self.inputs
        if inputs is None:
            raise AutogradError(_FREED)
        if self.meta is not None and self.meta.get("packed"):
            return self._apply_unpacked(g)
        for x, v in zip(inputs, self.versions):
            if v is not None and version(x) != v:
                raise AutogradError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{x._dtype.name} tensor of shape "
                    f"{list(x.shape)}], which is an input of {self.name()} ({self.op.name}), "
                    f"is at version {version(x)}; expected version {v} instead. Hint: "
                    "replace the in-place op with its out-of-place form, or .clone() the "
                    "tensor before modifying it.")
        if self.out is not None:
            live = self.out[3]()
            if live is not None and live._version:     # (an output is its family's root:
                # writes through its views and detached aliases bump it)
                raise AutogradError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{live._dtype.name} tensor of shape "
                    f"{list(live.shape)}], which is output 0 of {self.name()}, is at version "
                    f"{live._version}; expected version 0 instead. Hint: .clone() the output "
                    "before modifying it in place.")
        out = self._output() if self.out is not None else None
        return self._vjp(g, out, inputs)

    def _vjp(self, g, out, inputs):
        if g._dtype.category == 3 and not getattr(self.op, "complex_grad", False) and \
                self.op.name not in OWN_COMPLEX_RULE:
            return _conjugated(self.op.vjp, g, out, inputs, self.attrs)
        grads = self.op.vjp(g, out, *inputs, **self.attrs)
        if type(grads) is not tuple:
            grads = (grads,)
        return grads

    def _apply_unpacked(self, g: Tensor):
        """apply() for a node recorded under saved_tensors_hooks: each packed value goes
        through its unpack hook."""
        inputs = tuple(x.get() if type(x) is _Packed else x for x in self.inputs)
        out = None
        if self.out is not None:
            t = self.out.get()
            out = wrap(t._data, t._device, t._dtype)
            out.grad_fn, out.requires_grad = self, True
        return self._vjp(g, out, inputs)


# ops whose VJP is written for complex gradients itself (the others' real formulas are
# conjugated around, see _conjugated)
OWN_COMPLEX_RULE = {"complex"}
# the conj and real primitives, handed down by ops/complex.py (a layer above autograd)
COMPLEX_PARTS: dict = {}


def use_complex_parts(conj, real) -> None:
    COMPLEX_PARTS.update(conj=conj, real=real)


def _conj(t):
    if type(t) is Tensor and t._dtype.category == 3:
        return COMPLEX_PARTS["conj"](t)
    if callable(t) and type(t) is not Tensor:
        return lambda: _conj(t())
    return t


def _conjugated(vjp, g, out, inputs, attrs):
    """PyTorch's convention for complex gradients (the conjugate Wirtinger derivative):
    a holomorphic op's input gradient is g * conj(f'(z)).  The VJPs are written as real
    formulas g * f'(x), which extend to complex numbers as they are; so the rule runs on
    conj(g) and its results are conjugated: conj(conj(g) * f'(z)) = g * conj(f'(z)).  For
    linear ops (sums, views, matmul's transposes) conj(conj(g) A) is g conj(A): torch's
    conjugate transposes.  Ops that are not holomorphic (abs, real, imag, angle through
    atan2, the complex constructor) either take real gradients (no conjugation happens)
    or are listed in OWN_COMPLEX_RULE."""
    grads = vjp(_conj(g), out, *inputs, **attrs)
    if type(grads) is not tuple:
        grads = (grads,)
    return tuple(_conj(gi) for gi in grads)


class _Leaf:
    """AccumulateGrad: what grad_fn.next_functions shows for a leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


_anomaly = [False]


def _anomaly_trace():
    import traceback
    return "".join(traceback.format_stack()[:-4])
