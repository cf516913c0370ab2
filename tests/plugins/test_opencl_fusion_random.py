"""Random programs of elementwise ops, in-place writes, views, setitem, reductions and
dropped or held intermediates, run on the CPU and on opencl:0: every value must agree.

Deferred elementwise ops (backends/opencl/fusion.py) reorder work; these programs mix in
the writes and aliasing that could make a deferred read see the wrong memory. Each program
runs twice on the device, so the second run meets its tree shapes again and fuses them."""
from __future__ import annotations

import ember
import numpy as np
import pytest

SHAPES = [(4, 6), (6,), (4, 1), (2, 6)]
BIG = 32        # scales the trailing dim: 4 x 192 = 768, 4 x 1536 ... for the vector kernels


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


def make_program(seed: int, steps: int = 40) -> list:
    """Instructions over variables named by number, chosen with shapes in mind."""
    rng = np.random.default_rng(seed)
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
                prog.append(("setitem", a, b, int(rng.integers(3))))
        elif kind == "view":
            a = pick(lambda s: len(s) == 2 and s[0] == 4)
            if a is not None:
                prog.append(("view", out, a, int(rng.integers(2))))
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


def run(prog, device: str) -> list:
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
            _, a, b, start = ins
            env[a][start:start + 2] = env[b] * -1.5
        elif op == "view":
            _, k, a, start = ins
            env[k] = env[a][start::2]                # shares env[a]'s memory
        elif op == "reduce":
            _, k, a, axis = ins
            env[k] = env[a].sum(axis, keepdim=axis == 1)
        elif op == "drop":
            del env[ins[1]]
        elif op == "check":          # a copy: on the CPU .numpy() shares the memory
            seen.append(env[ins[1]].numpy().copy())
    return seen + [env[k].numpy() for k in sorted(env)]


@pytest.mark.parametrize("seed,scale", [(s, 1) for s in range(24)] +
                         [(s, BIG * 16) for s in range(24, 30)])
def test_random_programs_agree_with_the_cpu(opencl_device, seed, scale):
    prog = scaled(make_program(seed), scale)
    want = run(prog, "cpu")
    for attempt in ("first meeting", "fused"):
        got = run(prog, opencl_device)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            # sums over the scaled dims round differently (pairwise vs chunked order)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale ** 0.5,
                                       err_msg=f"seed {seed}, value {i}, {attempt} run")
