"""Batching rules: how each declared primitive runs on arrays with one extra leading batch dim.

jax's `batching.primitive_batchers`, keyed by the op's declared name (core/ops/ declares the
primitive, its dtype, shape and VJP rules; this registry adds how it batches, so the op
files stay as they are).  A rule is

    rule(op, args, batched, attrs, size) -> Tensor

`args` are the op's inputs (Tensors, or the Python scalars its signature allows); where
`batched[i]` the tensor carries the batch as its dim 0 (of length `size`) in front of the
per-sample shape the op was traced with; `attrs` are the kernel's attributes for one sample.
The rule returns the batched result (batch at dim 0), computed with ember's own primitives
through the dispatcher, so autograd records it and every backend runs it.  A primitive
without a rule runs once per sample (`loop`), with one warning naming it.

`rules()` lists which primitive batches how (`ember ops --json` reads it as `batching`).
"""
from __future__ import annotations

import warnings

from .. import dispatch
from ..errors import EmberError, NotInEmberError
from ..ops._op import REGISTRY
from ..tensor import Tensor

RULES: dict = {}            # op name -> rule
KIND: dict = {}             # op name -> what the rule is ("elementwise", "axes+1", ...)
_warned: set = set()


class VmapFallbackWarning(UserWarning):
    """vmap ran a primitive once per sample: no batching rule is declared for it."""


class VmapError(EmberError, RuntimeError):
    """What vmap cannot do (an in-place write of batched values into an unbatched tensor,
    random ops under randomness='error', ...)."""


def register(kind: str, *names):
    def deco(fn):
        for n in names:
            if n not in REGISTRY:
                raise ValueError(f"batching rule for {n!r}: no op of that name is declared")
            RULES[n] = fn
            KIND[n] = kind
        return fn
    return deco


def rules() -> dict:
    """op name -> the kind of batching rule it has, or "loop" (runs once per sample)."""
    return {n: KIND.get(n, "loop") for n in sorted(REGISTRY)}


# --- helpers over batched tensors -----------------------------------------------------------

def _run(name, *args, **attrs):
    return dispatch.run(REGISTRY[name], *args, **attrs)


def rank(t, b) -> int:
    """The per-sample rank of an input."""
    if type(t) is not Tensor:
        return 0
    return t.ndim - 1 if b else t.ndim


def reshape(t, shape):
    shape = tuple(int(s) for s in shape)
    if tuple(t.shape) == shape:
        return t
    return _run("reshape", t, shape=shape)


def pad_rank(t, r):
    """A batched t (size, *s) as (size, 1, ..., 1, *s) of per-sample rank r."""
    have = t.ndim - 1
    if have >= r:
        return t
    return reshape(t, (t.shape[0],) + (1,) * (r - have) + tuple(t.shape[1:]))


def materialize(t, b, size):
    """t with the batch dim: an unbatched tensor broadcast to (size, *shape) (a view)."""
    if b or type(t) is not Tensor:
        return t
    return _run("expand", reshape(t, (1,) + tuple(t.shape)), shape=(size,) + tuple(t.shape))


def _axis(a, r):
    return (a % r if r else 0) + 1


def select(t, k):
    """Sample k of a batched tensor (its dim 0 dropped)."""
    index = (slice(k, k + 1, 1),) + tuple(slice(0, s, 1) for s in t.shape[1:])
    return reshape(_run("slice", t, index=index), tuple(t.shape[1:]))


def stack(outs, what="the function"):
    shapes = {tuple(o.shape) for o in outs}
    if len(shapes) > 1:
        raise VmapError(f"vmap: {what} gives outputs of different shapes for different "
                        f"samples ({sorted(shapes)[:3]}...): a data-dependent shape cannot be "
                        "batched (torch.func refuses it too); run a Python loop, or pad to one "
                        "shape")
    return _run("concatenate", *[reshape(o, (1,) + tuple(o.shape)) for o in outs], axis=0)


