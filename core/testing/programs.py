"""Random programs run on a device and on the CPU backend: every value must agree.

A program mixes elementwise ops, Python scalars, in-place writes, copy_, setitem, views
(strided and negative-step), reductions, and intermediates that are held or dropped.  It
catches what op-by-op rows cannot: a deferred or fused backend (OpenCL) that reorders work
so a read sees the wrong memory, a write that misses a view, a dropped result that is still
needed.  Each program runs twice on the device, so a backend that builds fused kernels the
second time it meets a shape (OpenCL) runs both forms.
"""
from __future__ import annotations

import numpy as np

from ._seeds import seed_of

SHAPES = [(4, 6), (6,), (4, 1), (2, 6)]
SEEDS = 24                       # programs at the small shapes
LARGE = [(s, 512) for s in range(SEEDS, SEEDS + 6)]   # trailing dims x512: vector kernels


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def make_program(seed: int, steps: int = 40) -> list:
    """Instructions over variables named by number, chosen with shapes in mind."""
    rng = np.random.default_rng(seed_of("program", seed))
    shapes: dict = {}
    prog = []

    def pick(pred=lambda s: True):
        names = [k for k, s in shapes.items() if pred(s)]
        return int(rng.choice(names)) if names else None

    def new(shape):
        k = len(prog) + 1000 * seed
        prog.append(("new", k, shape, int(rng.integers(1 << 30))))
        shapes[k] = shape
        return k

    for shape in SHAPES[:3]:
        new(shape)
    for i in range(steps):
        kind = rng.choice(["new", "bin", "scalar", "unary", "inplace", "copy", "setitem",
                           "view", "reduce", "drop", "check"],
                          p=[.05, .2, .1, .1, .15, .05, .08, .07, .07, .08, .05])
        out = 10_000 + 1000 * seed + i
        if kind == "new":
            new(SHAPES[int(rng.integers(len(SHAPES)))])
        elif kind == "bin":
            a = pick()
            b = pick(lambda s, t=shapes[a]: _broadcast(s, t) is not None)
            op = str(rng.choice(["add", "sub", "mul", "maximum"]))
            prog.append(("bin", out, op, a, b))
            shapes[out] = _broadcast(shapes[a], shapes[b])
        elif kind == "scalar":
            a = pick()
            prog.append(("scalar", out, a, float(rng.uniform(-2, 2)), float(rng.uniform(-1, 1))))
            shapes[out] = shapes[a]
        elif kind == "unary":
            a = pick()
            prog.append(("unary", out, str(rng.choice(["tanh", "neg", "abs", "sigmoid"])), a))
            shapes[out] = shapes[a]
        elif kind == "inplace":
            a = pick()
            b = pick(lambda s, t=shapes[a]: _broadcast(s, t) == t)
            prog.append(("inplace", str(rng.choice(["add_", "sub_", "mul_"])), a, b))
        elif kind == "copy":
            a = pick()
            b = pick(lambda s, t=shapes[a]: _broadcast(s, t) == t)
            prog.append(("copy", a, b))
        elif kind == "setitem":
            a = pick(lambda s: len(s) == 2 and s[0] == 4)
            b = pick(lambda s, t=(2, shapes[a][1]): _broadcast(s, t) == t
                     ) if a is not None else None
            if a is not None and b is not None:
                prog.append(("setitem", a, b, int(rng.integers(3)), bool(rng.integers(2))))
        elif kind == "view":
            a = pick(lambda s: len(s) == 2 and s[0] == 4)
            if a is not None:
                prog.append(("view", out, a, int(rng.integers(4))))
                shapes[out] = (2, shapes[a][1])
        elif kind == "reduce":
            a = pick(lambda s: s == (4, 6))
            if a is not None:
                axis = int(rng.integers(2))
                prog.append(("reduce", out, a, axis))
                shapes[out] = (6,) if axis == 0 else (4, 1)
        elif kind == "drop" and len(shapes) > 3:
            a = pick()
            prog.append(("drop", a))
            del shapes[a]
        elif kind == "check":
            prog.append(("check", pick()))
    return prog


def scaled(prog, k: int) -> list:
    """The same program with every trailing dim of a created array multiplied by k."""
    return [("new", i[1], i[2][:-1] + (i[2][-1] * k if i[2][-1] != 1 else 1,), i[3])
            if i[0] == "new" else i for i in prog]


# the view instruction's four views of a (4, n) array, each (2, n)
_VIEWS = (lambda t: t[0::2], lambda t: t[1::2], lambda t: t[::-2], lambda t: t[2::-2])


def run(prog, device: str) -> list:
    """Every checked value and every live variable at the end, as host arrays."""
    import ember
    env: dict = {}
    seen = []
    for ins in prog:
        op = ins[0]
        if op == "new":
            _, k, shape, seed = ins
            host = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
            env[k] = ember.tensor(host, device=device)
        elif op == "bin":
            _, k, name, a, b = ins
            env[k] = getattr(ember, name)(env[a], env[b])
        elif op == "scalar":
            _, k, a, s, t = ins
            env[k] = env[a] * s + t
        elif op == "unary":
            _, k, name, a = ins
            env[k] = getattr(ember, name)(env[a])
        elif op == "inplace":
            _, name, a, b = ins
            getattr(env[a], name)(env[b] * 0.5)      # the source is a pending tree
        elif op == "copy":
            _, a, b = ins
            env[a].copy_(env[b] + 0.25)
        elif op == "setitem":
            _, a, b, start, reverse = ins
            rows = slice(start + 1, start - 1 if start else None, -1) if reverse else \
                slice(start, start + 2)
            env[a][rows] = env[b] * -1.5
        elif op == "view":
            _, k, a, which = ins
            env[k] = _VIEWS[which](env[a])           # shares env[a]'s memory
        elif op == "reduce":
            _, k, a, axis = ins
            env[k] = env[a].sum(axis, keepdim=axis == 1)
        elif op == "drop":
            del env[ins[1]]
        elif op == "check":          # a copy: on the CPU .numpy() shares the memory
            seen.append(env[ins[1]].numpy().copy())
    return seen + [env[k].numpy() for k in sorted(env)]


def check_program(seed: int, scale: int, device: str) -> None:
    """Program `seed` (trailing dims times `scale`) on device against the CPU backend."""
    prog = scaled(make_program(seed), scale)
    want = run(prog, "cpu")
    for attempt in ("first", "second"):
        got = run(prog, device)
        assert len(got) == len(want), f"program {seed}: {len(got)} values, CPU {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            # sums over the scaled dims round differently (pairwise vs chunked order)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale ** 0.5,
                                       err_msg=f"program {seed} x{scale}, value {i}, "
                                               f"{attempt} run on {device}")


PROGRAMS = [(s, 1) for s in range(SEEDS)] + LARGE
