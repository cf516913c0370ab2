"""vmap: trace one sample into a graph of primitives, then run that graph on the whole batch.

As jax's vmap: the function runs once, on the first sample, while the dispatcher records
every kernel it calls (graph/capture.py, the recorder ember.compile uses); each recorded
primitive then runs once on the batched arrays through its batching rule (batching.py),
or once per sample where it has none.  What the function does besides kernels (shapes read
from the sample, Python numbers) is the same for every sample; where it reads values to
Python (`.item()`, `if x > 0:`), the graph is not the whole computation: vmap then calls
the function once per sample and warns (torch.func raises there).

Everything batched runs through the dispatcher, so autograd records it: grad(vmap(f))
differentiates the batched program, and vmap(grad(f)) batches the forward and backward
kernels grad ran for one sample.  A vmap inside a vmap (or inside ember.compile) traces its
sample in a capture of its own; the batched kernels it then runs are what the outer
capture records.
"""
from __future__ import annotations

import functools
import warnings

from .. import dispatch
from ..errors import EmberTypeError, EmberValueError
from ..graph.capture import capture as _capture_graph
from ..graph.ir import Const, Value, flatten
from ..ops._op import REGISTRY
from ..tensor import Tensor, wrap
from . import batching as B

_RANDOMNESS = ("error", "different", "same")


class VmapLoopWarning(UserWarning):
    """vmap ran the whole function once per sample (its graph depends on the data)."""


# --- pytrees ------------------------------------------------------------------------------

def _map(fn, tree, *rest):
    if isinstance(tree, (tuple, list)):
        out = [_map(fn, t, *[r[i] for r in rest]) for i, t in enumerate(tree)]
        return type(tree)(out) if isinstance(tree, list) else tuple(out)
    if isinstance(tree, dict):
        return {k: _map(fn, v, *[r[k] for r in rest]) for k, v in tree.items()}
    return fn(tree, *rest)


def _broadcast_dims(dims, tree, what):
    """in_dims/out_dims as a tree with the structure of `tree` (an int or None spreads)."""
    if dims is None or isinstance(dims, int):
        return _map(lambda _: dims, tree)
    if isinstance(tree, (tuple, list)) and isinstance(dims, (tuple, list)):
        if len(dims) != len(tree):
            raise EmberValueError(f"vmap: {what} has {len(dims)} entries for {len(tree)} "
                                  f"values; give one per value (or one int for all)")
        return tuple(_broadcast_dims(d, t, what) for d, t in zip(dims, tree))
    if isinstance(tree, dict) and isinstance(dims, dict):
        return {k: _broadcast_dims(dims[k], v, what) for k, v in tree.items()}
    raise EmberValueError(f"vmap: {what} {dims!r} does not match the structure of the "
                          f"values ({type(tree).__name__})")


def _movedim(t, src, dst):
    n = t.ndim
    src, dst = src % n, dst % n
    if src == dst:
        return t
    order = [d for d in range(n) if d != src]
    order.insert(dst, src)
    return dispatch.run(REGISTRY["permute"], t, dims=tuple(order))


# --- the transform ----------------------------------------------------------------------------

def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """torch.func.vmap: func mapped over a dim of its inputs, as one batched program."""
    if randomness not in _RANDOMNESS:
        raise EmberValueError(f"vmap: randomness must be one of {', '.join(_RANDOMNESS)}, "
                              f"got {randomness!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise EmberValueError(f"vmap: chunk_size must be a positive int or None, got "
                              f"{chunk_size!r}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        dims = _broadcast_dims(in_dims if isinstance(in_dims, tuple) or in_dims is None
                               or isinstance(in_dims, int) else tuple(in_dims), args,
                               "in_dims")
        flat_args, flat_dims = flatten(list(args)), flatten(list(dims)) if dims else []
        if isinstance(dims, (int, type(None))):
            flat_dims = [dims] * len(flat_args)
        sizes = set()
        moved = []
        for k, (a, d) in enumerate(zip(flat_args, flat_dims)):
            if d is None:
                moved.append(None)
                continue
            if type(a) is not Tensor:
                raise EmberTypeError(f"vmap: in_dims gives dim {d} for input {k}, a "
                                     f"{type(a).__name__}; only tensors are mapped over "
                                     "(give None for it)")
            if not -a.ndim <= d < a.ndim:
                raise EmberValueError(f"vmap: in_dims gives dim {d} for input {k} of shape "
                                      f"{tuple(a.shape)}: out of range")
            sizes.add(a.shape[d])
            moved.append(_movedim(a, d, 0))
        if not sizes:
            raise EmberValueError("vmap: no input is mapped over (every in_dims entry is "
                                  "None, or no tensor inputs)")
        if len(sizes) > 1:
            raise EmberValueError(f"vmap: the mapped dims have different sizes {sorted(sizes)}"
                                  "; every mapped input needs the same batch size")
        size = sizes.pop()
        if size == 0:
            raise EmberValueError("vmap: the mapped dim has size 0; vmap needs at least one "
                                  "sample to trace the function with")
        step = chunk_size or size
        chunks = []
        for lo in range(0, size, step):
            hi = min(size, lo + step)
            part = [None if m is None else
                    (m if (lo, hi) == (0, size) else _slice0(m, lo, hi)) for m in moved]
            chunks.append(_batched_call(func, args, kwargs, flat_args, part, hi - lo,
                                        randomness))
        outs = chunks[0] if len(chunks) == 1 else _map(
            lambda *xs: dispatch.run(REGISTRY["concatenate"], *xs, axis=0), *chunks)
        odims = _broadcast_dims(out_dims, outs, "out_dims")
        return _map(lambda t, d: _movedim(t, 0, d) if type(t) is Tensor and d is not None
                    and d != 0 else t, outs, odims)
    return wrapped


