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

from .checks import seed_of


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
              order: int = 1, probes: int = 2) -> None:
    """Check first (order=1) or second (order=2) derivatives of fn at inputs."""
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]
    if not diff:
        return
    rng = np.random.default_rng(seed_of(what, order))
    for probe in range(probes):
        f = fn
        if order == 2:
            v = tuple(_const(rng.standard_normal(tuple(o.shape)), o) for o in fn(*inputs))
            f = functools.partial(_first(fn, diff), v=v)
        analytical, numerical = _probe(f, inputs, diff, rng, eps)
        if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
            kind = "gradient" if order == 1 else "second derivative"
            raise AssertionError(
                f"{what}: the {kind} disagrees with central differences along a random "
                f"direction (probe {probe}): autograd gives {analytical!r}, differences "
                f"{numerical!r} (atol={atol}, rtol={rtol})")


def _const(a: np.ndarray, like):
    import ember
    return ember.tensor(np.asarray(a, like.dtype.np), device=like.device)


def _probe(f, inputs, diff, rng, eps):
    """(v . J u by autograd, the same by central differences) for random u and v."""
    import ember
    from ember import autograd
    outs = list(f(*inputs))
    w = [rng.standard_normal(tuple(o.shape)) for o in outs]
    u = {i: rng.standard_normal(tuple(inputs[i].shape)) for i in diff}
    live = [(o, a) for o, a in zip(outs, w) if o.requires_grad]
    analytical = 0.0                   # none requires grad: it does not depend on the inputs
    if live:
        grads = autograd.grad([o for o, _ in live], [inputs[i] for i in diff],
                              [_const(a, o) for o, a in live], allow_unused=True,
                              materialize_grads=True)
        analytical = sum(float(np.sum(_host(g) * u[i])) for g, i in zip(grads, diff))
    values = []
    for sign in (1, -1):
        moved = [ember.tensor(np.asarray(_host(x) + sign * eps * u[i], x.dtype.np),
                              device=x.device, requires_grad=True) if i in u else x
                 for i, x in enumerate(inputs)]
        values.append(_dot(f(*moved), w))
    return analytical, (values[0] - values[1]) / (2 * eps)
