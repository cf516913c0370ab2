"""ember.compile on the CPU: the generic replay (ember.graph.replay.generate) of a graph
rewritten where NumPy can do the same work with less, each result bit for bit the one the
recorded kernels give (the compiled step stays identical to eager: tests/graph):

- a cross-entropy and its gradient over the same logits, targets and weights (a training
  step's loss and its backward) share one pass: the gradient kernel computes the
  exponentials of the shifted rows and their sums again, the forward already had them
  (loss.cross_entropy_saving keeps them for the backward, which divides them in place);
  the ones that seed that backward, read by it alone, are made once, not at every replay;
- relu writes into its input where that input is a fresh array (a linear's or a
  convolution's result) that nothing else reads: one array fewer allocated and written,
  as a hand-written step's in-place ReLU (`np.maximum(z, 0, out=z)`); relu's gradient
  likewise into a fresh incoming gradient (a matmul's) that nothing else reads.

Each rewrite replaces a node's callable only; the graph's values, their order and the
lifetimes generate() gives them stay as they were.  None where nothing applies (generate
then replays the graph as recorded).
"""
from __future__ import annotations

import numpy as np

from .. import cpu as _cpu  # the package: its relu kernel (_relu_into_input's)
from . import loss as _loss

# kernels whose result is a new array nobody else holds (the backend contract: all but the
# movement ops; named here, so that an op that may return its input never qualifies)
_FRESH = frozenset({"linear", "conv2d", "matmul"})


def compile_graph(graph):
    from ember.graph.ir import Graph, Node, Value
    from ember.graph.replay import generate, lifetimes, needed
    nodes = needed(graph)
    _, keep_to_end = lifetimes(graph, nodes)
    readers: dict = {}
    for n in nodes:
        for a in n.args:
            if isinstance(a, Value):
                readers[id(a)] = readers.get(id(a), 0) + 1
    fns = {}
    for k, n in enumerate(nodes):
        if n.kind != "kernel":
            continue
        fn = getattr(n.fn, "__wrapped__", n.fn)      # (the table's kernels are wrapped)
        if n.name == "relu" and fn is _cpu._relu and \
                _in_place_relu(n, readers, keep_to_end, _FRESH):
            fns[k] = _relu_into_input
        elif n.name == "relu_backward" and fn is _cpu._relu_backward and \
                _in_place_relu(n, readers, keep_to_end, _FRESH):
            fns[k] = _relu_backward_into_grad
        elif n.name == "cross_entropy" and fn is _loss.cross_entropy:
            j = _backward_of(nodes, k)
            if j is not None:
                pair = _CrossEntropyPair()
                fns[k], fns[j] = pair.forward, pair.backward
                seed = _seed_of(nodes, j, readers, keep_to_end)
                if seed is not None:
                    fns[seed] = _Once(nodes[seed].fn, nodes[seed].attrs)
    if not fns:
        return None
    out = [Node(n.kind, n.name, n.args, n.attrs, n.out, op=n.op, fn=fns[k], device=n.device,
                inplace=n.inplace, meta=n.meta) if k in fns else n
           for k, n in enumerate(nodes)]
    return generate(Graph(inputs=graph.inputs, nodes=out, outputs=graph.outputs,
                          grads=graph.grads, guards=graph.guards, names=graph.names,
                          options=graph.options))


def _in_place_relu(node, readers, keep_to_end, fresh) -> bool:
    """relu(x) may write into x, relu_backward(g, out) into g: x (g) is a fresh result of
    a kernel in `fresh`, the node is its only reader, it is not a result of the graph, and
    the node's output has its shape and dtype."""
    from ember.graph.ir import Value
    if len(node.args) != (1 if node.name == "relu" else 2) or node.attrs or node.out is None:
        return False
    if node.name == "relu_backward" and (not isinstance(node.args[1], Value)
                                         or node.args[1].shape != node.out.shape
                                         or not node.out.shape):
        return False
    x = node.args[0]
    if not isinstance(x, Value) or x.producer is None or x.producer.kind != "kernel":
        return False
    return (x.producer.name in fresh and readers.get(id(x)) == 1 and id(x) not in keep_to_end
            and x.shape == node.out.shape and x.dtype is node.out.dtype
            and x.dtype.name in ("float32", "float64"))


