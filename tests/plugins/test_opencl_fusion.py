"""Lazy elementwise fusion on opencl:0 (backends/opencl/fusion.py) and the vector kernels.

Fused chains must give the bit-identical results of running the ops one by one, run as one
kernel once their shape has been met before, never read memory a later in-place op changed,
and stay bounded in size."""
from __future__ import annotations

import ember
import numpy as np
import pytest


@pytest.fixture
def rt(opencl_device, monkeypatch):
    """opencl:0's runtime, deferring elementwise ops whatever EMBER_OPENCL_FUSION says."""
    runtime = ember.device(opencl_device).concrete().backend.runtime(0)
    monkeypatch.setattr(runtime, "fusion", True)
    # tree shapes met by earlier tests in this process are met again here for the first time
    monkeypatch.setattr(runtime, "fused_seen", set())
    monkeypatch.setattr(runtime, "fused_credit", {})
    monkeypatch.setattr(runtime, "fused_failed", set())
    # a tree shape is built the second time it is met (EMBER_OPENCL_FUSE_AFTER=0), not once
    # it has paid for its build (the default: see test_a_tree_is_built_once_it_has_paid)
    monkeypatch.setattr(runtime, "fuse_after", 0.0)
    return runtime


@pytest.fixture
def launches(rt, monkeypatch):
    """Names of the kernels enqueued from now on (the runtime's real launch still runs)."""
    names = []
    real, real_nd = rt.launch, rt.launch_nd

    def launch(kernel, n, *args, **kw):
        names.append(kernel.function_name)
        return real(kernel, n, *args, **kw)

    def launch_nd(kernel, *args):
        names.append(kernel.function_name)
        return real_nd(kernel, *args)
    monkeypatch.setattr(rt, "launch", launch)
    monkeypatch.setattr(rt, "launch_nd", launch_nd)
    return names


def rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def chain(a, b, c):
    return ember.where(a > 0, a * b + c, ember.tanh(c) - 1.5) * 2


def chain_np(a, b, c):
    one = np.float32(1.5) if a.dtype == np.float32 else 1.5
    return np.where(a > 0, a * b + c, np.tanh(c) - one) * a.dtype.type(2)


def test_fused_chain_is_one_kernel_and_bit_identical(opencl_device, rt, launches):
    a, b, c = rand((37, 61), seed=1), rand((61,), seed=2), rand((37, 61), seed=3)
    ea, eb, ec = (ember.tensor(v, device=opencl_device) for v in (a, b, c))
    rt.fusion = False
    try:
        eager = chain(ea, eb, ec).numpy()
    finally:
        rt.fusion = True
    first = chain(ea, eb, ec).numpy()        # first meeting: op by op, no build
    launches.clear()
    fused = chain(ea, eb, ec).numpy()
    assert [n for n in launches if not n.startswith(("strided_", "strided3_"))] == [], launches
    assert len(launches) == 1, f"expected one fused kernel, ran {launches}"
    np.testing.assert_array_equal(fused, eager)
    np.testing.assert_array_equal(first, eager)
    # no fma contraction across ops: the same float32 roundings as NumPy's two loops
    np.testing.assert_array_equal((ea * eb + ec).numpy(), a * b + c)
    np.testing.assert_allclose(fused, chain_np(a, b, c), rtol=1e-6, atol=1e-6)


def test_unheld_results_are_never_computed(opencl_device, rt, launches):
    ea = ember.tensor(rand(100), device=opencl_device)
    for _ in range(3):
        ea * 2 + 1
    ember.synchronize(opencl_device)
    assert launches == []
    held = ea * 2 + 1
    ember.synchronize(opencl_device)             # computes what is held: op by op the
    assert len(launches) == 2                    # first time this tree shape is met,
    assert not held._data.pending
    launches.clear()
    again = ea * 2 + 1
    ember.synchronize(opencl_device)
    assert len(launches) == 1                    # one fused kernel from then on
    np.testing.assert_array_equal(again.numpy(), held.numpy())


