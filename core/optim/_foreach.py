"""The multi-tensor ("foreach") path of SGD, Adam and AdamW, as torch's foreach=True.

The per-parameter loop runs every term of an update as an ember op: a dispatch (device,
dtype, kernel lookup, autograd check, hooks) per term per parameter, most of a small
model's optimizer step.  The multi-tensor path takes the parameters of a group that live
in host NumPy arrays (float32 and float64 on the CPU) and applies each term to all of them
in one pass of NumPy ufuncs writing into the parameters and the state buffers (``out=``),
with no ember dispatch and no temporaries beyond one scratch array per parameter (ufuncs
with out=, also for 0-d parameters, whose out-of-place results NumPy gives as scalars).

It computes the same terms, in the same order, with the same operands as the loop (the
ops the loop dispatches to are these ufuncs, with Python numbers weakly typed as NumPy 2
does), so both paths give bit-identical parameters and state; tests/nn/test_optim_foreach.py
checks it.

Which path a group takes (its "foreach" entry, torch's flag):
- None (the default): the multi-tensor path for the parameters it can take, the loop for
  the others (parameters on other devices, other float dtypes, gradients of another dtype);
- True: the multi-tensor path for all; a parameter it cannot take is an error (NotInEmberError);
- False: the loop.
While ember.compile captures a step the loop runs (the capture records ember ops; the
compiled replay is itself one pass over the whole step).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import EmberValueError, NotInEmberError
from ..ops import index as _index
from ..tensor import Tensor, wrap

_HOST_DTYPES = (D.float32, D.float64)


def check_flags(name: str, foreach, fused) -> None:
    """torch's foreach/fused flags at construction: fused has no kernel in ember."""
    if foreach not in (None, True, False):
        raise EmberValueError(f"{name}: foreach must be None, True or False, got {foreach!r}")
    if fused:
        raise NotInEmberError(
            f"{name}(fused=True): ember has no fused optimizer kernel (torch's fused=True "
            "runs one compiled kernel for the whole update); use foreach=True (the default "
            "on the CPU: each term of the update in one pass over all parameters) or "
            "ember.compile the training step")
    if fused is not None and fused is not False:
        raise EmberValueError(f"{name}: fused must be None or a bool, got {fused!r}")


def _eligible(p: Tensor, g) -> bool:
    return (type(p._data) is np.ndarray and p._device.type == "cpu"
            and p._dtype in _HOST_DTYPES and type(g) is Tensor and g._dtype is p._dtype
            and g._device is p._device and type(g._data) is np.ndarray
            and g._data.shape == p._data.shape and p._data.flags.writeable
            and _index.writes_through(p))


def split(opt, group: dict):
    """(multi, loop): the (parameter, gradient array, state) the multi-tensor path takes,
    and the (parameter, gradient, state) the loop takes (maximize applied by the loop's
    _grads only; the multi-tensor path negates in its own pass)."""
    foreach = group.get("foreach")
    if group.get("fused"):                  # a loaded state dict can carry torch's flag
        check_flags(type(opt).__name__, foreach, True)
    if foreach is False or Tensor._capture is not None:
        return [], list(opt._grads(group))
    multi, rest = [], []
    for p in group["params"]:
        g = p.grad
        if g is None:
            continue
        if _eligible(p, g):
            multi.append((p, g._data, opt._state(p)))
        else:
            rest.append(p)
    if rest and foreach:
        p = rest[0]
        g = p.grad
        raise NotInEmberError(
            f"{type(opt).__name__}(foreach=True): the multi-tensor path takes float32 and "
            "float64 parameters on the CPU (NumPy arrays) whose gradient has the same dtype "
            f"and shape; got a {p._dtype.name} parameter of shape {list(p.shape)} on "
            f"{p._device} with a {g._dtype.name} gradient on {g._device}; pass "
            "foreach=None (multi-tensor where it applies, the loop elsewhere) or "
            "foreach=False")
    loop = []
    if rest:
        maximize = group.get("maximize", False)
        for p in rest:
            g = p.grad
            loop.append((p, -g if maximize else g, opt._state(p)))
    return multi, loop


def bump(tensors) -> None:
    """The in-place writes are visible to autograd's version checks, as the loop's are.
    A tensor that is no view, was not detached from another and has no views of its own
    (a parameter, a state buffer) has only its own count to bump (index._bump's result)."""
    for t in tensors:
        m = t._meta
        if m is None or ("base" not in m and "version_of" not in m and not m.get("views")):
            t._version += 1
        else:
            _index._bump(t)