def loop(op, args, batched, attrs, size):
    """The fallback: run op once per sample and stack (one warning per op)."""
    if op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(f"vmap: op {op.name!r} has no batching rule; it runs once per sample "
                      f"(a Python loop over the batch of {size}). Declare one in "
                      "ember/func/batching.py to batch it", VmapFallbackWarning, stacklevel=4)
    outs = []
    for k in range(size):
        ins = [select(a, k) if b else a for a, b in zip(args, batched)]
        out = dispatch.run(op, *ins, **attrs)
        if out is None:
            raise VmapError(f"vmap: in-place op {op.name!r} has no batching rule")
        outs.append(out)
    return stack(outs, f"op {op.name!r}")


def apply(op, args, batched, attrs, size):
    rule = RULES.get(op.name)
    if rule is None:
        return loop(op, args, batched, attrs, size)
    return rule(op, args, batched, attrs, size)


# --- elementwise ---------------------------------------------------------------------------

def _elementwise_names():
    return [n for n, o in REGISTRY.items() if o.kind in ("unary", "binary", "ternary")]


@register("elementwise", *_elementwise_names(), "atan2", "lgamma", "digamma", "erfinv", "erfcx",
          "log_ndtr", "relu", "clamp", "zeta", "igamma", "igammac", "nextafter",
          "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
          "bitwise_right_shift")
def _broadcast(op, args, batched, attrs, size):
    # batched inputs get the common per-sample rank after their batch dim; unbatched ones
    # broadcast from the right as they did per sample
    r = max(rank(a, b) for a, b in zip(args, batched))
    args = [pad_rank(a, r) if b else a for a, b in zip(args, batched)]
    return dispatch.run(op, *args, **attrs)


@register("elementwise (same shapes)", "relu_backward", "sigmoid_backward", "tanh_backward")
def _same_shape(op, args, batched, attrs, size):
    r = max(rank(a, b) for a, b in zip(args, batched))
    args = [materialize(pad_rank(a, r) if b else a, b, size) for a, b in zip(args, batched)]
    return dispatch.run(op, *args, **attrs)


# --- reductions and scans ------------------------------------------------------------------

@register("axes+1", "sum", "prod", "max", "min", "any", "all", "l2_norm", "var")
def _reduce(op, args, batched, attrs, size):
    (x,) = args
    r = x.ndim - 1
    if r == 0:              # a 0-d sample: reduce a size-1 dim instead of none
        x = reshape(x, (size, 1))
        return dispatch.run(op, x, **{**attrs, "axes": (1,), "keepdims": False})
    axes = tuple(sorted(_axis(a, r) for a in attrs["axes"]))
    return dispatch.run(op, x, **{**attrs, "axes": axes})


