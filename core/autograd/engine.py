"""The graph node and the iterative backward engine (no recursion, frees what it used)."""
from __future__ import annotations

import weakref

from ..dispatch import is_grad_enabled, set_grad_enabled
from ..errors import AutogradError
from ..tensor import Tensor, wrap

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
                versions.append(x._version if uses is None or i in uses else None)
                fn = x.grad_fn
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
        for x, v in zip(inputs, self.versions):
            if v is not None and x._version != v:
                raise AutogradError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{x._dtype.name} tensor of shape "
                    f"{list(x.shape)}], which is an input of {self.name()} ({self.op.name}), "
                    f"is at version {x._version}; expected version {v} instead. Hint: "
                    "replace the in-place op with its out-of-place form, or .clone() the "
                    "tensor before modifying it.")
        if self.out is not None:
            live = self.out[3]()
            if live is not None and live._version:
                raise AutogradError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: [{live._dtype.name} tensor of shape "
                    f"{list(live.shape)}], which is output 0 of {self.name()}, is at version "
                    f"{live._version}; expected version 0 instead. Hint: .clone() the output "
                    "before modifying it in place.")
        out = self._output() if self.out is not None else None
        grads = self.op.vjp(g, out, *inputs, **self.attrs)
        if type(grads) is not tuple:
            grads = (grads,)
        return grads


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


def _unbroadcast(g: Tensor, shape) -> Tensor:
    """Sum a gradient back to an input's shape: broadcasting undone once, here."""
    gshape = g._data.shape
    if gshape == shape:
        return g
    from .. import ops
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    if dims:
        g = ops.sum(g, dim=dims, keepdim=True)
    if g._data.shape != shape:
        g = ops.reshape(g, shape)
    return g


def _add(a, b):
    return b if a is None else a + b