def sgd(multi, lr, momentum, dampening, weight_decay, nesterov, maximize) -> None:
    """torch.optim.SGD's update over all parameters, as SGD's loop computes it."""
    params = [p._data for p, _, _ in multi]
    if maximize:
        grads = [np.negative(g) for _, g, _ in multi]
    else:
        grads = [g for _, g, _ in multi]
    if weight_decay:
        grads = [np.add(g, np.multiply(p, weight_decay)) for g, p in zip(grads, params)]
    written = [p for p, _, _ in multi]
    alpha = 1 - dampening
    # one parameter at a time, its momentum and then its update, while its arrays are in
    # cache (two passes over all the parameters read every buffer back from memory: the
    # MLP step's optimizer ran slower than the loop of ember ops)
    for i, (p, _, state) in enumerate(multi):
        g = grads[i]
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                b = np.array(g, copy=True)
                buf = state["momentum_buffer"] = wrap(b, p._device, p._dtype)
            else:
                b = buf._data
                np.multiply(b, momentum, out=b)
                np.add(b, g if alpha == 1 else np.multiply(g, alpha), out=b)
                written.append(buf)
            g = np.add(g, np.multiply(b, momentum)) if nesterov else b
        np.add(params[i], np.multiply(g, -lr), out=params[i])
    bump(written)


def adam(multi, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled,
         capturable) -> None:
    """torch.optim.Adam's (AdamW's with decoupled) update over all parameters, as Adam's
    loop computes it; state entries are created as the loop creates them."""
    written = []
    grads = []
    for p, g, state in multi:
        if not state:
            state["step"] = ops.zeros((), device=p.device) if capturable else 0
            state["exp_avg"] = ops.zeros_like(p)
            state["exp_avg_sq"] = ops.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = ops.zeros_like(p)
        grads.append(np.negative(g) if maximize else g)
        written += [p, state["exp_avg"], state["exp_avg_sq"]]
        if amsgrad:
            written.append(state["max_exp_avg_sq"])
    if weight_decay:
        if decoupled:
            scale = 1 - lr * weight_decay
            for p, _, _ in multi:
                np.multiply(p._data, scale, out=p._data)
        else:
            grads = [np.add(g, np.multiply(p._data, weight_decay))
                     for g, (p, _, _) in zip(grads, multi)]
    w1, v2 = 1 - beta1, 1 - beta2
    for g, (_, _, state) in zip(grads, multi):
        m = state["exp_avg"]._data
        t = np.subtract(g, m, out=np.empty_like(m))         # exp_avg.lerp_(g, 1 - beta1)
        np.multiply(t, w1, out=t)
        np.add(m, t, out=m)
        v = state["exp_avg_sq"]._data                       # mul_(beta2).addcmul_(g, g, ..)
        np.multiply(v, beta2, out=v)
        t = np.multiply(g, g, out=np.empty_like(v))
        np.multiply(t, v2, out=t)
        np.add(v, t, out=v)
    for p, _, state in multi:
        step = state["step"]
        if capturable:
            # the step and the bias corrections as the loop makes them (0-d device tensors)
            if type(step) is not Tensor:
                step = state["step"] = ops.full((), float(step), device=p.device)
            step.add_(1.0)
            neg_step_size = (-((1 - beta1 ** step).reciprocal() * lr))._data
            bias_correction2_sqrt = (1 - beta2 ** step).sqrt()._data
        else:
            if type(step) is Tensor:
                step = int(step.item())
            state["step"] = step = step + 1
            neg_step_size = -(lr / (1 - beta1 ** step))
            bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
        v = state["exp_avg_sq"]._data
        if amsgrad:
            second = state["max_exp_avg_sq"]._data
            np.maximum(second, v, out=second)
        else:
            second = v
        denom = np.sqrt(second, out=np.empty_like(second))   # second.sqrt() / bc2 + eps
        np.divide(denom, bias_correction2_sqrt, out=denom)
        np.add(denom, eps, out=denom)
        np.divide(state["exp_avg"]._data, denom, out=denom)  # p.addcdiv_(m, denom, -ss)
        np.multiply(denom, neg_step_size, out=denom)
        np.add(p._data, denom, out=p._data)
    bump(written)
