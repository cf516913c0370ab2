"""Higher-order autograd (torch.autograd.functional): jacobian, hessian, vjp, jvp, hvp, vhp."""
from __future__ import annotations

from .. import ops
from ..errors import AutogradError, EmberTypeError, ShapeError, UnsupportedError
from ..tensor import Tensor
from .engine import grad
from .grad_mode import enable_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]


def _as_tuple(x, what: str, fn: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if type(t) is not Tensor:
            raise EmberTypeError(f"{fn}: the {what} must be a Tensor or a tuple of Tensors, "
                                 f"but element {i} is {type(t).__name__}")
    return is_tuple, items


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    # with create_graph an input that already requires grad stays connected to its graph
    # (a view of it); every other input becomes a fresh leaf that requires grad
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in inputs)


def _finish(values, create_graph: bool):
    if isinstance(values, tuple):
        return tuple(_finish(v, create_graph) for v in values)
    return values if values is None or create_graph else values.detach()


def _unpack(values: tuple, is_tuple: bool):
    return values if is_tuple else values[0]


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn, what="outputs"):
    """grad of outputs w.r.t. inputs; an input the outputs do not depend on gets zeros (an
    error with strict=True, as torch)."""
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if live:
        found = grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                     create_graph=create_graph, allow_unused=True)
    else:
        found = (None,) * len(inputs)
    result = []
    for i, (x, g) in enumerate(zip(inputs, found)):
        if g is None:
            if strict:
                raise AutogradError(f"{fn}: the {what} of the user-provided function are "
                                    f"independent of input {i}. This is not allowed in "
                                    "strict mode.")
            g = ops.zeros_like(x)
        result.append(g)
    return tuple(result)


def _check_v(v, refs: tuple, fn: str, what: str) -> tuple:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise AutogradError(f"{fn}: the vector v can only be None if the {what} is a "
                                "single Tensor with a single element")
        return (ops.ones_like(refs[0]),)
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(refs):
        raise ShapeError(f"{fn}: v has {len(vs)} Tensors but the {what} has {len(refs)}")
    for i, (a, b) in enumerate(zip(vs, refs)):
        if tuple(a.shape) != tuple(b.shape):
            raise ShapeError(f"{fn}: entry {i} in v has shape {list(a.shape)} but the {what} "
                             f"has shape {list(b.shape)} there")
    return vs