def _slice0(t, lo, hi):
    index = (slice(lo, hi, 1),) + tuple(slice(0, s, 1) for s in t.shape[1:])
    return dispatch.run(REGISTRY["slice"], t, index=index)


def _sample(t):
    s = B.select(t, 0).detach()
    if t.requires_grad and s.is_floating_point():
        s.requires_grad_(True)
    return s


def _rebuild(args, flat_new):
    it = iter(flat_new)
    return _map(lambda _: next(it), list(args))


def _batched_call(func, args, kwargs, flat_args, batched, size, randomness):
    samples = [a if m is None else _sample(m) for a, m in zip(flat_args, batched)]
    sample_args = _rebuild(args, samples)
    trace = _capture_graph(func, tuple(sample_args), kwargs, autograd_outputs=True,
                             nested=True)
    reason = None
    if trace.breaks:
        reason = f"it reads a value to Python ({trace.breaks[0][0]} at {trace.breaks[0][1]})"
    elif trace.unsupported:
        reason = trace.unsupported[0]
    if reason is not None:
        return _per_sample(func, args, kwargs, flat_args, batched, size, reason)
    return _interpret(trace.graph, flat_args, batched, size, randomness)


def _per_sample(func, args, kwargs, flat_args, batched, size, reason):
    warnings.warn(f"vmap: {getattr(func, '__name__', 'the function')} runs once per sample: "
                  f"its graph of primitives is not the whole computation because {reason}",
                  VmapLoopWarning, stacklevel=4)
    outs = []
    for k in range(size):
        call = [a if m is None else B.select(m, k) for a, m in zip(flat_args, batched)]
        outs.append(func(*_rebuild(args, call), **kwargs))
    return _map(lambda *xs: B.stack(list(xs)) if type(xs[0]) is Tensor else xs[0], *outs)


def _interpret(graph, flat_args, batched, size, randomness):
    env: dict = {}          # id(Value) -> (tensor or scalar, batched?)
    inputs = {id(inp.value) for inp in graph.inputs}
    for inp in graph.inputs:
        if inp.kind == "arg" and inp.index < len(batched) and batched[inp.index] is not None:
            env[id(inp.value)] = (batched[inp.index], True)
        elif inp.kind == "grad":          # a .grad read: the tensor holds its owner
            env[id(inp.value)] = (inp.tensor._get_meta("grad"), False)
        else:
            env[id(inp.value)] = (inp.tensor, False)

    def read(a):
        if isinstance(a, Const):
            return a.value, False
        return env[id(a)]

    for node in graph.nodes:
        if node.kind == "kernel":
            ins = [read(a) for a in node.args]
            args = [v for v, _ in ins]
            flags = [b for _, b in ins]
            if not args or not any(type(a) is Tensor for a in args):    # creation
                out = dispatch.create(node.op, node.device, node.out.dtype, node.attrs)
                b = False
            elif not any(flags):
                if node.inplace and isinstance(node.args[0], Value) and \
                        id(node.args[0]) in inputs:
                    continue    # a write into a tensor from outside, of values that are
                    # the same for every sample: the sample's trace has made it already
                out = dispatch.run(node.op, *args, **node.attrs)
                b = False
            else:
                out = B.apply(node.op, args, flags, node.attrs, size)
                b = True
            if node.out is not None:
                env[id(node.out)] = (out, b)
        elif node.kind == "host":
            random = node.meta.get("random")
            if random and randomness == "error":
                raise B.VmapError(
                    f"vmap: the function draws random numbers ({node.name}) and randomness="
                    "'error'; pass randomness='different' (a draw per sample) or 'same' "
                    "(one draw for the batch)")
            if random and randomness == "different":
                draws = [_wrap(node.fn(), node.out) for _ in range(size)]
                env[id(node.out)] = (B.stack(draws), True)
            else:
                env[id(node.out)] = (_wrap(node.fn(), node.out), False)
        elif node.kind == "transfer":
            t, b = read(node.args[0])
            env[id(node.out)] = (t.to(node.device), b)
        elif node.kind == "check":
            ts = [read(a)[0] for a in node.args]
            node.fn(*[t._data if type(t) is Tensor else t for t in ts])
        else:
            raise B.VmapError(f"vmap: cannot batch a graph node of kind {node.kind!r} "
                              f"({node.name})")

    def out(v):
        if isinstance(v, Const):
            return v.value
        t, b = env[id(v)]
        return t if b else B.materialize(t, False, size)
    return _map(out, graph.outputs)


def _wrap(native, value: Value):
    return wrap(native, value.device, value.dtype)
