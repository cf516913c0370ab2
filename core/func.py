"""Functional transforms over the autograd engine: grad, vjp, jvp, jacobian, hessian."""
from __future__ import annotations

from . import ops
from .autograd import grad as _grad
from .autograd.grad_mode import enable_grad
from .errors import EmberTypeError
from .tensor import Tensor


def _prepare(args, argnums):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    args = list(args)
    for i in nums:
        if type(args[i]) is not Tensor:
            raise EmberTypeError(f"func: argument {i} must be a Tensor, got "
                                 f"{type(args[i]).__name__}")
        if not args[i].requires_grad:   # keep a graph input as it is, so transforms nest
            args[i] = args[i].detach().requires_grad_(True)
    return args, nums, single


def grad(fn, argnums=0, has_aux: bool = False):
    """A function computing d fn / d args[argnums] (fn must return a scalar tensor)."""
    def wrapper(*args):
        with enable_grad():
            xs, nums, single = _prepare(args, argnums)
            out = fn(*xs)
            aux = None
            if has_aux:
                out, aux = out
            if type(out) is not Tensor or out.numel() != 1:
                raise EmberTypeError("func.grad: the function must return a scalar tensor; "
                                     "use func.vjp or func.jacobian for other outputs")
            gs = _grad(out, [xs[i] for i in nums], create_graph=True, allow_unused=True,
                       materialize_grads=True)
        g = gs[0] if single else tuple(gs)
        return (g, aux) if has_aux else g
    return wrapper


def vjp(fn, *primals):
    """(fn(*primals), vjp_fn) where vjp_fn(v) gives v^T J for each primal."""
    with enable_grad():
        xs = [p.detach().requires_grad_(True) for p in primals]
        out = fn(*xs)

    def vjp_fn(v):
        with enable_grad():
            outs = out if isinstance(out, tuple) else (out,)
            vs = v if isinstance(v, tuple) else (v,)
            return tuple(_grad(outs, xs, vs, retain_graph=True, create_graph=True,
                               allow_unused=True, materialize_grads=True))
    return out, vjp_fn


def jvp(fn, primals, tangents):
    """(fn(*primals), J @ tangents), by the double-vjp trick."""
    primals, tangents = tuple(primals), tuple(tangents)
    with enable_grad():
        xs = [p.detach().requires_grad_(True) for p in primals]
        out = fn(*xs)
        u = ops.zeros_like(out).requires_grad_(True)
        gx = _grad(out, xs, u, create_graph=True, allow_unused=True, materialize_grads=True)
        (jv,) = _grad(list(gx), [u], list(tangents), create_graph=True, allow_unused=True,
                      materialize_grads=True)
    return out, jv


def jacobian(fn, *inputs):
    """The Jacobian of fn at inputs: shape out.shape + input.shape (per input)."""
    with enable_grad():
        xs = [x.detach().requires_grad_(True) for x in inputs]
        out = fn(*xs)
        rows = [[] for _ in xs]
        flat = out.reshape(-1)
        for j in range(flat.shape[0]):
            gs = _grad(flat[j], xs, retain_graph=True, create_graph=True, allow_unused=True,
                       materialize_grads=True)
            for k, g in enumerate(gs):
                rows[k].append(g)
    jac = [ops.stack(r).reshape(tuple(out.shape) + tuple(x.shape)) if r else
           ops.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
           for r, x in zip(rows, xs)]
    return jac[0] if len(jac) == 1 else tuple(jac)


def hessian(fn, *inputs):
    """The Hessian of a scalar fn: the Jacobian of its gradient."""
    if len(inputs) != 1:
        raise EmberTypeError("func.hessian: expected one input tensor")
    return jacobian(grad(fn), *inputs)