def test_a_tree_is_built_once_it_has_paid(opencl_device, rt, launches):
    """With a build threshold (EMBER_OPENCL_FUSE_AFTER; the default), a tree shape runs op
    by op, crediting each meeting with what fusing would have saved, until the credit
    reaches the threshold; one fused kernel from then on, with the same results."""
    from ember.backends.opencl import fusion
    n = 300
    ea = ember.tensor(rand(n, seed=11), device=opencl_device)
    saving = fusion.LAUNCH_S + n * fusion.ELEMENT_S       # one launch saved per meeting
    rt.fuse_after = 2.5 * saving
    counts, results = [], []
    for _ in range(5):
        launches.clear()
        held = ea * 3 + 2
        ember.synchronize(opencl_device)
        counts.append(len(launches))
        results.append(held.numpy())
    assert counts == [2, 2, 2, 1, 1]       # credits s, 2s, 3s >= 2.5s: built at the 4th
    for got in results[1:]:
        np.testing.assert_array_equal(got, results[0])


def test_a_dense_op_runs_its_generic_kernel_until_hot(opencl_device, rt, launches,
                                                      monkeypatch):
    """A dense elementwise op launches its one generic flat_ kernel (from its dtype's
    program; nothing else compiled) until it has processed rt.hot_elements elements
    (EMBER_OPENCL_HOT_ELEMENTS), then the vector variant of its own program; the results
    are the same."""
    monkeypatch.setattr(rt, "fusion", False)
    monkeypatch.setattr(rt, "dense_elements", {})
    n = 4099                                 # past VEC * 256: a vector body and a tail
    monkeypatch.setattr(rt, "hot_elements", 2 * n)
    a, b = rand(n, seed=12), rand(n, seed=13)
    ea, eb = (ember.tensor(v, device=opencl_device) for v in (a, b))
    from ember.backends.opencl import launch
    generic = launch._family_groups("float32")[0][("add", ("float32",) * 2, "float32")][0]
    generic += "__flat"                      # the kernel of add, sub, mul, ...
    rounds = []
    for _ in range(3):
        launches.clear()
        got = (ea + eb).numpy()
        np.testing.assert_array_equal(got, a + b)
        rounds.append([name for name in launches if name in (generic, "vec_AA")])
    assert rounds[:2] == [[generic], [generic]]
    assert rounds[2] == ["vec_AA", generic]   # hot: 8-wide body, the tail checked


def test_pending_results_survive_in_place_writes_to_their_operands(opencl_device, rt):
    a, b = rand(1000, seed=4), rand(1000, seed=5)
    ea, eb = (ember.tensor(v, device=opencl_device) for v in (a, b))
    t = ea * eb                        # pending: reads ea's memory when it runs
    u = ember.exp(ea)
    ea.add_(100.0)
    ea[3] = -7.0
    eb.mul_(0)
    np.testing.assert_array_equal(t.numpy(), a * b)
    np.testing.assert_allclose(u.numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(ea.numpy()[:3], a[:3] + 100)


def test_held_intermediates_and_shared_subtrees(opencl_device, rt):
    a, b = rand(500, seed=6), rand(500, seed=7)
    ea, eb = (ember.tensor(v, device=opencl_device) for v in (a, b))
    for _ in range(2):                 # the second round runs the fused programs
        p = ea * eb
        q = p + ea
        r = q * q - p                  # p and q appear twice in r's tree
        np.testing.assert_array_equal(r.numpy(), (a * b + a) * (a * b + a) - a * b)
        np.testing.assert_array_equal(q.numpy(), a * b + a)
        np.testing.assert_array_equal(p.numpy(), a * b)


def test_long_chains_and_doubling_trees_stay_bounded(opencl_device, rt):
    from ember.backends.opencl import fusion
    x = ember.tensor(np.ones(64, np.float32), device=opencl_device)
    y = x
    for _ in range(200):
        y = y + 1
    np.testing.assert_array_equal(y.numpy(), np.full(64, 201, np.float32))
    z = x
    for _ in range(30):                 # a tree of 2**30 leaves if nothing ran early
        z = z * 0.5 + z * 0.5
        assert z._data.node is None or z._data.node.leaves <= fusion.MAX_LEAVES
        assert z._data.node is None or z._data.node.nodes <= fusion.MAX_NODES
    np.testing.assert_array_equal(z.numpy(), np.ones(64, np.float32))
    assert not [k for k in rt._programs if k[0] == "fused" and len(k[1]) > fusion.MAX_NODES]


@pytest.mark.parametrize("layout", ["contiguous", "broadcast", "views"])
def test_broadcasting_and_views_inside_a_tree(opencl_device, rt, layout):
    rng = np.random.default_rng(8)
    if layout == "contiguous":
        a, b, c = (rng.standard_normal((4, 5)).astype(np.float32) for _ in range(3))
        parts = [ember.tensor(v, device=opencl_device) for v in (a, b, c)]
    elif layout == "broadcast":
        a = rng.standard_normal((3, 1)).astype(np.float32)
        b = rng.standard_normal((4,)).astype(np.float32)
        c = rng.standard_normal((2, 3, 4)).astype(np.float32)
        parts = [ember.tensor(v, device=opencl_device) for v in (a, b, c)]
    else:
        base = rng.standard_normal((6, 9)).astype(np.float32)
        eb = ember.tensor(base, device=opencl_device)
        a, b, c = base[::2, 1::2], base.T[1:5, :3].T, base[1:4, ::-2][:, :4]
        parts = [eb[::2, 1::2], eb.transpose(0, 1)[1:5, :3].transpose(0, 1),
                 eb[1:4, ::-2][:, :4]]
    for _ in range(2):
        got = ((parts[0] * parts[1]).sigmoid() + parts[2] * 3).float()
        want = 1 / (1 + np.exp(-(a * b))) + c * np.float32(3)
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=1e-6)
        assert tuple(got.shape) == want.shape