def _call(func, inputs: tuple, fn: str) -> tuple[bool, tuple]:
    out = func(*inputs)
    return _as_tuple(out, "outputs of the user-provided function", fn)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """d func(inputs) / d inputs: a Tensor of shape out.shape + in.shape, a tuple over
    inputs or outputs where those are tuples, a tuple (per output) of tuples (per input)
    where both are.

    Reverse mode: one backward per output element, or with ``vectorize=True`` one batched
    backward per output (the output's standard basis under ``ember.func.vmap``, as torch).
    ``strategy="forward-mode"`` needs ``vectorize=True`` (as torch): J v for the inputs'
    standard basis in one batched pass (ember computes J v by transposing the VJP, the
    double-backward trick, as ember.func.jvp does); its result has the outputs' dtype.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise AutogradError(f"jacobian: expected strategy 'reverse-mode' or 'forward-mode', "
                            f"got {strategy!r}")
    if strategy == "forward-mode":
        if create_graph:
            raise UnsupportedError('jacobian: create_graph=True and strategy="forward-mode" '
                                   "are not supported together (as torch); set "
                                   'create_graph=False or strategy="reverse-mode"')
        if strict:
            raise AutogradError('jacobian: strict=True and strategy="forward-mode" are not '
                                "supported together (as torch); set strict=False or "
                                'strategy="reverse-mode"')
        if not vectorize:
            raise UnsupportedError('jacobian: strategy="forward-mode" is only implemented '
                                   "with vectorize=True (as torch); pass vectorize=True or "
                                   'use strategy="reverse-mode"')
    elif vectorize and strict:
        raise AutogradError("jacobian: strict=True and vectorize=True are not supported "
                            "together (as torch); set strict=False or vectorize=False")
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _call(func, inputs, "jacobian")
        if strategy == "forward-mode":
            rows = _jacobian_forward(inputs, outputs)
        elif vectorize:
            rows = _jacobian_vectorized(inputs, outputs, create_graph)
        else:
            rows = _jacobian_rows(inputs, outputs, create_graph, strict)
        rows = [_finish(tuple(r), create_graph) for r in rows]
    return _unpack(tuple(_unpack(r, in_tuple) for r in rows), out_tuple)


def _jacobian_rows(inputs, outputs, create_graph, strict):
    rows = []
    for i, out in enumerate(outputs):
        n = out.numel()
        per_input: list[list[Tensor]] = [[] for _ in inputs]
        for k in range(n):
            onehot = ops.zeros(n, dtype=out.dtype, device=out.device)
            onehot[k] = 1.0
            gs = _grads([out], inputs, [onehot.reshape(out.shape)], create_graph,
                        strict, "jacobian", what=f"output {i}")
            for j, g in enumerate(gs):
                per_input[j].append(g)
        row = []
        for j, x in enumerate(inputs):
            shape = tuple(out.shape) + tuple(x.shape)
            row.append(ops.stack(per_input[j]).reshape(shape) if n else
                       ops.zeros(shape, dtype=x.dtype, device=x.device))
        rows.append(row)
    return rows


def _basis(n: int, like: Tensor, shape: tuple) -> Tensor:
    """The standard basis of R^n as n rows of `shape` (n = prod(shape))."""
    return ops.eye(n, dtype=like.dtype, device=like.device).reshape((n,) + tuple(shape))


def _vmap():
    # the one deliberate upward import of autograd/ (tests/unit/test_layering.py ALLOWED_UP):
    # vectorize=True is torch's "use vmap", and vmap lives with torch.func's other transforms
    from ..func.vmap import vmap
    return vmap


def _jacobian_vectorized(inputs, outputs, create_graph):
    """Reverse mode, one vmapped backward per output over its standard basis."""
    vmap, rows = _vmap(), []
    for i, out in enumerate(outputs):
        n = out.numel()
        if n == 0:
            rows.append([ops.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype,
                                   device=x.device) for x in inputs])
            continue

        def row(v, out=out, i=i):
            return _grads([out], inputs, [v], create_graph, False, "jacobian",
                          what=f"output {i}")
        per_input = vmap(row)(_basis(n, out, out.shape))
        rows.append([g.reshape(tuple(out.shape) + tuple(x.shape))
                     for g, x in zip(per_input, inputs)])
    return rows


def _jacobian_forward(inputs, outputs):
    """Forward mode: J v for every v of the inputs' standard basis, in one vmapped pass.
    J v is the derivative, w.r.t. u, of the vjp u -> J^T u (linear in u) applied to v."""
    vmap = _vmap()
    us = tuple(ops.zeros_like(o).requires_grad_(True) for o in outputs)
    grad_in = _grads(outputs, inputs, us, True, False, "jacobian")
    numels = [x.numel() for x in inputs]
    total = sum(numels)
    if total == 0:
        return [[ops.zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype, device=o.device)
                 for x in inputs] for o in outputs]
    eye = ops.eye(total, dtype=inputs[0].dtype, device=inputs[0].device)
    tangents, start = [], 0
    for x, n in zip(inputs, numels):          # each input's part of the basis: (total, *x)
        tangents.append(eye[:, start:start + n].reshape((total,) + tuple(x.shape)))
        start += n

    def column(*vs):
        return _grads(grad_in, us, vs, False, False, "jacobian",
                      what="gradients of the outputs")
    jv = vmap(column)(*tangents)                # per output: (total, *out.shape)
    rows = []
    for o, j in zip(outputs, jv):
        flat = j.reshape(total, o.numel())      # [basis k, out element]
        row, start = [], 0
        for x, n in zip(inputs, numels):
            part = flat[start:start + n].transpose(0, 1)
            row.append(part.reshape(tuple(o.shape) + tuple(x.shape)).to(o.dtype))
            start += n
        rows.append(row)
    return rows


def _scalar_output(func, inputs, fn):
    out_tuple, outs = _call(func, inputs, fn)
    if out_tuple or outs[0].numel() != 1:
        shape = "a tuple" if out_tuple else f"shape {list(outs[0].shape)}"
        raise AutogradError(f"{fn}: the function given to {fn} should return a single "
                            f"Tensor with a single element, got {shape}")
    return outs[0]


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The second derivatives of a scalar function: in.shape + in.shape for one input, a
    tuple of tuples [i][j] (d2 / d input_i d input_j) for a tuple of inputs."""
    in_tuple, inputs_t = _as_tuple(inputs, "inputs", "hessian")

    def first(*xs):
        out = _scalar_output(func, xs, "hessian")
        return _grads([out], xs, [ops.ones_like(out)], True, strict, "hessian")

    res = jacobian(first, inputs_t, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return res if in_tuple else res[0][0]


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product, shaped like the inputs."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        out_tuple, outputs = _call(func, inputs, "vjp")
        vs = _check_v(v, outputs, "vjp", "output of the user-provided function")
        res = _grads(outputs, inputs, vs, create_graph, strict, "vjp")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs, by the
    double-backward trick (as torch): the vjp is linear in its vector u, so d(vjp)/du
    applied to v is J v."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        vs = _check_v(v, inputs, "jvp", "input")
        out_tuple, outputs = _call(func, inputs, "jvp")
        us = tuple(ops.zeros_like(o).requires_grad_(True) for o in outputs)
        grad_in = _grads(outputs, inputs, us, True, strict, "jvp")
        res = _grads(grad_in, us, vs, create_graph, strict, "jvp",
                     what="gradients of the outputs")
    return (_unpack(_finish(outputs, create_graph), out_tuple),
            _unpack(_finish(res, create_graph), out_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar function, shaped like the inputs."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        vs = _check_v(v, inputs, "vhp", "input")
        out = _scalar_output(func, inputs, "vhp")
        jac = _grads([out], inputs, [ops.ones_like(out)], True, strict, "vhp")
        res = _grads(jac, inputs, vs, create_graph, strict, "vhp", what="gradients")
    return _finish(out, create_graph), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar function, shaped like the inputs, by the
    double-backward trick (as torch)."""
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        vs = _check_v(v, inputs, "hvp", "input")
        out = _scalar_output(func, inputs, "hvp")
        jac = _grads([out], inputs, [ops.ones_like(out)], True, strict, "hvp")
        us = tuple(ops.zeros_like(x).requires_grad_(True) for x in inputs)
        back = _grads(jac, inputs, us, True, strict, "hvp", what="gradients")
        res = _grads(back, us, vs, create_graph, strict, "hvp", what="gradients")
    return _finish(out, create_graph), _unpack(_finish(res, create_graph), in_tuple)
