"""Forward-mode AD with dual tensors, as ``torch.autograd.forward_ad``.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives a tensor whose tangent is t; every
op run on it carries a tangent to its output, and ``unpack_dual(y)`` gives ``(primal,
tangent)``.

How the tangent goes through an op: ember declares one rule per primitive, its VJP (core/ops),
and derives the JVP from it by transposition instead of a second rule per primitive.  The
VJP ``u -> vjp(u)`` of an op at its inputs is linear in the cotangent u, and its transpose is
the JVP: with u a fresh zero tensor that requires grad, ``J t = d <vjp(u), t> / d u``, one
backward pass through the VJP.  So every primitive with a VJP that differentiates again
(what ``create_graph=True`` needs, which all of ember's do) has forward mode, and a new
primitive needs nothing more.  The tangent is computed as each op runs: the dispatcher's
tail calls a hook after every kernel (``dispatch.add_hook``), installed only while a dual
level is open, so code outside forward mode pays nothing.  A declared kernel without a VJP
of its own (a fused kernel the backend ran in one piece) gets its tangent from its
decomposition, run again with the tangents.

``ember.func.jvp`` and ``jacfwd`` use the same derivation over the whole function at once
(the VJP of the function's VJP: one double backward pass, which composes with ``vmap`` and
``ember.compile`` as plain reverse mode does); this module is the eager, per-op form.
Both rest on the declared VJPs: there are no separate JVP rules to keep in step.

As torch: one level at a time (nested levels are refused), only floating tensors have
tangents, a tangent is dropped when its level exits, ``detach()`` drops it, and tangents
go through backward passes run on dual tensors (forward-over-reverse).
"""
from __future__ import annotations

import threading
from collections import namedtuple

from .. import dispatch
from ..dtypes import FLOAT
from ..errors import EmberTypeError, ShapeError, UnsupportedError
from ..ops._op import REGISTRY
from ..tensor import Tensor, wrap
from .engine import run_backward

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

_KEY = "forward_ad"          # a tensor's meta entry: (level, tangent)
_HOOK = "forward_ad"


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What unpack_dual returns: the primal (a view without the tangent) and the tangent
    (None when the tensor has none at this level).

    PyTorch
    -------
    ``torch.autograd.forward_ad.UnpackedDualTensor``
    """

    __slots__ = ()


class _State:
    level = None             # the open level's number, or None
    count = 0                # levels opened so far: a tangent from a closed level is stale


_state = _State()
_busy = threading.local()    # set while the hook computes a tangent (its own ops carry none)


def enter_dual_level() -> int:
    """Open a forward-AD level and return its number (``dual_level`` does this for a block).

    Raises
    ------
    UnsupportedError
        A level is open already (nested forward mode is not supported, as in torch).

    PyTorch
    -------
    ``torch.autograd.forward_ad.enter_dual_level``
    """
    if _state.level is not None:
        raise UnsupportedError("forward_ad.enter_dual_level: a dual level is open already; "
                               "nested forward mode AD is not supported (as in torch): exit "
                               "the open level first, or use ember.func.jvp, which nests")
    _state.count += 1
    _state.level = _state.count
    dispatch.add_hook(_HOOK, _propagate)
    return _state.level


def exit_dual_level(*, level=None) -> None:
    """Close the open forward-AD level: every tangent made in it is dropped.

    PyTorch
    -------
    ``torch.autograd.forward_ad.exit_dual_level``
    """
    if _state.level is None or (level is not None and level != _state.level):
        raise UnsupportedError(f"forward_ad.exit_dual_level: level {level} is not the open "
                               f"level ({_state.level}); exit the level you entered")
    dispatch.remove_hook(_HOOK)
    _state.level = None


class dual_level:
    """Context manager for a forward-AD level: dual tensors made inside it carry tangents
    through every op until the block ends.

    Examples
    --------
    >>> import ember
    >>> import ember.autograd.forward_ad as fwAD
    >>> x = ember.tensor([1.0, 2.0])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, ember.ones(2)).sin()
    ...     tangent = fwAD.unpack_dual(y).tangent
    >>> bool(ember.allclose(tangent, x.cos()))
    True

    PyTorch
    -------
    ``torch.autograd.forward_ad.dual_level``
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _level_of(level, fn):
    if _state.level is None:
        raise UnsupportedError(f"forward_ad.{fn}: no dual level is open; to make or unpack "
                               "a dual tensor, work inside `with forward_ad.dual_level():`")
    if level is not None and level != _state.level:
        raise UnsupportedError(f"forward_ad.{fn}: level {level} is not the open level "
                               f"({_state.level})")
    return _state.level