@register("axis+1", "argmax", "argmin")
def _arg_reduce(op, args, batched, attrs, size):
    (x,) = args
    r = x.ndim - 1
    if attrs["axis"] is None:
        out = dispatch.run(op, reshape(x, (size, max(1, x.numel() // max(size, 1)))),
                           axis=1, keepdims=False)
        return reshape(out, (size,) + ((1,) * r if attrs["keepdims"] else ()))
    return dispatch.run(op, x, **{**attrs, "axis": _axis(attrs["axis"], r)})


@register("axis+1", "cumsum", "cumprod", "softmax", "log_softmax", "argsort", "flip", "topk")
def _axis_shift(op, args, batched, attrs, size):
    (x,) = args
    r = x.ndim - 1
    new = dict(attrs)
    if r == 0:              # a 0-d sample: run on (size, 1) along dim 1, then drop it
        new.update({"axis": 1} if "axis" in new else {"axes": (1,)})
        return reshape(dispatch.run(op, reshape(x, (size, 1)), **new), (size,))
    if "axis" in new:
        new["axis"] = _axis(new["axis"], r)
    if "axes" in new:
        new["axes"] = tuple(_axis(a, r) for a in new["axes"])
    return dispatch.run(op, x, **new)


# --- movement -------------------------------------------------------------------------------

@register("shape with the batch", "reshape")
def _reshape(op, args, batched, attrs, size):
    return dispatch.run(op, args[0], shape=(size,) + tuple(attrs["shape"]))


@register("shape with the batch", "expand")
def _expand(op, args, batched, attrs, size):
    shape = tuple(attrs["shape"])
    return dispatch.run(op, pad_rank(args[0], len(shape)), shape=(size,) + shape)


@register("dims+1", "permute")
def _permute(op, args, batched, attrs, size):
    r = args[0].ndim - 1
    return dispatch.run(op, args[0], dims=(0,) + tuple(_axis(d, r) for d in attrs["dims"]))


@register("index with the batch", "slice")
def _slice(op, args, batched, attrs, size):
    return dispatch.run(op, args[0], index=(slice(0, size, 1),) + tuple(attrs["index"]))


@register("index with the batch", "slice_scatter")
def _slice_scatter(op, args, batched, attrs, size):
    base, src = args
    base = _run("contiguous", materialize(base, batched[0], size))
    if batched[1]:
        src = pad_rank(src, base.ndim - 1)
    return dispatch.run(op, base, src, index=(slice(0, size, 1),) + tuple(attrs["index"]))


@register("pads with the batch", "pad")
def _pad(op, args, batched, attrs, size):
    return dispatch.run(op, args[0], **{**attrs, "pads": ((0, 0),) + tuple(attrs["pads"])})


@register("axis+1", "concatenate")
def _concatenate(op, args, batched, attrs, size):
    r = rank(args[0], batched[0])
    args = [materialize(a, b, size) for a, b in zip(args, batched)]
    return dispatch.run(op, *args, axis=_axis(attrs["axis"], r))


@register("identity", "contiguous", "inv", "det", "logabsdet", "cholesky", "eigh",
          "eigvalsh", "svdvals", "svd_u", "svd_vh", "qr_q", "qr_r", "pinv", "lu_factor",
          "lu_permutation", "eig", "eigvals", "matrix_exp",
          "geqrf", "geqrf_tau", "ldl_factor",
          "ldl_solve")
def _same(op, args, batched, attrs, size):
    # the op already maps over leading dims: the batch is one more of them
    return dispatch.run(op, *args, **attrs)


@register("dims+1", "fft_c2c", "fft_r2c", "fft_c2r")
def _fft(op, args, batched, attrs, size):
    # the transform maps over the dims it does not name: the batch is one more of them
    r = args[0].ndim - 1
    return dispatch.run(op, args[0], **{**attrs, "dims": tuple(_axis(d, r) for d in
                                                               attrs["dims"])})


# --- indexing -------------------------------------------------------------------------------

@register("axis+1", "gather", "scatter_add")
def _gather(op, args, batched, attrs, size):
    r = rank(args[0], batched[0])
    args = [materialize(a, b, size) for a, b in zip(args, batched)]
    return dispatch.run(op, *args, axis=_axis(attrs["axis"], r))


def _index_along(index, axis, shape):
    """A batched 1-D index (size, n) as a gather/scatter index of `shape` (batch first):
    n along dim axis+1, broadcast over the others."""
    n = index.shape[1]
    r = len(shape) - 1
    view = (index.shape[0],) + tuple(n if d == axis else 1 for d in range(r))
    full = (index.shape[0],) + tuple(n if d == axis else shape[d + 1] for d in range(r))
    return _run("expand", reshape(index, view), shape=full)


@register("axis+1 (a batched index: gather/scatter_add)", "take", "index_add")
def _take(op, args, batched, attrs, size):
    if batched[1]:                 # a per-sample index: take is a gather, index_add a
        x = materialize(args[0], batched[0], size)       # scatter_add, along axis+1
        axis = attrs["axis"] % max(x.ndim - 1, 1)
        if op.name == "take":
            return _run("gather", x, _index_along(args[1], axis, x.shape), axis=axis + 1)
        src = materialize(args[2], batched[2], size)
        return _run("scatter_add", x, _index_along(args[1], axis, src.shape), src,
                    axis=axis + 1)
    r = rank(args[0], batched[0])
    args = [materialize(a, b, size) if k != 1 else a
            for k, (a, b) in enumerate(zip(args, batched))]
    return dispatch.run(op, *args, axis=_axis(attrs["axis"], r))


# --- products -------------------------------------------------------------------------------

def batched_matmul(a, ba, b, bb, size):
    """matmul of per-sample a and b, either or both carrying the batch at dim 0."""
    ra, rb = rank(a, ba), rank(b, bb)
    if ra == 1 and rb == 1:
        out = batched_matmul(reshape(a, tuple(a.shape[:-1]) + (1, a.shape[-1])), ba,
                             reshape(b, tuple(b.shape) + (1,)), bb, size)
        return reshape(out, (size,))
    if ra == 1:         # (k) @ (..., k, n): as (1, k), then drop that dim
        out = batched_matmul(reshape(a, tuple(a.shape[:-1]) + (1, a.shape[-1])), ba,
                             b, bb, size)
        return reshape(out, tuple(out.shape[:-2]) + (out.shape[-1],))
    if rb == 1:         # (..., m, k) @ (k): as (k, 1)
        out = batched_matmul(a, ba, reshape(b, tuple(b.shape) + (1,)), bb, size)
        return reshape(out, tuple(out.shape[:-1]))
    r = max(ra, rb)
    if ba:
        a = pad_rank(a, r)
    if bb:
        b = pad_rank(b, r)
    if a.shape[-1] == 1 and b.shape[-2] == 1 and a._dtype is b._dtype:
        # k = 1: an outer product per sample (a per-sample weight gradient g^T x of one
        # row): the broadcast multiply writes it at memory speed, where a stack of gemms
        # with k = 1 runs several times slower (NumPy: 4x for 64 x (128, 1) @ (1, 9216))
        return _run("mul", a, b)
    return _run("matmul", a, b)


@register("rows: batch joins N", "lstm_cell", "lstm_cell_backward", "gru_cell",
          "gru_cell_backward")
def _cell_rows(op, args, batched, attrs, size):
    # (N, k) per sample: the batch joins the rows, (size * N, k), and splits off again
    args = [contiguous_rows(materialize(a, b, size)) for a, b in zip(args, batched)]
    n = args[0].shape[1]
    out = dispatch.run(op, *[reshape(a, (size * n, a.shape[2])) for a in args], **attrs)
    return reshape(out, (size, n, out.shape[1]))


def _class_weights(target, weight, dtype, ignore_index):
    """Each row's weight in cross_entropy: 0 where the target is ignore_index, else the
    weight of its class (1 without a weight)."""
    keep = _run("ne", target, ignore_index)
    w = _run("cast", keep, dtype=dtype)
    if weight is None:
        return w
    safe = _run("where", keep, target, 0)
    return _run("mul", w, _run("take", weight, safe, axis=0))


@register("rows: batch joins N", "cross_entropy", "cross_entropy_backward")
def _cross_entropy_rows(op, args, batched, attrs, size):
    # the samples' (N, C) logits join as (size * N, C) rows under reduction 'none'; 'sum'
    # and 'mean' reduce each sample's rows after (forward) or hand each row its share of
    # g (gradient); a per-sample class weight runs once per sample
    backward = op.name == "cross_entropy_backward"
    weight = args[backward + 2] if len(args) > backward + 2 else None
    if weight is not None and batched[backward + 2]:
        return loop(op, args, batched, attrs, size)
    x, target = (contiguous_rows(materialize(a, b, size))
                 for a, b in zip(args[backward:backward + 2], batched[backward:backward + 2]))
    n, c = x.shape[1], x.shape[2]
    rows_x, rows_t = reshape(x, (size * n, c)), reshape(target, (size * n,))
    reduction = attrs["reduction"]
    none = dict(attrs, reduction="none")
    if not backward:
        out = reshape(dispatch.run(op, rows_x, rows_t, weight, **none), (size, n))
        if reduction == "none":
            return out
        total = _run("sum", out, axes=(1,), keepdims=False)
        if reduction == "sum":
            return total
        w = reshape(_class_weights(rows_t, weight, x._dtype, attrs["ignore_index"]), (size, n))
        return _run("div", total, _run("sum", w, axes=(1,), keepdims=False))
    g = materialize(args[0], batched[0], size)
    if reduction != "none":                 # one g per sample: each of its rows' share
        if reduction == "mean":
            w = reshape(_class_weights(rows_t, weight, x._dtype, attrs["ignore_index"]),
                        (size, n))
            g = _run("div", g, _run("sum", w, axes=(1,), keepdims=False))
        g = _run("expand", reshape(g, (size, 1)), shape=(size, n))
    out = dispatch.run(op, reshape(contiguous_rows(g), (size * n,)), rows_x, rows_t, weight,
                       **none)
    return reshape(out, (size, n, c))


def _steps_rows(t, steps, size, inner):
    """(size, steps * rows, k) per sample <-> (steps * size * rows, k): each step's rows of
    every sample together (inner=True), or back (inner=False)."""
    if inner:
        _, total, k = t.shape
        rows = total // steps
        t = reshape(t, (size, steps, rows, k))
        t = _run("contiguous", _run("permute", t, dims=(1, 0, 2, 3)))
        return reshape(t, (steps * size * rows, k))
    total, k = t.shape
    rows = total // (steps * size)
    t = reshape(t, (steps, size, rows, k))
    t = _run("contiguous", _run("permute", t, dims=(1, 0, 2, 3)))
    return reshape(t, (size, steps * rows, k))


@register("rows: batch joins B in every step", "lstm_sequence", "gru_sequence")
def _sequence_rows(op, args, batched, attrs, size):
    # the recurrent weights (and b_hh) shared by the samples: the samples join each step's
    # rows (one kernel call); batched weights run once per sample
    weights = 3 if op.name == "lstm_sequence" else 2
    if any(batched[weights:]):
        return loop(op, args, batched, attrs, size)
    steps = attrs["steps"]
    gi = _steps_rows(materialize(args[0], batched[0], size), steps, size, True)
    states = [contiguous_rows(materialize(a, b, size)) for a, b in
              zip(args[1:weights], batched[1:weights])]
    states = [reshape(a, (size * a.shape[1], a.shape[2])) for a in states]
    out = dispatch.run(op, gi, *states, *args[weights:], **attrs)
    return _steps_rows(out, steps, size, False)


@register("once per sample: the weight gradient is per sample", "lstm_sequence_backward",
          "gru_sequence_backward")
def _sequence_backward(op, args, batched, attrs, size):
    # the kernel sums d W_hh over its rows: joined samples would sum it over the batch too,
    # so each sample runs its own kernel call (one per sample, not one per step)
    outs = []
    for k in range(size):
        ins = [select(a, k) if b else a for a, b in zip(args, batched)]
        outs.append(dispatch.run(op, *ins, **attrs))
    return stack(outs, f"op {op.name!r}")


def contiguous_rows(t):
    """An expanded (broadcast) tensor as its own memory: rows that alias cannot be joined."""
    return _run("contiguous", t) if 0 in t.stride() else t


@register("matmul", "matmul")
def _matmul(op, args, batched, attrs, size):
    return batched_matmul(args[0], batched[0], args[1], batched[1], size)


@register("linear", "linear")
def _linear(op, args, batched, attrs, size):
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    if not any(batched[1:]):
        return dispatch.run(op, *args, **attrs)       # x (size, ..., in): one linear
    wt = _run("permute", w, dims=(0, 2, 1) if batched[1] else (1, 0))
    out = batched_matmul(x, batched[0], wt, batched[1], size)
    if bias is not None and type(bias) is Tensor:
        if batched[2]:
            bias = pad_rank(bias, out.ndim - 1)
        out = _run("add", out, bias)
    return out


@register("identity, unbatched inputs expanded", "lu_solve")
def _alike(op, args, batched, attrs, size):
    # the inputs' batch dims are alike (linalg.lu_solve expands them): an unbatched one
    # takes the vmap dim too
    return dispatch.run(op, *(materialize(a, b, size) for a, b in zip(args, batched)),
                        **attrs)


@register("solve", "solve")
def _solve(op, args, batched, attrs, size):
    a, b = args
    if rank(a, batched[0]) != rank(b, batched[1]):
        return loop(op, args, batched, attrs, size)
    return dispatch.run(op, materialize(a, batched[0], size), materialize(b, batched[1], size))


# --- nn: the batch joins N ------------------------------------------------------------------

@register("batch joins N", "unfold", "fold", "max_pool2d", "max_pool2d_backward")
def _merge_n(op, args, batched, attrs, size):
    args = [materialize(a, b, size) for a, b in zip(args, batched)]
    args = [reshape(a, (a.shape[0] * a.shape[1],) + tuple(a.shape[2:])) for a in args]
    out = dispatch.run(op, *args, **attrs)
    return reshape(out, (size, out.shape[0] // size) + tuple(out.shape[1:]))


def _as_groups(t, size):
    """A batched (size, N, C, H, W) as (N, size*C, H, W): the samples side by side as
    channel groups."""
    t = _run("permute", t, dims=(1, 0, 2, 3, 4))
    return reshape(t, (t.shape[0], size * t.shape[2]) + tuple(t.shape[3:]))


def _from_groups(t, size):
    """(N, size*O, H, W) back to the batched (size, N, O, H, W)."""
    t = reshape(t, (t.shape[0], size, t.shape[1] // size) + tuple(t.shape[2:]))
    return _run("permute", t, dims=(1, 0, 2, 3, 4))


@register("batch joins N; a batched weight (or the weight gradient): the samples as groups",
          "conv2d", "conv2d_input_grad", "conv2d_weight_grad")
def _conv2d(op, args, batched, attrs, size):
    a, b = args[:2]             # (x, weight[, bias]), (g, weight) or (g, x)
    bias = list(args[2:3])
    if op.name != "conv2d_weight_grad" and not batched[1] and not any(batched[2:3]):
        a = reshape(a, (size * a.shape[1],) + tuple(a.shape[2:]))
        out = dispatch.run(op, a, b, *bias, **attrs)
        return reshape(out, (size, out.shape[0] // size) + tuple(out.shape[1:]))
    # per-sample weights, or each sample's own weight gradient (not summed over samples):
    # one grouped convolution, groups * size groups
    grouped = {**attrs, "groups": attrs["groups"] * size}
    a = _as_groups(materialize(a, batched[0], size), size)
    b = materialize(b, batched[1], size)
    if op.name == "conv2d_weight_grad":
        out = dispatch.run(op, a, _as_groups(b, size), **grouped)       # (size*O, C/G, kh, kw)
        return reshape(out, (size, out.shape[0] // size) + tuple(out.shape[1:]))
    b = reshape(b, (size * b.shape[1],) + tuple(b.shape[2:]))
    bias = [reshape(materialize(t, batched[2], size), (size * t.shape[-1],)) for t in bias]
    return _from_groups(dispatch.run(op, a, b, *bias, **grouped), size)


# --- in place --------------------------------------------------------------------------------

@register("in place (batched target)", "add_", "sub_", "mul_", "div_", "assign")
def _inplace(op, args, batched, attrs, size):
    target, other = args
    if not batched[0]:
        raise VmapError(
            f"vmap: {op.name} writes batched values into a tensor that is not batched (a "
            "module buffer or a captured tensor); as torch.func, vmap cannot do that in "
            "place: write it out of place, or batch that tensor too (in_dims)")
    if batched[1]:
        other = pad_rank(other, target.ndim - 1)
    if op.name == "assign":
        dispatch.run(op, target, other)
    elif not dispatch.inplace(op, target, other):
        raise NotInEmberError(f"vmap: the device has no {op.name} kernel to write in place")
    return target
