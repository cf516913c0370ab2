"""Activation checkpointing (torch.utils.checkpoint): keep no intermediate graph in the
forward, recompute it in the backward."""
from __future__ import annotations

import warnings

from .. import ops
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..errors import EmberTypeError, EmberValueError
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    """forward runs the function with grad off (so its intermediates are freed); backward
    replays it with grad on from the same inputs and random stream, and backpropagates
    through the replay.  The replay's backward accumulates into every leaf the function
    uses (module parameters included, as without checkpointing) and hands the inputs'
    gradients on to the graph outside."""

    @staticmethod
    def forward(ctx, run, preserve_rng_state, kwargs, anchor, *args):
        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng = ops.get_rng_state() if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if type(a) is Tensor]
        ctx.args = [None if type(a) is Tensor else a for a in args]
        ctx.wants = [type(a) is Tensor and a.requires_grad for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
        out = run(*args, **kwargs)
        if type(out) is Tensor:
            ctx.single = True
            return out
        if isinstance(out, (tuple, list)) and all(type(o) is Tensor for o in out):
            ctx.single = False
            return tuple(out)
        raise EmberTypeError(f"checkpoint: the checkpointed function must return a Tensor or "
                             f"a tuple of Tensors, got {type(out).__name__}")

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(ctx.wants[i])
        if ctx.rng is not None:
            # the replay draws the forward's random numbers; the stream then goes on from
            # where the backward found it
            now = ops.get_rng_state()
            ops.set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run(*args, **ctx.kwargs)
        finally:
            if ctx.rng is not None:
                ops.set_rng_state(now)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if type(o) is Tensor and o.requires_grad and g is not None]
        if pairs:
            from ..autograd import backward
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, None) + tuple(
            a.grad if type(a) is Tensor and a.requires_grad else None for a in args)


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs):
    """function(*args, **kwargs), keeping none of its intermediate results for backward:
    the backward recomputes them (replaying the same random numbers), so gradients equal
    those without checkpointing.  use_reentrant is accepted with either value (one
    implementation serves both); leaving it out warns, as torch does."""
    if use_reentrant is None:
        warnings.warn("checkpoint: please pass use_reentrant=True or use_reentrant=False "
                      "explicitly, as torch.utils.checkpoint asks", stacklevel=2)
    if context_fn is not None:
        raise EmberValueError("checkpoint: context_fn is not supported by ember; leave it "
                              "out")
    if not callable(function):
        raise EmberTypeError(f"checkpoint: expected a callable function, got "
                             f"{type(function).__name__}")
    if not is_grad_enabled():
        return function(*args, **kwargs)
    # a 0-d leaf that requires grad records the node even when no input does (the
    # function's parameters still need their gradients, as in torch's non-reentrant mode)
    anchor = ops.zeros((), requires_grad=True)
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, anchor, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or a list of modules/functions) in `segments` checkpointed chunks;
    the last chunk runs normally (as torch)."""
    if use_reentrant is None:
        warnings.warn("checkpoint_sequential: please pass use_reentrant=True or "
                      "use_reentrant=False explicitly, as torch.utils.checkpoint asks",
                      stacklevel=2)
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise EmberValueError(f"checkpoint_sequential: segments must be a positive int, got "
                              f"{segments!r}")
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=bool(use_reentrant),
                           **kwargs)
    return run(end + 1, len(functions) - 1)(input)
