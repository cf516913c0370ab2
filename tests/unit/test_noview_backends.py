"""Backends without (full) views: a NumPy copier (`views = "none"`), a backend over immutable
arrays boxed for `assign` (`views = "none"`, as one over JAX would be) and one whose
negative-step slices copy (`views = "positive-steps"`) pass every view rule, and every
random chain of movement ops with a write at its end ends as on the CPU backend (NumPy's
real views): a reshape of a non-contiguous view is new memory, a write into a part of an
expanded view that does not overlap itself writes the base.
"""
from __future__ import annotations

import random

import ember
import numpy as np
import pytest
from ember.backends import array_api
from ember.testing import views
from noview_backends import CopyingBackend, Frozen, FrozenBackend, StepsBackend, installed

BACKENDS = {"copier": CopyingBackend, "frozen": FrozenBackend, "stepper": StepsBackend}


@pytest.fixture(params=sorted(BACKENDS))
def device(request):
    with installed(BACKENDS[request.param]()) as dev:
        yield dev


@pytest.mark.parametrize("rule", views.RULES, ids=lambda r: r.name)
def test_every_view_rule_passes(device, rule):
    rule.fn(device)


def test_the_reshape_of_a_transpose_is_new_memory(device):
    """The issue's first case: t.T.reshape(24) wrote back into t."""
    t = ember.tensor(np.arange(24.0, dtype=np.float32).reshape(4, 6), device=device)
    r = t.T.reshape(24)
    r[:] = -1.0
    assert t.numpy().tolist() == np.arange(24.0).reshape(4, 6).tolist()
    t += 1
    assert r.numpy().tolist() == [-1.0] * 24
    # a reshape strides can express stays a view, both ways
    v = t[1:3].reshape(12)
    v[0] = 100.0
    t[2, 5] = 200.0
    assert t.numpy()[1, 0] == 100.0 and v.numpy()[-1] == 200.0


def test_writing_a_row_of_an_expanded_view_writes_the_base(device):
    """The issue's second case: x.expand(2, 3)[1] = v raised on any expand in a chain."""
    x = ember.zeros(1, 3, device=device)
    e = x.expand(2, 3)
    e[1] = ember.arange(3.0, device=device)
    assert x.numpy().tolist() == [[0.0, 1.0, 2.0]]
    assert e.numpy().tolist() == [[0.0, 1.0, 2.0]] * 2          # the view sees it too
    with pytest.raises(ember.EmberError, match="expanded view"):
        e[:, 0] = 5.0                                            # two elements, one memory
    assert x.numpy().tolist() == [[0.0, 1.0, 2.0]]


# --- random chains of movement ops, written through, against the CPU backend -------------

def _factors(n, rng):
    out = []
    while n > 1:
        d = rng.choice([d for d in range(2, n + 1) if n % d == 0])
        out.append(d)
        n //= d
    rng.shuffle(out)
    if rng.random() < 0.3:
        out.insert(rng.randint(0, len(out)), 1)
    return tuple(out) or (1,)


def _program(seed):
    """A base shape and up to 5 steps: slices (negative steps too), permutes, reshapes,
    unsqueezes and expands of size-1 dims."""
    rng = random.Random(seed)
    shape = (rng.choice([2, 3, 4]), rng.choice([2, 4, 6]), rng.choice([1, 2, 3]))
    cur, steps = shape, []
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice(["slice", "permute", "reshape", "reshape", "expand", "unsqueeze"])
        if kind == "slice":
            index = tuple(slice(rng.randint(0, n - 1), None, step) if step > 0 else
                          slice(None, None, step)
                          for n, step in ((n, rng.choice([1, 1, 2, -1, -2])) for n in cur))
            cur = tuple(len(range(*s.indices(n))) for s, n in zip(index, cur))
            steps.append((kind, index))
        elif kind == "permute":
            dims = list(range(len(cur)))
            rng.shuffle(dims)
            cur = tuple(cur[d] for d in dims)
            steps.append((kind, tuple(dims)))
        elif kind == "reshape":
            cur = _factors(int(np.prod(cur)), rng)
            steps.append((kind, cur))
        elif kind == "unsqueeze":
            d = rng.randint(0, len(cur))
            cur = cur[:d] + (1,) + cur[d:]
            steps.append((kind, d))
        elif 1 in cur:
            cur = tuple(rng.choice([1, 2, 3]) if n == 1 else n for n in cur)
            steps.append(("expand", cur))
    return shape, steps