def _toposort(roots):
    """Nodes reachable from roots, each after every node that feeds it a gradient."""
    order, seen = [], set()
    for root in roots:
        if not isinstance(root, Node) or id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.next))]
        while stack:
            node, it = stack[-1]
            for e in it:
                if isinstance(e, Node) and id(e) not in seen:
                    seen.add(id(e))
                    stack.append((e, iter(e.next)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def run_backward(outputs, grad_outputs, *, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Backpropagate from outputs; accumulate into leaves' .grad or return grads of inputs."""
    if Tensor._capture is not None:
        from ..graph.capture import notice_backward
        notice_backward()
    prev = set_grad_enabled(bool(create_graph))     # this thread only
    try:
        return _run(outputs, grad_outputs, retain_graph, inputs, allow_unused, accumulate,
                    bool(create_graph))
    finally:
        set_grad_enabled(prev)


def _run(outputs, grad_outputs, retain_graph, inputs, allow_unused, accumulate, create_graph):
    pending: dict[int, Tensor] = {}        # id(node or leaf) -> summed incoming gradient
    roots = []
    leaf_grads: dict[int, Tensor] = {}
    want = None
    if inputs is not None:
        want = {}
        for x in inputs:
            want[id(x.grad_fn) if x.grad_fn is not None else id(x)] = x
    for out, g in zip(outputs, grad_outputs):
        fn = out.grad_fn
        if fn is None:
            if out.requires_grad:          # a leaf as output: its gradient is g itself
                leaf_grads[id(out)] = _add(leaf_grads.get(id(out)), g)
                if accumulate and want is None:      # autograd.grad leaves .grad alone
                    _accumulate(out, g, False)
                continue
            nondiff = out._get_meta("nondiff")
            raise AutogradError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
                + (f": it is the output of {nondiff}, which is not differentiable "
                   "(its result is piecewise constant or an integer)" if nondiff else
                   "; call .requires_grad_() on the inputs before computing the output"))
        pending[id(fn)] = _add(pending.get(id(fn)), g)
        roots.append(fn)
    captured: dict[int, Tensor] = {}
    anomaly = _anomaly[0]
    for node in _toposort(roots):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        meta = node.meta
        if meta is not None:
            for hook in meta.get("pre_hooks", ()):
                r = hook(g)
                if r is not None:
                    g = r
            retained = meta.get("retained")
            t = retained() if retained is not None else None
            if t is not None:
                t._set_grad(g if t.grad is None else t.grad + g)
        if want is not None and id(node) in want:
            captured[id(node)] = g
        grads = node.apply(g)
        if anomaly:
            _check_anomaly(node, grads)
        # which gradients this pass may hand to a leaf as they are (see _accumulate): the
        # fresh results of the node's own rule, never g, a saved tensor or a view
        fresh = not create_graph and getattr(node.op, "fresh_grads", True)
        seen = []
        for i, (edge, x) in enumerate(zip(node.next, node.inputs)):
            if i >= len(grads):
                break
            gi = grads[i]
            if edge is None or gi is None:
                continue
            if type(gi) is not Tensor:
                if callable(gi):
                    gi = gi()           # a lazy rule: computed only when an input needs it
                if type(gi) is not Tensor:
                    raise AutogradError(f"{node.name()} returned a {type(gi).__name__} "
                                        "gradient; expected a Tensor")
            if gi._data.shape != x._data.shape:
                gi = _unbroadcast(gi, x._data.shape)
            if gi._dtype is not x._dtype:
                gi = gi.to(x._dtype)
            owned = fresh and gi is not g and gi._meta is None and not any(
                gi is t for t in seen) and not any(gi is t for t in node.inputs)
            seen.append(gi)
            if type(edge) is Node:
                key = id(edge)
                prev = pending.get(key)
                pending[key] = gi if prev is None else prev + gi
            elif want is not None:
                key = id(edge)
                if key in want:
                    leaf_grads[key] = _add(leaf_grads.get(key), gi)
            elif accumulate:
                _accumulate(edge, gi, owned)
        if not retain_graph:
            node.inputs = None
            node.out = None
    if want is None:
        return None
    result = []
    for x in inputs:
        key = id(x.grad_fn) if x.grad_fn is not None else id(x)
        g = captured.get(key) if x.grad_fn is not None else leaf_grads.get(key)
        if g is None and not allow_unused:
            raise AutogradError(
                "One of the differentiated Tensors appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _accumulate(leaf: Tensor, g: Tensor, owned: bool) -> None:
    """Add g into leaf.grad.  A gradient the engine owns (a fresh result of a VJP that no
    other tensor, graph node or leaf can see; see _run) is adopted as the leaf's .grad, as
    PyTorch's AccumulateGrad steals an unshared gradient; any other is copied, so in-place
    updates of .grad (optimizers, zero_grad) reach nothing else.  Kernels other than the
    movement ops return new memory (the backend contract), so a fresh, unmarked result
    shares none."""
    hooks = leaf._get_meta("hooks")
    if hooks:
        for hook in hooks:
            r = hook(g)
            if r is not None:
                g, owned = r, False
    old = leaf.grad
    if old is None:
        if is_grad_enabled():
            leaf._set_grad(g)
        elif owned:
            leaf._set_grad(g.detach())
        else:
            leaf._set_grad(g.detach().clone())
    else:
        leaf._set_grad(old + g)


def _check_anomaly(node, grads):
    from .. import ops
    from .grad_mode import no_grad
    for gi in grads:
        if type(gi) is Tensor and gi._dtype.category == 2:
            with no_grad():
                bad = not bool(ops.all(ops.isfinite(gi)).item())
            if bad:
                raise AutogradError(
                    f"Function '{node.name()}' returned nan or inf values in its gradient. "
                    f"The forward op ({node.op.name}) was called at:\n"
                    f"{(node.meta or {}).get('anomaly', '?')}")


def retain(t: Tensor) -> None:
    if t.grad_fn is not None:
        t.grad_fn._meta()["retained"] = weakref.ref(t)