def test_mixed_dtypes_in_one_tree(opencl_device, rt):
    x = np.arange(-20, 20, dtype=np.int32)
    y = np.linspace(-3, 3, 40).astype(np.float32)
    ex, ey = (ember.tensor(v, device=opencl_device) for v in (x, y))
    for _ in range(2):
        got = ember.where((ex % 3 == 0) & (ey > 0), (ey * 2).to(ember.int64) + ex, ex // 4)
        want = np.where((x % 3 == 0) & (y > 0), (y * 2).astype(np.int64) + x, x // 4)
        assert got.dtype is ember.int64
        np.testing.assert_array_equal(got.numpy(), want)


def test_fusion_can_be_turned_off(monkeypatch):
    from ember.backends.opencl import fusion
    monkeypatch.setenv("EMBER_OPENCL_FUSION", "0")
    assert not fusion.enabled()
    monkeypatch.setenv("EMBER_OPENCL_FUSION", "1")
    assert fusion.enabled()


# -- the vector kernels (8 elements per work-item) and their edges --------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "bool", "float16"])
@pytest.mark.parametrize("n, offset", [(2048, 0), (4096 + 13, 0), (4096 + 13, 3), (4100, 8)])
def test_vector_kernels_sizes_and_offsets(opencl_device, rt, dtype, n, offset):
    caps = ember.device(opencl_device).concrete().backend.capabilities(0)
    if dtype not in caps.dtypes:
        pytest.skip(f"{opencl_device} has no {dtype}")
    npd = ember.dtypes.get_dtype(dtype).np
    rng = np.random.default_rng(9)
    a = (rng.integers(-3, 4, n + offset) if dtype != "bool" else rng.random(n + offset) < 0.5)
    b = (rng.integers(-3, 4, n + offset) if dtype != "bool" else rng.random(n + offset) < 0.5)
    a, b = a.astype(npd), b.astype(npd)
    ea, eb = (ember.tensor(v, device=opencl_device)[offset:] for v in (a, b))
    a, b = a[offset:], b[offset:]
    for _ in range(2):
        got = (ea * eb + ea).numpy()
        want = (a * b + a) if dtype != "bool" else ((a & b) | a)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal((ea == eb).numpy(), a == b)


def test_a_fused_program_the_compiler_rejects_runs_op_by_op(opencl_device, rt, monkeypatch):
    from ember.backends.opencl.runtime import KernelBuildError
    real_build = rt._build

    def build(key, source):
        if key[0][0] == "fused" and "sin" in repr(key):     # only this test's tree shape
            raise KernelBuildError("injected: the compiler rejected the fused program")
        return real_build(key, source)
    monkeypatch.setattr(rt, "_build", build)
    x = rand(300, seed=10)
    ex = ember.tensor(x, device=opencl_device)
    first = ember.sin(ex * 3 - 1).numpy()               # op by op: nothing fused yet
    with pytest.warns(RuntimeWarning, match="did not build; running its ops one by one"):
        second = ember.sin(ex * 3 - 1).numpy()
    third = ember.sin(ex * 3 - 1).numpy()               # no second attempt, no warning
    for got in (first, second, third):
        np.testing.assert_allclose(got, np.sin(x * 3 - 1), rtol=1e-5, atol=1e-6)


def test_an_error_while_flushing_keeps_the_rest_pending(opencl_device, rt, monkeypatch):
    a, b = rand(400, seed=11), rand(400, seed=12)
    ea, eb = (ember.tensor(v, device=opencl_device) for v in (a, b))
    p1, p2 = ea * eb, ea - eb
    real = type(rt).materialize          # fusion.materialize, the runtime's callback

    def failing(x):
        raise MemoryError("injected")
    monkeypatch.setattr(type(rt), "materialize", staticmethod(failing))
    with pytest.raises(MemoryError):
        rt.flush()
    monkeypatch.setattr(type(rt), "materialize", staticmethod(real))
    assert p1._data.pending and p2._data.pending
    ea.add_(5.0)                        # flushes both before writing into ea
    np.testing.assert_array_equal(p1.numpy(), a * b)
    np.testing.assert_array_equal(p2.numpy(), a - b)


def test_in_place_ops_write_their_tree_straight_into_the_target(opencl_device, launches):
    a, g = rand(4096, seed=13), rand(4096, seed=14)     # whole vector work-groups: no tail
    for round_ in range(2):            # the second round runs one kernel per in-place op
        ea, eg = (ember.tensor(v, device=opencl_device) for v in (a, g))
        ember.synchronize(opencl_device)
        launches.clear()
        ea.mul_(0.9).addcmul_(eg, eg, value=0.1)
        ember.synchronize(opencl_device)
        if round_:
            assert len(launches) == 2, launches
        want = a * np.float32(0.9) + np.float32(0.1) * (g * g)
        np.testing.assert_allclose(ea.numpy(), want, rtol=1e-6, atol=1e-6)


def test_a_fused_in_place_source_keeps_the_assigned_values(opencl_device, rt):
    a = rand(500, seed=15)
    for _ in range(2):
        ea = ember.tensor(a, device=opencl_device)
        y = ember.exp(ea) * 2          # pending, held here
        ea.copy_(y)                    # may run y's tree straight into ea
        ea.add_(1.0)                   # y must still be exp(a) * 2, not read the new ea
        np.testing.assert_allclose(y.numpy(), np.exp(a) * 2, rtol=1e-6)
        np.testing.assert_allclose(ea.numpy(), np.exp(a) * 2 + 1, rtol=1e-6)


def test_overlapping_in_place_assignment_reads_before_writing(opencl_device, rt):
    a = np.arange(20, dtype=np.float32)
    for _ in range(2):
        ex = ember.tensor(a, device=opencl_device)
        ex[1:] = ex[:-1] * 2
        want = a.copy()
        want[1:] = a[:-1] * 2
        np.testing.assert_array_equal(ex.numpy(), want)
        ey = ember.tensor(a.reshape(4, 5), device=opencl_device)
        ey.add_(ey.transpose(0, 1)[:5, :4].transpose(0, 1) * 0 + ey[:, :1])   # broadcast read
        want = a.reshape(4, 5) + a.reshape(4, 5)[:, :1]
        np.testing.assert_array_equal(ey.numpy(), want)


def test_pending_parts_of_an_in_place_source_keep_their_values(opencl_device, rt):
    a, b = rand(600, seed=16), rand(600, seed=17)
    for _ in range(2):
        ea, eb = (ember.tensor(v, device=opencl_device) for v in (a, b))
        t = ea * 2                     # reads ea; held, and inside the source's tree
        u = eb * 3                     # does not read ea; held, inside the tree
        ea.add_(t + u)
        np.testing.assert_array_equal(t.numpy(), a * 2)
        np.testing.assert_array_equal(u.numpy(), b * 3)
        np.testing.assert_array_equal(ea.numpy(), a + (a * 2 + b * 3))


def test_pending_arrays_built_on_an_in_place_source_keep_their_values(opencl_device, rt):
    # z's tree holds y; writing y into x must not leave z reading a half-made y (this
    # crashed PoCL once: z's kernel got no buffer for y) or the new x
    a = rand(700, seed=18)
    for _ in range(2):
        ex = ember.tensor(a, device=opencl_device)
        y = ex * 2
        z = y + 1
        ex.copy_(y)
        ex.mul_(10.0)
        np.testing.assert_array_equal(z.numpy(), a * 2 + 1)
        np.testing.assert_array_equal(y.numpy(), a * 2)
        np.testing.assert_array_equal(ex.numpy(), a * 2 * np.float32(10))


REDUCTIONS = [
    ("sum over rows", lambda a, b, c: (a * b + c).sum(0)),
    ("mean over both", lambda a, b, c: ember.tanh(a - c).mean((0, 1))),
    ("amax keepdim", lambda a, b, c: (a * b).amax(1, keepdim=True)),
    ("broadcast leaf", lambda a, b, c: (a * b[:7]).sum(1)),
    ("any of a comparison", lambda a, b, c: ((a + c) > 2.5).any(0)),
    ("int sum", lambda a, b, c: ((a * 4).to(ember.int64) + 1).sum(0)),
    ("chunked", lambda a, b, c: (a.reshape(-1) * c.reshape(-1)).sum()),
]


@pytest.mark.parametrize("name,fn", REDUCTIONS, ids=[n for n, _ in REDUCTIONS])
def test_reductions_take_their_pending_input_into_one_kernel(opencl_device, rt, launches,
                                                              name, fn):
    rng = np.random.default_rng(19)
    a = rng.standard_normal((300, 41)).astype(np.float32)
    b = rng.standard_normal((41,)).astype(np.float32)
    c = rng.standard_normal((300, 41)).astype(np.float32)
    if name == "broadcast leaf":
        a = a[:, :7]
    ea, eb, ec = (ember.tensor(v, device=opencl_device) for v in (a, b, c))
    rt.fusion = False
    eager = fn(ea, eb, ec).numpy()
    rt.fusion = True
    first = fn(ea, eb, ec).numpy()             # first meeting: input computed, then reduced
    launches.clear()
    fused = fn(ea, eb, ec)
    ember.synchronize(opencl_device)
    # no kernel computes the reduction's input first; at most a second pass over per-chunk
    # partials, and mean's division after
    assert launches[0] == "reduce", launches
    assert len([n for n in launches if n == "reduce"]) <= 2, launches
    assert len(launches) <= 3, launches
    for got in (first, fused.numpy()):
        np.testing.assert_array_equal(got, eager, err_msg=name)
    with np.errstate(all="ignore"):
        want = fn(*(ember.tensor(v) for v in (a, b, c))).numpy()
    np.testing.assert_allclose(fused.numpy(), want, rtol=1e-4, atol=1e-4, err_msg=name)


def test_conformance_gradient_checks_run_op_by_op(opencl_device, rt, monkeypatch):
    """ember.testing's gradient checks switch the runtime's fusion off while they run (each
    distinct gradient tree would be a fused program build of its own) and back on after;
    EMBER_OPENCL_FUSION alone cannot do it: the runtime reads it once, when it starts."""
    from ember.testing import CASES, checks
    seen = []
    real = checks._check_gradients

    def spy(case, device, second):
        seen.append(rt.fusion)
        return real(case, device, second)
    monkeypatch.setattr(checks, "_check_gradients", spy)
    checks.check_gradients(next(c for c in CASES if c.name == "exp"), opencl_device)
    assert seen == [False]
    assert rt.fusion is True
