"""torch.func: function transforms that compose (vmap, grad, vjp, jvp, jacrev, jacfwd, hessian,
functional_call, stack_module_state).

Reverse mode is the autograd engine: grad/vjp/jacrev record the function with fresh leaves
and differentiate with create_graph=True, so every result differentiates again and nests.
vmap traces one sample into ember's primitives and runs them batched (vmap.py,
batching.py).  Forward mode (jvp, jacfwd) is derived by transposition: the double-vjp
trick, J v = d/du (v . (u^T J))... = the VJP of the VJP, so it needs no JVP rule per
primitive and costs about two reverse passes; jacfwd batches it over the basis with vmap.
ember.autograd.forward_ad (dual tensors) derives each op's JVP the same way, from the same
declared VJPs, as the op runs; jvp transposes the whole function at once, which composes
with vmap and ember.compile as plain reverse mode does.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from .. import ops
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..errors import EmberTypeError, EmberValueError
from ..tensor import Tensor
from .batching import VmapError, VmapFallbackWarning
from .batching import rules as batching_rules
from .vmap import VmapLoopWarning, vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "jacobian",
           "hessian", "vmap", "functional_call", "stack_module_state", "batching_rules",
           "VmapError", "VmapFallbackWarning", "VmapLoopWarning"]


# --- pytrees of tensors -----------------------------------------------------------------------

def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves(t)]
    return [tree]


def _unflatten(tree, it):
    if isinstance(tree, (tuple, list)):
        out = [_unflatten(t, it) for t in tree]
        return out if isinstance(tree, list) else tuple(out)
    if isinstance(tree, dict):
        return {k: _unflatten(v, it) for k, v in tree.items()}
    return next(it)


def _fresh(x, fn):
    if type(x) is not Tensor:
        raise EmberTypeError(f"func.{fn}: expected Tensors (or tuples, lists, dicts of them) "
                             f"as the differentiated inputs, got {type(x).__name__}")
    # a fresh leaf that stays connected to x's graph, so the transforms nest
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _argnums(argnums, n, fn):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or any(not isinstance(i, int) for i in nums):
        raise EmberTypeError(f"func.{fn}: argnums must be an int or a non-empty tuple of "
                             f"ints, got {argnums!r}")
    nums = tuple(i % n if -n <= i < n else i for i in nums)
    for i in nums:
        if not 0 <= i < n:
            raise EmberValueError(f"func.{fn}: argnums {argnums!r} is out of range for a "
                                  f"function called with {n} positional arguments")
    return nums, single


class _Level(threading.local):
    depth = 0           # how many transforms (grad, vjp, jvp, jacrev, jacfwd) are running


_level = _Level()


@contextmanager
def _transform():
    _level.depth += 1
    try:
        yield
    finally:
        _level.depth -= 1


def _outer_results(value, inputs):
    """As torch.func: the outermost transform's results carry no autograd history unless
    an input it was given required grad (then they stay connected, so grad(...) can be
    differentiated by ember.autograd from outside)."""
    if _level.depth or any(type(x) is Tensor and x.requires_grad for x in _leaves(inputs)):
        return value
    return _map_tensors(lambda t: t.detach(), value)


def _grads(outs, xs, vs):
    return _grad(outs, xs, vs, retain_graph=True, create_graph=True, allow_unused=True,
                 materialize_grads=True)


# --- reverse mode -------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux: bool = False):
    """torch.func.grad_and_value: (d func / d args[argnums], func(*args)) for a scalar func;
    an argument may be a tuple/list/dict of tensors (the gradient has its structure)."""
    def wrapper(*args, **kwargs):
        nums, single = _argnums(argnums, len(args), "grad")
        given = list(args)
        # the gradient needs a graph of its own only where something differentiates it
        # again: an enclosing transform, or an input that requires grad (its result stays
        # connected, see _outer_results); else the backward pass runs without one, with the
        # backends' fused gradient kernels (a vmap of it batches those: max_pool2d's
        # backward as one kernel, not its decomposition)
        keep = bool(_level.depth) or any(type(x) is Tensor and x.requires_grad
                                         for x in _leaves(given))
        with enable_grad(), _transform():
            args = list(args)
            for i in nums:
                args[i] = _unflatten(args[i], iter([_fresh(x, "grad")
                                                    for x in _leaves(args[i])]))
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise EmberTypeError("func.grad(has_aux=True): the function must return "
                                         "a (output, aux) tuple")
                out, aux = out
            if type(out) is not Tensor or out.numel() != 1:
                raise EmberTypeError(
                    "func.grad: the function must return a scalar tensor (one element), got "
                    + (f"shape {tuple(out.shape)}" if type(out) is Tensor else
                       type(out).__name__) + "; use func.vjp or func.jacrev for other outputs")
            xs = [x for i in nums for x in _leaves(args[i])]
            gs = iter(_grads([out], xs, None) if keep else _grad(
                [out], xs, None, allow_unused=True, materialize_grads=True))
            g = tuple(_unflatten(args[i], gs) for i in nums)
        g = g[0] if single else g
        return _outer_results((g, (out, aux)) if has_aux else (g, out), given)
    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """torch.func.grad: d func / d args[argnums] (func returns a scalar tensor)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """torch.func.vjp: (func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) gives one
    gradient per primal (with each primal's structure)."""
    with enable_grad(), _transform():
        xs_tree = [_unflatten(p, iter([_fresh(x, "vjp") for x in _leaves(p)]))
                   for p in primals]
        out = func(*xs_tree)
        aux = None
        if has_aux:
            out, aux = out
    xs = _leaves(xs_tree)
    depth = _level.depth

    def vjp_fn(cotangents):
        with enable_grad(), _transform():
            outs, vs = _leaves(out), _leaves(cotangents)
            if len(outs) != len(vs):
                raise EmberValueError(f"func.vjp: vjp_fn got {len(vs)} cotangents for "
                                      f"{len(outs)} outputs; give one per output")
            for o, v in zip(outs, vs):
                if type(v) is not Tensor or tuple(v.shape) != tuple(o.shape):
                    raise EmberValueError(
                        f"func.vjp: a cotangent must be a tensor of its output's shape "
                        f"{tuple(o.shape)}, got " + (str(tuple(v.shape)) if type(v) is Tensor
                                                     else type(v).__name__))
            gs = iter(_grads(outs, xs, vs))
            result = tuple(_unflatten(p, gs) for p in primals)
        return result if depth else _outer_results(result, [primals, cotangents])
    head = (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
    return head if depth else (_outer_results(out, primals), vjp_fn) + head[2:]


def _basis(out):
    """The identity over out's elements: (n, *out.shape), one one-hot row per element."""
    n = out.numel()
    eye = ops.eye(n, dtype=out.dtype, device=out.device)
    return eye.reshape((n,) + tuple(out.shape))


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """torch.func.jacrev: the Jacobian by reverse mode, vjp batched over the output basis
    with vmap (shape out.shape + arg.shape per argument)."""
    def wrapper(*args):
        with _transform():
            result = _jacrev(*args)
        return _outer_results(result, args)

    def _jacrev(*args):
        nums, single = _argnums(argnums, len(args), "jacrev")

        def part(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return func(*full)
        res = vjp(part, *[args[i] for i in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        outs = _leaves(out)
        jacs_per_out = []
        for k, o in enumerate(outs):
            def row(v, k=k):
                vs = [v if j == k else ops.zeros_like(oo) for j, oo in enumerate(outs)]
                return vjp_fn(_unflatten(out, iter(vs)))
            basis = _basis(o)
            jac = vmap(row, chunk_size=chunk_size)(basis)      # per arg: (n, *arg.shape)
            jac = _map_tensors(lambda j, o=o: j.reshape(tuple(o.shape) + tuple(j.shape[1:])),
                               jac)
            jacs_per_out.append(jac if not single else jac[0])
        result = _unflatten(out, iter(jacs_per_out))
        return (result, res[2]) if has_aux else result
    return wrapper


def _map_tensors(fn, tree):
    if isinstance(tree, (tuple, list)):
        out = [_map_tensors(fn, t) for t in tree]
        return out if isinstance(tree, list) else tuple(out)
    if isinstance(tree, dict):
        return {k: _map_tensors(fn, v) for k, v in tree.items()}
    return fn(tree) if type(tree) is Tensor else tree


# --- forward mode, by transposing the VJP -----------------------------------------------------

def jvp(func, primals, tangents, *, has_aux: bool = False):
    """torch.func.jvp: (func(*primals), J tangents), as the VJP of the VJP: with u a dummy
    cotangent, g(u) = u^T J is linear in u, and the VJP of g at tangent t is J t."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise EmberValueError(f"func.jvp: {len(primals)} primals but {len(tangents)} "
                              "tangents; give one tangent per primal")
    for p, t in zip(_leaves(primals), _leaves(tangents)):
        if type(t) is not Tensor or tuple(t.shape) != tuple(p.shape):
            raise EmberValueError("func.jvp: each tangent must be a tensor of its primal's "
                                  f"shape {tuple(p.shape)}")
    with enable_grad(), _transform():
        res = vjp(func, *primals, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        outs = _leaves(out)
        us = [ops.zeros_like(o).requires_grad_(True) for o in outs]
        gx = _leaves(vjp_fn(_unflatten(out, iter(us))))
        ts = _leaves(tangents)
        pairs = [(g, t) for g, t in zip(gx, ts) if g.requires_grad]
        if pairs:
            jv = _grads([g for g, _ in pairs], us, [t for _, t in pairs])
        else:
            jv = [ops.zeros_like(o) for o in outs]
    jv_tree = _unflatten(out, iter(jv))
    return _outer_results((out, jv_tree, res[2]) if has_aux else (out, jv_tree),
                          [primals, tangents])


def jacfwd(func, argnums=0, *, has_aux: bool = False, randomness: str = "error"):
    """torch.func.jacfwd: the Jacobian by forward mode, jvp batched over the input basis
    with vmap (shape out.shape + arg.shape)."""
    def wrapper(*args):
        with _transform():
            result = _jacfwd(*args)
        return _outer_results(result, args)

    def _jacfwd(*args):
        nums, single = _argnums(argnums, len(args), "jacfwd")
        for i in nums:
            if type(args[i]) is not Tensor:
                raise EmberTypeError("func.jacfwd: the differentiated arguments must be "
                                     f"tensors, got {type(args[i]).__name__}")
        sizes = [args[i].numel() for i in nums]
        total = sum(sizes)
        dtype, device = args[nums[0]].dtype, args[nums[0]].device
        eye = ops.eye(total, dtype=dtype, device=device)

        def part(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return func(*full)

        def column(e):
            tangents, lo = [], 0
            for i, n in zip(nums, sizes):
                tangents.append(e[lo:lo + n].reshape(tuple(args[i].shape)))
                lo += n
            r = jvp(part, tuple(args[i] for i in nums), tuple(tangents), has_aux=has_aux)
            return r[1]
        cols = vmap(column, randomness=randomness)(eye)     # per output: (total, *out)
        out = func(*args)
        if has_aux:
            out, aux = out

        def split(c, o):
            # (total, *o.shape) -> per arg (*o.shape, *arg.shape)
            moved = c.reshape((total, o.numel())).transpose(0, 1)
            parts, lo = [], 0
            for i, n in zip(nums, sizes):
                parts.append(moved[:, lo:lo + n].reshape(tuple(o.shape) +
                                                         tuple(args[i].shape)))
                lo += n
            return parts[0] if single else tuple(parts)
        jac = _unflatten(out, iter([split(c, o) for c, o in zip(_leaves(cols),
                                                                 _leaves(out))]))
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func)) in torch; here jacrev of jacrev (the same
    numbers; reverse over reverse).  ember's earlier form hessian(func, x) (a tensor in
    place of argnums) still gives the Hessian at x."""
    if type(argnums) is Tensor:
        return jacrev(jacrev(func))(argnums)
    return jacrev(jacrev(func, argnums), argnums)


def jacobian(fn, *inputs):
    """The Jacobian of fn at inputs (ember's earlier name): jacrev over every input."""
    j = jacrev(fn, argnums=tuple(range(len(inputs))))(*inputs)
    return j[0] if len(inputs) == 1 else j


# --- modules as functions -------------------------------------------------------------------

@contextmanager
def _swapped(module, tensors: dict):
    saved = []
    try:
        for name, t in tensors.items():
            owner, _, leaf = name.rpartition(".")
            mod = module.get_submodule(owner) if owner else module
            for store in ("_parameters", "_buffers"):
                d = mod.__dict__.get(store)
                if d is not None and leaf in d:
                    saved.append((d, leaf, d[leaf]))
                    d[leaf] = t
                    break
            else:
                raise EmberValueError(f"functional_call: the module has no parameter or "
                                      f"buffer named {name!r}")
        yield
    finally:
        for d, leaf, old in reversed(saved):
            d[leaf] = old


def _untied(module, given: dict) -> dict:
    """tie_weights=True: a tensor given for one name of a parameter or buffer the module holds
    under several names (tied weights) stands for all of them, as torch's
    _untie_named_tensors_map; different tensors for names of one tied group are refused."""
    names: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), set()).add(name)
    tied = {n: group for group in names.values() if len(group) > 1 for n in group}
    out = dict(given)
    for name in given:
        group = tied.get(name)
        if group is None:
            continue
        values = {id(given[n]) for n in group if n in given}
        if len(values) > 1:
            raise EmberValueError(f"functional_call got multiple values for keys "
                                  f"{sorted(group)}, which are tied. Consider using "
                                  "tie_weights=False")
        for n in group:
            out[n] = given[name]
    return out


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """torch.func.functional_call: module(*args, **kwargs) with its parameters and buffers
    replaced by the given tensors for this call (the module is left as it was)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = (dicts,)
    merged: dict = {}
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                raise EmberValueError(f"functional_call: {k!r} is given in more than one "
                                      "dict; give each name once")
            merged[k] = v
    if tie_weights:
        merged = _untied(module, merged)
    if strict:
        names = {n for n, _ in module.named_parameters()} | {n for n, _ in
                                                             module.named_buffers()}
        missing, unexpected = sorted(names - set(merged)), sorted(set(merged) - names)
        if missing or unexpected:
            raise EmberValueError(f"functional_call(strict=True): missing keys {missing}, "
                                  f"unexpected keys {unexpected}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, merged):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """torch.func.stack_module_state: (params, buffers), each name's tensors of the models
    stacked along a new dim 0 (the parameters as new leaves that require grad)."""
    models = list(models)
    if not models:
        raise EmberValueError("stack_module_state: expected at least one model, got none")
    kinds = {type(m) for m in models}
    if len(kinds) != 1:
        raise EmberTypeError(f"stack_module_state: the models must be of one class, got "
                             f"{sorted(k.__name__ for k in kinds)}")
    params = {n: ops.stack([dict(m.named_parameters())[n].detach() for m in models])
              for n, _ in models[0].named_parameters()}
    for n, p in models[0].named_parameters():
        params[n].requires_grad_(p.requires_grad)
    buffers = {n: ops.stack([dict(m.named_buffers())[n] for m in models])
               for n, _ in models[0].named_buffers()}
    return params, buffers
