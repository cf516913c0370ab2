"""Activation checkpointing (torch.utils.checkpoint): keep no intermediate graph in the
forward, recompute it in the backward.

Two implementations, as torch's two modes:
- use_reentrant=False (torch's recommended one): the function runs with grad on under
  saved_tensors_hooks whose pack hook keeps only a position; the first unpack in the
  backward runs the function again (same inputs, same random stream) and hands back the
  tensors that run saved, position for position.  The graph is the real one: the output
  requires grad as it would without checkpointing (parameters inside count), any outputs
  are allowed, and determinism_check="default" compares each recomputed tensor's shape,
  dtype and device with the forward's (CheckpointError, as torch's).
- use_reentrant=True: an autograd Function whose forward runs the function with grad off
  and whose backward replays it and backpropagates through the replay; the output requires
  grad only when a tensor input does (torch's rule: it warns when none does, and then no
  gradient reaches the parameters inside).
"""
from __future__ import annotations

import warnings

from .. import ops
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..errors import AutogradError, EmberTypeError, EmberValueError, NotInEmberError
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]

_DETERMINISM = ("default", "none")


class CheckpointError(AutogradError):
    """The backward's recomputation saved other tensors than the forward did (a function
    whose shapes or ops depend on something that changed between the two runs).

    PyTorch
    -------
    ``torch.utils.checkpoint.CheckpointError``
    """


class _Checkpoint(Function):
    """use_reentrant=True: forward runs the function with grad off (so its intermediates
    are freed); backward replays it with grad on from the same inputs and random stream,
    and backpropagates through the replay.  The replay's backward accumulates into every
    leaf the function uses (module parameters included) and hands the inputs' gradients on
    to the graph outside."""

    @staticmethod
    def forward(ctx, run, preserve_rng_state, kwargs, *args):
        ctx.run, ctx.kwargs = run, kwargs
        ctx.rng = ops.get_rng_state() if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if type(a) is Tensor]
        ctx.args = [None if type(a) is Tensor else a for a in args]
        ctx.wants = [type(a) is Tensor and a.requires_grad for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_at])
        out = run(*args, **kwargs)
        ctx.single = not isinstance(out, tuple)
        return out

    @staticmethod
    def backward(ctx, *grads):
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(ctx.wants[i])
        with _replaying(ctx.rng):
            with enable_grad():
                out = ctx.run(*args, **ctx.kwargs)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if type(o) is Tensor and o.requires_grad and g is not None]
        if pairs:
            from ..autograd import backward
            backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None) + tuple(
            a.grad if type(a) is Tensor and a.requires_grad else None for a in args)


class _replaying:
    """The random stream as the forward found it, for the recomputation; afterwards the
    stream goes on from where the backward found it."""

    def __init__(self, rng) -> None:
        self.rng = rng

    def __enter__(self):
        if self.rng is not None:
            self.now = ops.get_rng_state()
            ops.set_rng_state(self.rng)

    def __exit__(self, *exc) -> None:
        if self.rng is not None:
            ops.set_rng_state(self.now)


def _meta(t: Tensor) -> dict:
    return {"shape": tuple(t.shape), "dtype": t.dtype, "device": t.device}


class _Frame:
    """One non-reentrant checkpoint call: what its forward saved (positions and metadata)
    and, once the backward first asks, what the recomputation saved in their place."""

    def __init__(self, function, args, kwargs, rng, check: bool) -> None:
        self.function, self.kwargs, self.rng, self.check = function, kwargs, rng, check
        self.args = [a.detach().requires_grad_(a.requires_grad) if type(a) is Tensor else a
                     for a in args]
        self.meta: list = []
        self.recomputed: list | None = None

    def pack(self, t: Tensor):
        self.meta.append(_meta(t))
        return self, len(self.meta) - 1

    @staticmethod
    def unpack(handle) -> Tensor:
        frame, at = handle
        if frame.recomputed is None:
            frame.recompute()
        return frame.recomputed[at]

    def recompute(self) -> None:
        from ..autograd.graph import saved_tensors_hooks
        saved: list = []

        def keep(t):
            saved.append(t.detach())
            return None

        with _replaying(self.rng), enable_grad(), saved_tensors_hooks(keep, lambda _: None):
            self.function(*self.args, **self.kwargs)
        if self.check:
            self._compare(saved)
        self.recomputed = saved

    def _compare(self, saved: list) -> None:
        if len(saved) != len(self.meta):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during "
                f"forward: {len(self.meta)}\nNumber of tensors saved during recomputation: "
                f"{len(saved)}.\nThe checkpointed function must run the same ops on the "
                "same shapes in both runs; pass determinism_check=\"none\" to skip this "
                "check")
        wrong = [(i, m, _meta(t)) for i, (m, t) in enumerate(zip(self.meta, saved))
                 if m != _meta(t)]
        if wrong:
            lines = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed "
                            f"metadata: {r}\n" for i, m, r in wrong)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{lines}The checkpointed "
                "function must run the same ops on the same shapes in both runs; pass "
                "determinism_check=\"none\" to skip this check")


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs):
    """function(*args, **kwargs), keeping none of its intermediate results for backward:
    the backward recomputes them (replaying the same random numbers), so gradients equal
    those without checkpointing.  use_reentrant picks torch's implementation (see the
    module doc; leaving it out warns, as torch does, and takes the reentrant one).
    determinism_check="default" (use_reentrant=False) checks that the recomputation saved
    tensors of the forward's shapes, dtypes and devices; "none" skips it.

    PyTorch
    -------
    ``torch.utils.checkpoint.checkpoint``
    """
    if use_reentrant is None:
        warnings.warn("checkpoint: please pass use_reentrant=True or use_reentrant=False "
                      "explicitly, as torch.utils.checkpoint asks", stacklevel=2)
        use_reentrant = True
    if determinism_check not in _DETERMINISM:
        raise EmberValueError(f"determinism_check should be one of {list(_DETERMINISM)}, "
                              f"but got {determinism_check}")
    if use_reentrant and (context_fn is not None or debug):
        raise EmberValueError("Passing `context_fn` or `debug` is only supported when "
                              "use_reentrant=False.")
    if context_fn is not None:
        raise NotInEmberError("checkpoint: context_fn is not supported by ember; leave it "
                              "out")
    if debug:
        raise NotInEmberError("checkpoint(debug=True): ember does not record the operator "
                              "traces torch adds to a determinism error; leave debug out "
                              "(the error names each tensor whose metadata differs)")
    if not callable(function):
        raise EmberTypeError(f"checkpoint: expected a callable function, got "
                             f"{type(function).__name__}")
    if not is_grad_enabled():
        return function(*args, **kwargs)
    rng = ops.get_rng_state() if preserve_rng_state else None
    if use_reentrant:
        if not any(type(a) is Tensor and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be "
                          "None", stacklevel=2)
        return _Checkpoint.apply(function, preserve_rng_state, kwargs, *args)
    from ..autograd.graph import saved_tensors_hooks
    frame = _Frame(function, args, kwargs, rng, determinism_check == "default")
    with saved_tensors_hooks(frame.pack, _Frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or a list of modules/functions) in `segments` checkpointed chunks;
    the last chunk runs normally (as torch)."""
    if use_reentrant is None:
        warnings.warn("checkpoint_sequential: please pass use_reentrant=True or "
                      "use_reentrant=False explicitly, as torch.utils.checkpoint asks",
                      stacklevel=2)
        use_reentrant = True
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
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           **kwargs)
    return run(end + 1, len(functions) - 1)(input)
