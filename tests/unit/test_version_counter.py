"""The version counter a tensor shares with its views and detached aliases, against PyTorch.

torch keeps one version counter per storage family: an in-place write through a view, the
view's base, another view of that base or x.detach() is seen by every saved tensor of the
family, so backward raises instead of using changed values.  These programs are generated:
each builds a small graph, takes views and detached aliases of its tensors, saves some of
them in ops, writes one member in place, and runs backward; ember must raise where torch
raises and give torch's gradients where torch does not (a missed check is a silent wrong
gradient, an extra one a refusal torch does not make).
"""
from __future__ import annotations

import random

import ember
import numpy as np
import pytest
from ember.errors import AutogradError

torch = pytest.importorskip("torch")


def _devices():
    from ember.testing import devices_under_test
    return [pytest.param(d, marks=[pytest.mark.skip(reason=why)] if why else [], id=d)
            for d, why in devices_under_test()]


def _seeds(n: int, device: str):
    """Every seed on the CPU; elsewhere (each op builds its programs) one in 10."""
    return range(n) if device == "cpu" else range(0, n, 10)

# aliases of a (4, 6) tensor: every one a view (or detached alias) of the same storage
_ALIASES = [
    ("rows", lambda t: t[1:3]),
    ("col", lambda t: t[:, 2]),
    ("view", lambda t: t.view(2, 12)),
    ("transpose", lambda t: t.t()),
    ("row of view", lambda t: t.view(8, 3)[2]),
    ("unsqueeze", lambda t: t.unsqueeze(0)),
    ("detach", lambda t: t.detach()),
    ("detach rows", lambda t: t.detach()[0:2]),
    ("rows detach", lambda t: t[2:4].detach()),
    ("itself", lambda t: t),
]
# ops on an alias, some reading their input in the gradient, some only their output
_OPS = [
    ("square", lambda a: a * a),               # reads a
    ("exp", lambda a: a.exp()),                # reads its output only
    ("sigmoid", lambda a: a.sigmoid()),        # output only
    ("scale", lambda a: a * 0.5),              # reads nothing
    ("log", lambda a: (a.abs() + 1).log()),    # reads abs's output + 1 (a fresh tensor)
    ("tanh", lambda a: a.tanh()),              # output only
]
# writes into an alias (with grad mode on: into non-leaf members only; detached ones
# under no_grad as code does)
_WRITES = [
    ("add_", lambda a: a.add_(1.0)),
    ("mul_", lambda a: a.mul_(2.0)),
    ("zero_", lambda a: a.zero_()),
]


def _program(seed: int):
    rng = random.Random(seed)
    saves = [(rng.choice(_ALIASES), rng.choice(_OPS)) for _ in range(rng.randint(1, 3))]
    write = (rng.choice(_ALIASES), rng.choice(_WRITES))
    mid = rng.choice(["mul", "exp", "plain"])
    return saves, write, mid


def _run(lib, seed: int, device: str = "cpu"):
    saves, (alias, write), mid = _program(seed)
    x0 = np.random.default_rng(seed).standard_normal((4, 6)).astype(np.float32)
    x = lib.tensor(x0, requires_grad=True, device=device)
    base = {"mul": lambda: x * 1.5, "exp": lambda: x.exp(), "plain": lambda: x + 0.0}[mid]()
    outs = [op(make(base)) for (_, make), (_, op) in saves]
    target = alias[1](base)
    if alias[0].startswith("detach") or alias[0] == "rows detach":
        write[1](target)
    else:
        with lib.no_grad():
            write[1](target)
    total = sum(o.sum() for o in outs)
    try:
        total.backward()
    except (RuntimeError, AutogradError) as e:
        return "raise", str(e)
    return "ok", x.grad.detach().cpu().numpy().copy()


@pytest.mark.parametrize("device", _devices())
def test_writes_through_any_alias_are_seen_as_torch_sees_them(device):
    for seed in _seeds(300, device):
        _compare_early(seed, device)