def _tangent(t: Tensor, level):
    m = t._meta
    if m is None:
        return None
    entry = m.get(_KEY)
    if entry is None or entry[0] != level:
        return None
    return entry[1]


def make_dual(tensor: Tensor, tangent: Tensor, *, level=None) -> Tensor:
    """A view of tensor that carries tangent as its forward gradient.

    Raises
    ------
    EmberTypeError
        tensor or tangent is not a floating tensor.
    ShapeError
        tangent's shape differs from tensor's.
    UnsupportedError
        no dual level is open.

    PyTorch
    -------
    ``torch.autograd.forward_ad.make_dual``
    """
    level = _level_of(level, "make_dual")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if type(t) is not Tensor:
            raise EmberTypeError(f"forward_ad.make_dual: the {what} must be a Tensor, got "
                                 f"{type(t).__name__}")
        if t._dtype.category != FLOAT:
            raise EmberTypeError(f"forward_ad.make_dual: expected a floating {what}, got "
                                 f"{t._dtype.name}; only floating tensors have tangents")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise ShapeError(f"forward_ad.make_dual: the tangent's shape {tuple(tangent.shape)} "
                         f"differs from the primal's {tuple(tensor.shape)}; give a tangent "
                         "of the primal's shape")
    if tangent._dtype is not tensor._dtype:
        raise EmberTypeError(f"forward_ad.make_dual: the tangent is {tangent._dtype.name} and "
                             f"the primal {tensor._dtype.name}; cast the tangent with "
                             f".to({tensor._dtype.name})")
    if tangent._device is not tensor._device:
        raise EmberTypeError(f"forward_ad.make_dual: the tangent is on {tangent._device} and "
                             f"the primal on {tensor._device}; move one of them")
    dual = _view(tensor)
    dual._set_meta(_KEY, (level, tangent.detach()))
    return dual


def unpack_dual(tensor: Tensor, *, level=None) -> UnpackedDualTensor:
    """(primal, tangent) of a dual tensor: the primal a view without the tangent, the
    tangent None where the tensor has none at this level.

    PyTorch
    -------
    ``torch.autograd.forward_ad.unpack_dual``
    """
    if type(tensor) is not Tensor:
        raise EmberTypeError(f"forward_ad.unpack_dual: expected a Tensor, got "
                             f"{type(tensor).__name__}")
    if _state.level is None:
        return UnpackedDualTensor(tensor, None)
    level = _level_of(level, "unpack_dual")
    tangent = _tangent(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_view(tensor), tangent)


def _view(t: Tensor) -> Tensor:
    """A new tensor viewing t's memory, with no tangent carried to it (autograd history
    kept; the reshape kernel itself, as ops.reshape hands back t for its own shape)."""
    _busy.on = True
    try:
        return dispatch.run(REGISTRY["reshape"], t, shape=tuple(t._data.shape))
    finally:
        _busy.on = False


# --- the hook: each op's tangent -------------------------------------------------------------

