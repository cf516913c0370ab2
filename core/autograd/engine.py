"""The iterative backward engine (no recursion, frees what it used) and its entry points,
backward() and grad(); the node it walks is node.py."""
from __future__ import annotations

import weakref
from contextlib import contextmanager

from ..dispatch import is_grad_enabled, set_grad_enabled
from ..errors import AutogradError, EmberTypeError
from ..tensor import Tensor
from .grad_mode import no_grad
from .node import _FREED, Node, _anomaly  # noqa: F401  (Node: autograd.engine.Node, as before)


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
        # fresh results of the node's own rule, never g, a saved tensor or a view; decided
        # only for the gradients that reach a leaf (seen: those handed on so far)
        fresh = not create_graph and getattr(node.op, "fresh_grads", True)
        seen = []
        n = len(grads)
        i = -1
        for edge, x in zip(node.next, node.inputs):
            i += 1
            if i >= n:
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
                gi = _to_input_dtype(gi, x._dtype)
            if type(edge) is Node:
                key = id(edge)
                prev = pending.get(key)
                pending[key] = gi if prev is None else prev + gi
            elif want is not None:
                key = id(edge)
                if key in want:
                    leaf_grads[key] = _add(leaf_grads.get(key), gi)
            elif accumulate:
                _accumulate(edge, gi, fresh and gi is not g and gi._meta is None
                            and _unseen(gi, seen) and _unseen(gi, node.inputs))
            seen.append(gi)
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


def _unseen(t, tensors) -> bool:
    """t is none of `tensors` (by identity)."""
    for u in tensors:
        if u is t:
            return False
    return True


def _to_input_dtype(g: Tensor, dtype) -> Tensor:
    """A gradient in its input's dtype; a complex gradient of a real input is its real part
    (torch's handle_r_to_c: the input entered the complex computation through a cast)."""
    if g._dtype.category == 3 and dtype.category != 3:
        from .node import COMPLEX_PARTS
        g = COMPLEX_PARTS["real"](g)
    return g.to(dtype)


def _accumulate(leaf: Tensor, g: Tensor, owned: bool) -> None:
    """Add g into leaf.grad.  A gradient the engine owns (a fresh result of a VJP that no
    other tensor, graph node or leaf can see; see _run) is adopted as the leaf's .grad, as
    PyTorch's AccumulateGrad steals an unshared gradient; any other is copied, so in-place
    updates of .grad (optimizers, zero_grad) reach nothing else.  Kernels other than the
    movement ops return new memory (the backend contract), so a fresh, unmarked result
    shares none.  A later gradient is added into the existing .grad in place outside
    create_graph, as AccumulateGrad's `grad += new`."""
    meta = leaf._meta
    hooks = None if meta is None else meta.get("hooks")
    if hooks:
        for hook in hooks:
            r = hook(g)
            if r is not None:
                g, owned = r, False
    old = leaf.grad
    if old is None:
        if is_grad_enabled():
            leaf._set_grad(g)
        elif owned and g.grad_fn is None and not g.requires_grad:
            leaf._set_grad(g)           # no one else holds it: adopted as it is (no alias)
        elif owned:
            leaf._set_grad(g.detach())
        else:
            leaf._set_grad(g.detach().clone())
    elif (not is_grad_enabled() and Tensor._capture is None and not old.requires_grad
          and old._dtype is g._dtype and old._device is g._device
          and old._data.shape == g._data.shape):
        # added into in place, as PyTorch's AccumulateGrad does outside create_graph
        # (`grad += new`): no new array per backward, and a reference to .grad (one the
        # user set too) sees the sum, as in torch
        old.add_(g)
    else:
        leaf._set_grad(old + g)
    post = leaf._get_meta("post_accumulate_hooks")
    if post:
        for hook in post:
            hook(leaf)


def _check_anomaly(node, grads):
    from .. import ops
    for gi in grads:
        if type(gi) is Tensor and gi._dtype.category >= 2:
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


def _grad_outputs(outputs, grad_outputs):
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif type(grad_outputs) is Tensor:
        grad_outputs = [grad_outputs]
    result = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out.numel() != 1:
                raise AutogradError(
                    f"grad can be implicitly created only for scalar outputs; this output has "
                    f"shape {list(out.shape)}: pass gradient=ember.ones_like(out) (or the "
                    "gradient you want)")
            # ones_like(out), without its argument handling
            from ..ops.creation import _filled
            g = _filled(out._data.shape, 1, out._dtype, out._device, False)
        elif type(g) is not Tensor:
            raise EmberTypeError(f"gradient must be a Tensor, got {type(g).__name__}")
        elif g.shape != out.shape:
            raise AutogradError(f"Mismatch in shape: grad_output has a shape of "
                                f"{list(g.shape)} and output has a shape of {list(out.shape)}")
        result.append(g)
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into every leaf's .grad."""
    if type(tensors) is Tensor:
        tensors = [tensors]
    tensors = list(tensors)
    grads = _grad_outputs(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = [inputs] if type(inputs) is Tensor else list(inputs)
        found = run_backward(tensors, grads, retain_graph=retain_graph,
                                    create_graph=create_graph, inputs=inputs,
                                    allow_unused=True)
        for x, g in zip(inputs, found):
            if g is not None:
                x._set_grad(g if x.grad is None else x.grad + g)
        return
    run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None,
         materialize_grads: bool = False):
    """The gradients of outputs with respect to inputs (leaves' .grad are untouched).
    only_inputs is PyTorch's deprecated flag, ignored there as here: only_inputs=False
    warns, as PyTorch does, and computes the same."""
    if not only_inputs:
        import warnings
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    allow_unused = bool(allow_unused)
    single = type(outputs) is Tensor
    outputs = [outputs] if single else list(outputs)
    inputs_t = [inputs] if type(inputs) is Tensor else list(inputs)
    for x in inputs_t:
        if not x.requires_grad:
            raise AutogradError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, _grad_outputs(outputs, grad_outputs),
                                 retain_graph=retain_graph, create_graph=create_graph,
                                 inputs=inputs_t,
                                 allow_unused=allow_unused or materialize_grads)
    if materialize_grads:
        from .. import ops
        result = tuple(ops.zeros_like(x) if g is None else g for x, g in zip(inputs_t, result))
    return result


@contextmanager
def detect_anomaly(check_nan: bool = True):
    """Within the block, a NaN/inf gradient raises an error naming the forward op and where
    it was called."""
    prev = _anomaly[0]
    _anomaly[0] = bool(check_nan)
    try:
        yield
    finally:
        _anomaly[0] = prev


def set_detect_anomaly(mode: bool) -> None:
    _anomaly[0] = bool(mode)