def _run(device, shape, steps):
    """(how the write ended, the base, the view) after writing the first half of the view."""
    base = ember.tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape),
                        device=device)
    v = base
    for kind, arg in steps:
        v = (v[arg] if kind == "slice" else v.permute(arg) if kind == "permute" else
             v.reshape(arg) if kind == "reshape" else v.unsqueeze(arg) if
             kind == "unsqueeze" else v.expand(arg))
    half = max(1, v.shape[0] // 2)
    values = np.arange(half * int(np.prod(v.shape[1:])), dtype=np.float32) + 100
    try:
        v[:half] = ember.tensor(values.reshape((half,) + tuple(v.shape[1:])), device=device)
        how = "written"
    except ember.EmberError as e:
        assert "expanded view" in str(e) or "share" in str(e), str(e)
        how = "refused"
    return how, base.numpy().tolist(), v.numpy().tolist()


def test_random_view_chains_end_as_on_the_cpu(device):
    ways = set()
    for seed in range(300):
        shape, steps = _program(seed)
        want = _run("cpu", shape, steps)
        assert _run(device, shape, steps) == want, f"program {seed}: {shape} {steps}"
        ways.add(want[0])
    assert ways == {"written", "refused"}


# --- the host side of a backend without views --------------------------------------------

def test_read_only_host_memory_is_copied_before_ember_writes_it():
    """FrozenBackend.to_host hands out its read-only array: .numpy() is that array, and a
    CPU tensor made from it is writable memory of its own."""
    with installed(FrozenBackend()) as dev:
        x = ember.arange(4.0, device=dev)
        assert not x.numpy().flags.writeable
        for c in (x.cpu(), x.to("cpu", copy=False)):
            c += 1
            c[0] = 9.0
            assert c.tolist() == [9.0, 2.0, 3.0, 4.0]
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
        d = x.detach()            # the same box: assign's swap reaches both
        d[1] = 7.0
        assert x.tolist() == [0.0, 7.0, 2.0, 3.0] and type(d._data) is Frozen


def test_a_cpu_copy_never_shares_the_device_array():
    """A backend whose to_host returns its own NumPy array: .cpu() copies it."""
    with installed(CopyingBackend()) as dev:
        x = ember.arange(3.0, device=dev)
        c = x.cpu()
        c += 1
        assert x.tolist() == [0.0, 1.0, 2.0] and c.tolist() == [1.0, 2.0, 3.0]


def test_the_array_api_table_plus_the_library_kernels_is_every_required_kernel():
    """The guide's starting point: kernels(xp) holds every required kernel but the ones
    named in LIBRARY_SPECIFIC, which numpy_extras supplies for NumPy."""
    required = {op.name for op in ember.ops.REGISTRY.values() if op.required}
    table = array_api.kernels(np)
    assert required - set(table) == set(array_api.LIBRARY_SPECIFIC)
    assert set(array_api.numpy_extras(np)) == set(array_api.LIBRARY_SPECIFIC)


def test_the_backend_guide_names_the_table_and_what_it_leaves_out():
    """README's guide names kernels(xp) as the starting table and the kernels it leaves to
    the library, as array_api has them (a renamed table or a new library kernel shows)."""
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    guide = readme[readme.index("## Writing a backend plugin"):]
    guide = guide[:guide.index("\n## ")]
    assert "ember.backends.array_api.kernels(xp)" in guide
    named = guide[guide.index("in `LIBRARY_SPECIFIC`"):][:200]
    assert all(f"`{name}`" in named for name in array_api.LIBRARY_SPECIFIC), named
    assert "FrozenBackend" in guide and "read-only" in guide and "int64" in guide
