"""Gradient checks by random projections (PyTorch's gradcheck fast_mode).

For random directions u (over the inputs) and v (over the outputs) the suite compares
v . (J u) from autograd with the central difference of v . f(x + eps u): two forward
evaluations and one backward per probe instead of a full Jacobian (2 evaluations per input
element and one backward per output element), which on a device with a per-kernel launch
cost is the difference between seconds and minutes per row.  The second-derivative check
is the same test applied to x -> d(v . f(x))/dx, differentiated with create_graph=True.
A wrong gradient passes a random projection only with probability zero.
"""
from __future__ import annotations

import functools

import numpy as np

from ._seeds import seed_of


def _host(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def _dot(tensors, arrays) -> float:
    return float(sum(np.sum(_host(t) * a) for t, a in zip(tensors, arrays)))


def _first(fn, diff):
    """x -> (d(v . fn(x))/dx for x in diff), recording a graph of the gradient."""
    from ember import autograd

    def grads(*xs, v):
        outs = fn(*xs)
        got = autograd.grad(outs, [xs[i] for i in diff], v, create_graph=True,
                            allow_unused=True, materialize_grads=True)
        return tuple(got)
    return grads


def projected(fn, inputs, *, what: str, eps: float, atol: float, rtol: float,
              order: int = 1, probes: int = 2, reference=None) -> None:
    """Check first (order=1) or second (order=2) derivatives of fn at inputs.

    `reference`: the same inputs elsewhere (float64 on the CPU) where the central
    differences run, for a device without float64 whose own would be too coarse."""
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]
    if not diff:
        return
    reference = inputs if reference is None else reference
    rng = np.random.default_rng(seed_of(what, order))
    for probe in range(probes):
        f, f_ref = fn, fn
        if order == 2:
            v = [rng.standard_normal(tuple(o.shape)) for o in fn(*inputs)]
            f = functools.partial(_first(fn, diff), v=tuple(map(_const, v, fn(*inputs))))
            f_ref = functools.partial(_first(fn, diff), v=tuple(map(_const, v,
                                                                    fn(*reference))))
        outs = list(f(*inputs))
        w = [rng.standard_normal(tuple(o.shape)) for o in outs]
        u = {i: rng.standard_normal(tuple(inputs[i].shape)) for i in diff}
        analytical = _analytical(outs, [inputs[i] for i in diff], w, [u[i] for i in diff])
        numerical = (_value(f_ref, reference, u, eps, w) -
                     _value(f_ref, reference, u, -eps, w)) / (2 * eps)
        if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
            kind = "gradient" if order == 1 else "second derivative"
            raise AssertionError(
                f"{what}: the {kind} disagrees with central differences along a random "
                f"direction (probe {probe}): autograd gives {analytical!r}, differences "
                f"{numerical!r} (atol={atol}, rtol={rtol})")


def _const(a: np.ndarray, like):
    import ember
    return ember.tensor(np.asarray(a, like.dtype.np), device=like.device)


def _analytical(outs, xs, w, u) -> float:
    """v . J u by autograd (0 where no output depends on the inputs)."""
    from ember import autograd
    live = [(o, a) for o, a in zip(outs, w) if o.requires_grad]
    if not live:
        return 0.0
    grads = autograd.grad([o for o, _ in live], xs, [_const(a, o) for o, a in live],
                          allow_unused=True, materialize_grads=True)
    return sum(float(np.sum(_host(g) * d)) for g, d in zip(grads, u))


def _value(f, inputs, u, step, w) -> float:
    """w . f(x + step * u)."""
    import ember
    moved = [ember.tensor(np.asarray(_host(x) + step * u[i], x.dtype.np), device=x.device,
                          requires_grad=True) if i in u else x for i, x in enumerate(inputs)]
    return _dot(f(*moved), w)