def _propagate(op, device, kernel, natives, attrs, inputs, result):
    if getattr(_busy, "on", False):
        return
    level = _state.level
    tangents = None
    for i, x in enumerate(inputs):
        if type(x) is Tensor and x._meta is not None:
            t = _tangent(x, level)
            if t is not None:
                if tangents is None:
                    tangents = {}
                tangents[i] = t
    if tangents is None:
        return
    if Tensor._capture is not None:
        # a graph capture (vmap tracing its sample, ember.compile) records kernels, but a
        # tangent made here hangs off the tensor, out of the graph: the capture gives the
        # graph up (vmap then runs per sample, compile eagerly), and the tangents stay right
        tracer = Tensor._capture.tracer()
        if tracer is not None:
            tracer.unsupported.append("forward_ad dual tensors carry tangents outside the "
                                      "recorded graph (use ember.func.jvp there)")
    if result is None:
        return _inplace(op, inputs, tangents, level)
    if result._dtype.category > FLOAT:
        # a complex result: its tangent would need the complex (Wirtinger) transposition,
        # not built yet: refused rather than dropped (a dropped tangent reads as zero)
        raise UnsupportedError(f"forward_ad: {op.name} gives a complex result; forward-mode AD "
                               "through complex values is not in ember yet; use reverse mode "
                               "(backward / ember.func.vjp) for complex functions")
    if result._dtype.category != FLOAT:
        return                      # integer and bool results have no tangent, as in torch
    if op.vjp is None:
        if op.decompose is None:
            return                  # not differentiable: no tangent
        # a fused kernel with no VJP of its own: its decomposition, with the tangents
        again = op.decompose(*inputs, **attrs)
        t = _tangent(again, level) if type(again) is Tensor else None
        if t is not None:
            result._set_meta(_KEY, (level, t))
        return
    _busy.on = True
    prev = dispatch.set_grad_enabled(True)
    try:
        t = _jvp(op, attrs, inputs, result, tangents)
    finally:
        dispatch.set_grad_enabled(prev)
        _busy.on = False
    result._set_meta(_KEY, (level, t))


def _plain(x):
    return wrap(x._data, x._device, x._dtype) if type(x) is Tensor else x


def _jvp(op, attrs, inputs, result, tangents):
    """J t of one op: the transpose of its VJP applied to the inputs' tangents."""
    from .. import ops
    u = ops.zeros_like(_plain(result)).requires_grad_(True)
    # the inputs as fresh leaves: those with a tangent require grad, as some rules compute
    # an input's gradient only where it does (pow's exponent)
    plain = [_plain(x) for x in inputs]
    for i in tangents:
        plain[i].requires_grad = True
    grads = op.vjp(u, _plain(result) if op.save_out else None, *plain, **attrs)
    if type(grads) is not tuple:
        grads = (grads,)
    outs, vs = [], []
    for i, t in tangents.items():
        g = grads[i] if i < len(grads) else None
        if g is not None and type(g) is not Tensor and callable(g):
            g = g()
        if type(g) is not Tensor or not g.requires_grad:
            continue                # this input's gradient does not depend on u: J t = 0
        if tuple(t.shape) != tuple(g.shape):        # the input was broadcast
            t = t.reshape((1,) * (g.ndim - t.ndim) + tuple(t.shape)).expand(*g.shape)
        if t._dtype is not g._dtype:
            t = t.to(g._dtype)
        outs.append(g)
        vs.append(t)
    if not outs:
        return ops.zeros_like(_plain(result))
    (jt,) = run_backward(outs, vs, retain_graph=False, create_graph=False, inputs=[u],
                         allow_unused=True, accumulate=False)
    return ops.zeros_like(_plain(result)) if jt is None else jt.detach()


def _inplace(op, inputs, tangents, level):
    """An in-place kernel wrote into inputs[0]: its new tangent, where it follows from the
    tangents alone (add_, sub_, assign, and mul_/div_ by a value without a tangent)."""
    target, other = inputs[0], inputs[1] if len(inputs) > 1 else None
    tt, to = tangents.get(0), tangents.get(1)
    if target._get_meta("base") is not None or target._get_meta("views"):
        raise UnsupportedError(
            f"forward_ad: the in-place op {op.name} writes into a view of a tensor (or a "
            "tensor with views) while dual tensors are involved; ember does not carry the "
            "tangent through the other tensors sharing that memory: write it out of place "
            "(ember.where, index_put, cat, or y = x.clone() first)")
    _busy.on = True
    try:
        if op.name == "assign":
            new = None if to is None else to.expand(*target.shape).clone()
        elif op.name in ("add_", "sub_"):
            if to is None:
                new = tt
            else:
                to = to if op.name == "add_" else -to
                new = to.expand(*target.shape).clone() if tt is None else tt + to
        elif op.name in ("mul_", "div_") and to is None:
            new = tt * other if op.name == "mul_" else tt / other
        else:
            raise UnsupportedError(
                f"forward_ad: the in-place op {op.name} on a dual tensor (its tangent would "
                "need the value it overwrote); write it out of place (x = x * y instead of "
                "x *= y)")
    finally:
        _busy.on = False
    if new is None:
        m = target._meta
        if m is not None:
            m.pop(_KEY, None)
    else:
        target._set_meta(_KEY, (level, new))