def _relu_into_input(x):
    """The CPU's relu kernel (np.maximum(x, 0)) written into x."""
    return np.maximum(x, 0, out=x)


def _relu_backward_into_grad(g, out):
    """The CPU's relu_backward (g where out is not 0, else +0, by g's bits) written into g:
    g's bits times 1 or 0 are its bits or +0's, as the kernel's AND with a mask of all ones
    or zeros, in two passes and no new array."""
    bits = g.view(_cpu._INT_OF_SIZE[g.dtype.itemsize])
    np.multiply(bits, np.not_equal(out, 0).view(np.uint8), out=bits)
    return g


def _backward_of(nodes, k):
    """The index of the cross_entropy_backward over nodes[k]'s logits, targets, weights and
    attributes, with no effect (an in-place write, a check, a random draw) in between; None
    where there is none."""
    from ember.graph.ir import Value
    fwd = nodes[k]
    for j in range(k + 1, len(nodes)):
        n = nodes[j]
        if n.kind == "kernel" and getattr(n.fn, "__wrapped__", n.fn) is \
                _loss.cross_entropy_backward and \
                len(n.args) == len(fwd.args) + 1 and n.attrs == fwd.attrs and all(
                    (a is b) if isinstance(a, Value) else (
                        not isinstance(b, Value) and a.value is b.value)
                    for a, b in zip(n.args[1:], fwd.args)):
            return j
        if n.effect:
            return None
    return None


def _seed_of(nodes, j, readers, keep_to_end):
    """The index of the node that fills the gradient nodes[j] (a cross_entropy_backward)
    is handed, a `full` (the backward's seed, ones) that nothing else reads; None where
    there is none.  The gradient kernel only reads it: one array made once serves every
    replay."""
    from ember.graph.ir import Value
    g = nodes[j].args[0]
    if not isinstance(g, Value) or g.producer is None or readers.get(id(g)) != 1 or \
            id(g) in keep_to_end:
        return None
    for i, n in enumerate(nodes[:j]):
        if n is g.producer:
            return i if n.kind == "kernel" and n.name == "full" and not n.args else None
    return None


class _Once:
    """A creation kernel's array, made at the first call and handed out again after."""

    def __init__(self, fn, attrs):
        self.fn, self.attrs, self.array = fn, dict(attrs), None

    def __call__(self, **attrs):
        if self.array is None:
            self.array = self.fn(**self.attrs)
        return self.array


class _CrossEntropyPair:
    """A forward kernel that keeps what its backward needs and the backward that takes it.
    The backward checks that it is handed the very arrays the forward saw, and computes
    everything itself otherwise (a replay run from two threads at once)."""

    def __init__(self):
        self.saved = None
        self.rows = np.arange(0)      # np.arange(N) for the last N: an index, never written

    # NumPy's floating-point notes stay quiet, as the table's kernels keep them (its
    # wrapper runs a kernel again under errstate where a warning was raised as an error:
    # the backward, which writes into what the forward kept, could not run twice)

    def forward(self, x, target, weight=None, *, ignore_index, reduction):
        rows = self.rows
        if len(rows) != len(x):
            rows = self.rows = np.arange(len(x))
        with np.errstate(all="ignore"):
            loss, saved = _loss.cross_entropy_saving(x, target, weight,
                                                     ignore_index=ignore_index,
                                                     reduction=reduction, rows=rows)
        self.saved = (x, target, weight, saved)
        return loss

    def backward(self, g, x, target, weight=None, *, ignore_index, reduction):
        kept, self.saved = self.saved, None
        with np.errstate(all="ignore"):
            if kept is None or kept[0] is not x or kept[1] is not target or \
                    kept[2] is not weight:
                return _loss.cross_entropy_backward(g, x, target, weight,
                                                    ignore_index=ignore_index,
                                                    reduction=reduction)
            return _loss.cross_entropy_backward_saved(kept[3], g, reduction=reduction)