def _compare_early(seed, device):
    want, t_detail = _run(torch, seed)
    got, e_detail = _run(ember, seed, device)
    saves, (alias, write), mid = _program(seed)
    what = (f"base={mid}, saved {[(a[0], o[0]) for a, o in saves]}, then {write[0]} into "
            f"{alias[0]}")
    assert got == want, f"{what}: torch {want} ({str(t_detail)[:80]}), ember {got} " \
                        f"({str(e_detail)[:80]})"
    if want == "ok":
        np.testing.assert_allclose(e_detail, t_detail, rtol=1e-5, atol=1e-6, err_msg=what)
    else:                  # the same refusal: the in-place check, or nothing to differentiate
        for phrase in ("modified by an inplace operation", "does not require grad"):
            assert (phrase in t_detail) == (phrase in e_detail), (what, t_detail, e_detail)


def test_a_detached_alias_does_not_keep_the_graph_alive():
    """The detached alias names its root weakly: a loss kept for logging (loss.detach())
    lets the step's graph go."""
    import gc
    import weakref
    x = ember.ones(3, requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    kept = y.sum().detach()
    del y
    gc.collect()
    assert node() is None
    kept.add_(1)                                  # its root is gone: a plain write
    assert kept.item() == pytest.approx(3 * np.exp(2) + 1, rel=1e-6)


# views taken BEFORE an in-place op gives their base a new history, used after it: torch
# regenerates such a view's grad_fn from its base's new history; a view that kept the old
# one would send its gradient past the write (a silent wrong gradient)
_EARLY_VIEWS = [a for a in _ALIASES if not a[0].startswith(("detach", "rows detach"))]
_GRAD_WRITES = [
    ("mul_ w", lambda t, w: t.mul_(w[: t.shape[-1]] if t.dim() else w[0])),
    ("add_ w", lambda t, w: t.add_(w[0] * 2)),
    ("setitem w", lambda t, w: t.__setitem__(0, w[0] * 3)),
    ("exp_", lambda t, w: t.exp_()),
]


def _run_late(lib, seed: int, device: str = "cpu"):
    rng = random.Random(seed)
    uses = [(rng.choice(_EARLY_VIEWS), rng.choice(_OPS)) for _ in range(rng.randint(1, 3))]
    target = rng.choice(_EARLY_VIEWS)
    write = rng.choice(_GRAD_WRITES)
    what = f"views {[(a[0], o[0]) for a, o in uses]}, then {write[0]} into {target[0]}"
    r = np.random.default_rng(seed)
    x = lib.tensor(r.standard_normal((4, 6)).astype(np.float32), requires_grad=True,
                   device=device)
    w = lib.tensor(r.standard_normal(24).astype(np.float32), requires_grad=True,
                   device=device)
    base = x * 1.5
    early = [make(base) for (_, make), _ in uses]
    write[1](target[1](base), w)
    total = sum(op(v).sum() for v, (_, op) in zip(early, (o for _, o in uses)))
    try:
        total.backward()
    except (RuntimeError, AutogradError) as e:
        return what, "raise", str(e)
    return what, "ok", (x.grad.detach().cpu().numpy().copy(),
                        None if w.grad is None else w.grad.detach().cpu().numpy().copy())


@pytest.mark.parametrize("device", _devices())
def test_views_taken_before_a_write_carry_the_new_history(device):
    for seed in _seeds(200, device):
        _compare_late(seed, device)


def _compare_late(seed, device):
    what, want, t_detail = _run_late(torch, seed)
    _, got, e_detail = _run_late(ember, seed, device)
    assert got == want, f"{what}: torch {want} ({str(t_detail)[:90]}), ember {got} " \
                        f"({str(e_detail)[:90]})"
    if want == "ok":
        for t, e in zip(t_detail, e_detail):
            assert (t is None) == (e is None), what
            if t is not None:
                np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5, err_msg=what)


def test_swapaxes_and_swapdims_in_place_as_torch():
    for name in ("swapaxes_", "swapdims_"):
        t = torch.arange(6.0).reshape(2, 3)
        e = ember.arange(6.0).reshape(2, 3)
        assert getattr(e, name)(0, 1) is e
        getattr(t, name)(0, 1)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
