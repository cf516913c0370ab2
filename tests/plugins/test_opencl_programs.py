"""OpenCL programs per op family and dtype (backends/opencl/reduce.py): every reduction of
one dtype is one program, built once (a PoCL build costs ~0.16 s of CPU whatever the
program's size); each kernel is still compiled only when launched."""
from __future__ import annotations

import ember
import numpy as np


def test_the_reductions_of_one_dtype_share_one_program(opencl_device):
    rt = ember.device(opencl_device).concrete().backend.runtime(0)
    a = np.arange(24, dtype=np.int32).reshape(4, 6) - 7      # int32: no other test's program
    x = ember.tensor(a, device=opencl_device)
    before = rt.builds
    got = [x.amax(1).numpy(), x.amin(0).numpy(), x.argmax(1).numpy(), x.argmin(0).numpy()]
    np.testing.assert_array_equal(got[0], a.max(1))
    np.testing.assert_array_equal(got[1], a.min(0))
    np.testing.assert_array_equal(got[2], a.argmax(1))
    np.testing.assert_array_equal(got[3], a.argmin(0))
    # cold, max and min run reduce_cold, a program of its own (the unrolled reduce_<op>
    # build once hot)
    assert ("reduce-cold", "int32", "int32") in rt._programs
    assert ("arg", "int32") in rt._programs
    # max and min: one reduction program; argmax and argmin: one more (at most two builds,
    # fewer when an earlier test in this process built them)
    assert rt.builds - before <= 2
    kernels = {name for key, name in rt._kernels
               if key in (("reduce-cold", "int32", "int32"), ("arg", "int32"))}
    # max and min run one kernel while cold (reduce_cold, the op its argument)
    assert {"reduce_cold", "arg_argmax", "arg_argmin"} <= kernels


def test_a_cold_reduction_runs_one_kernel_for_every_op_and_matches_the_hot_bit_for_bit(
        opencl_device):
    """Every reduction of a dtype pair runs one kernel (`reduce_cold`, compiled once) until
    it has reduced rt.hot_elements elements, then its unrolled reduce_<op>: the same
    accumulators in the same order, so the same bits, along one dim (with a tail past the
    unrolled part), two dims and three."""
    from ember import dtypes as D
    from ember.backends.opencl import reduce as R
    rt = _fresh(opencl_device)
    rng = np.random.default_rng(3)
    cases = [((7, 1003), (1,)), ((1003, 7), (0,)), ((4, 5, 6, 7), (0, 2)),
             ((3, 4, 5, 6), (1, 2, 3)), ((50000,), (0,))]
    for dt in ("float32", "int64"):
        for shape, axes in cases:
            a = (rng.standard_normal(shape) * 100).astype(dt)
            x = rt.from_host(a, D.get_dtype(dt))
            for op, ref in (("sum", np.sum), ("max", np.max), ("min", np.min),
                            ("prod", None)):
                got = []
                for hot in (1 << 62, 0):
                    rt.hot_elements, rt.dense_elements = hot, {}
                    got.append(rt.to_host(R.reduction(op)(x, axes=axes, keepdims=False)))
                assert got[0].tobytes() == got[1].tobytes(), (dt, shape, axes, op)
                if ref is not None:
                    np.testing.assert_allclose(got[0], ref(a, axis=axes), rtol=1e-5)
    launched = {name for key, name in rt._kernels if key[0] in ("reduce", "reduce-cold")}
    assert launched == {"reduce_cold", "reduce_sum", "reduce_max", "reduce_min",
                        "reduce_prod"}


def _fresh(opencl_device):
    """A new Runtime for opencl:0 (no programs yet), as a new process would have, with its
    elementwise ops run when called."""
    from ember.backends.opencl.runtime import Runtime
    backend = ember.device(opencl_device).concrete().backend
    rt = Runtime(0, backend._devices()[0][1])
    rt.fusion = False
    return rt


def test_the_elementwise_ops_of_one_dtype_share_one_program(opencl_device):
    from ember import dtypes as D
    from ember.backends.opencl import elementwise as ew
    from ember.backends.opencl import launch
    rt = _fresh(opencl_device)
    a = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    b = a[::-1].copy()
    x, y = rt.from_host(a, D.int16), rt.from_host(b, D.int16)
    got = [ew.binary("add")(x, y), ew.binary("mul")(x, 3), ew.binary("lt")(x, y),
           ew.unary("neg")(x), ew.where(ew.binary("lt")(x, y), x, y)]
    want = [a + b, a * 3, a < b, -a, np.where(a < b, a, b)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(rt.to_host(g), w)
    assert list(rt._programs) == [("elementwise", "int16")] and rt.builds == 1
    group = launch._family_groups("int16")[0]

    def name(op, ins, out):
        return f"{group[(op, ins, out)][0]}__flat"
    i16, b = ("int16", "int16"), "bool"
    # add, mul (array and scalar) and neg: one kernel; lt another; where a third
    assert name("add", i16, "int16") == name("neg", ("int16",), "int16")
    assert {name for _, name in rt._kernels} == {
        name("add", i16, "int16"), name("lt", i16, b), name("where", (b, *i16), "int16")}


def test_cold_elementwise_ops_of_one_output_dtype_share_one_kernel(opencl_device):
    """PoCL compiles each kernel at its first launch (~0.1 s of CPU, whatever the kernel's
    size): add, sub, mul and maximum of one dtype run one kernel, the op and which
    operands are scalars its arguments; comparisons (bool result) another; pow (long
    library code) its own."""
    from ember import dtypes as D
    from ember.backends.opencl import elementwise as ew
    rt = _fresh(opencl_device)
    a = np.linspace(-3, 3, 300, dtype=np.float32)
    b = np.linspace(2, -1, 300, dtype=np.float32)
    x, y = rt.from_host(a, D.float32), rt.from_host(b, D.float32)
    ops = {"add": a + b, "sub": a - b, "mul": a * b, "maximum": np.maximum(a, b),
           "lt": a < b, "eq": a == b}
    for op, want in ops.items():
        np.testing.assert_array_equal(rt.to_host(ew.binary(op)(x, y)), want)
    np.testing.assert_array_equal(rt.to_host(ew.binary("sub")(x, 2.5)), a - np.float32(2.5))
    np.testing.assert_array_equal(rt.to_host(ew.binary("sub")(2.5, y)), np.float32(2.5) - b)
    np.testing.assert_array_equal(rt.to_host(ew.unary("neg")(x)), -a)
    np.testing.assert_array_equal(rt.to_host(ew.binary("lt")(x, 0.5)), a < 0.5)
    xs = rt.from_host(np.arange(24, dtype=np.float32).reshape(4, 6), D.float32)
    ys = rt.from_host(np.ones((6, 4), np.float32), D.float32)
    t = xs.view((6, 4), (1, 6), 0)                       # a transposed (strided) operand
    np.testing.assert_array_equal(rt.to_host(ew.binary("mul")(t, ys)),
                                  np.arange(24, dtype=np.float32).reshape(4, 6).T)
    z = rt.from_host(np.abs(a), D.float32)
    np.testing.assert_allclose(rt.to_host(ew.binary("pow")(z, y)), np.abs(a) ** b,
                               rtol=1e-6)
    names = sorted(name for _, name in rt._kernels)
    assert len(names) == 4 and "pow__flat_AA" in names, names   # and u<k>__strided3


def test_a_dtype_program_the_compiler_rejects_falls_back_to_the_ops_own(opencl_device,
                                                                       monkeypatch):
    from ember import dtypes as D
    from ember.backends.opencl import elementwise as ew
    from ember.backends.opencl import launch
    monkeypatch.setattr(launch, "_family_source", lambda dt: "__kernel void broken( {")
    rt = _fresh(opencl_device)
    a = np.arange(10, dtype=np.uint8)
    x = rt.from_host(a, D.uint8)
    for _ in range(2):                       # rejected once, then not tried again
        np.testing.assert_array_equal(rt.to_host(ew.binary("add")(x, x)), a + a)
    assert rt.failed_families == {("elementwise", "uint8")}
    assert ("add", ("uint8", "uint8"), "uint8") in rt._programs
    assert rt.builds == 1                    # the op's own program (the rejected one raised)


def test_float32_and_int64_families_build_as_one_program(opencl_device):
    """bundles.py: the families a training step meets for float32 and int64 are one
    build; names both define get the int64 member's dtype as a suffix."""
    from ember import dtypes as D
    from ember.backends.opencl import index
    from ember.backends.opencl import reduce as R
    rt = _fresh(opencl_device)
    rng = np.random.default_rng(5)
    f = rng.standard_normal((6, 5)).astype(np.float32)
    i = rng.integers(-9, 9, (6, 5))
    idx = rt.from_host(np.array([4, 0, 0, 2]), D.int64)
    for a, dt in ((f, D.float32), (i, D.int64)):
        x = rt.from_host(a, dt)
        for axis in (0, 1):
            got = rt.to_host(index.take(x, idx, axis=axis))
            np.testing.assert_array_equal(got, np.take(a, [4, 0, 0, 2], axis=axis))
        np.testing.assert_array_equal(rt.to_host(R.reduction("sum")(x, axes=(0,),
                                                                    keepdims=False)),
                                      a.sum(0))
    assert rt.builds == 1
    assert rt._programs[("take-words",)] is rt._programs[("reduce-cold", "int64", "int64")]
    names = {k.function_name for k in rt._kernels.values()}
    assert {"take_words", "reduce_cold", "reduce_cold_int64"} <= names, names


def test_small_panels_pack_with_one_kernel_bit_for_bit(opencl_device, monkeypatch):
    """linalg.pack_any (the rows per block an argument) packs panels of up to PACK_ANY
    floats, and vector-aligned ones of any size: the same product, bit for bit, as the
    pack{r} kernels."""
    from ember import dtypes as D
    from ember.backends.opencl import linalg
    rt = _fresh(opencl_device)
    rng = np.random.default_rng(6)
    got = []
    for limit in (0, 1 << 40):
        monkeypatch.setattr(linalg, "PACK_ANY", limit)
        for (m, k, n) in ((70, 33, 50), (64, 96, 64)):
            a = rng.standard_normal((m, k)).astype(np.float32)
            b = rng.standard_normal((k, n)).astype(np.float32)
            x, y = rt.from_host(a, D.float32), rt.from_host(b, D.float32)
            out = rt.empty((m, n), D.float32)
            linalg.VARIANTS[linalg.DEFAULT_CPU](x, y, out, (), m, n, k)
            got.append(rt.to_host(out))
            np.testing.assert_allclose(got[-1], a @ b, rtol=1e-4, atol=1e-4)
        rng = np.random.default_rng(6)
    assert all(g.tobytes() == h.tobytes() for g, h in zip(got[:2], got[2:]))
    names = {name for _, name in rt._kernels}
    assert "pack_any" in names and ({"pack6", "pack16"} & names)


_AHEAD = """
    import json, sys, threading, time
    import ember
    x = ember.ones(4, device="opencl:0")
    (x + 1).numpy()                    # builds the training bundle (float32 elementwise)
    helpers = [t for t in threading.enumerate() if t.name.endswith("compile-ahead")]
    if helpers and sys.argv[-1] == "join":
        helpers[0].join()
    print(json.dumps({"helpers": len(helpers), "at": time.perf_counter()}))
"""


def _ahead(tmp_path, *, join: bool, env=None):
    """Run _AHEAD in a new process with empty caches: (its JSON, PoCL's cache folder, the
    seconds from its last line to its exit)."""
    import json
    import os
    import subprocess
    import sys
    import textwrap
    import time
    pocl = tmp_path / "pocl"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_AHEAD), "join" if join else "exit"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "POCL_CACHE_DIR": str(pocl),
             "EMBER_CACHE_DIR": str(tmp_path / "ember"), **(env or {})})
    ended = time.perf_counter()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    return seen, pocl, ended - seen["at"]


def _compiled(pocl) -> set:
    """The kernels PoCL's cache holds a compiled work-group function of."""
    return {p.parent.name for p in pocl.rglob("0-0-0")}


def test_the_training_bundle_compiles_ahead_in_a_context_of_its_own(opencl_device, tmp_path):
    """bundles.compile_ahead: once the training bundle is built from source, a helper
    thread compiles the kernels a training step meets (bundles.AHEAD) from the last, in a
    context of its own, into PoCL's cache, which serves the run's first launches; it stops
    at the first kernel the run has looked up itself."""
    from ember.backends.opencl import bundles
    seen, pocl, _ = _ahead(tmp_path, join=True)
    assert seen["helpers"] == 1
    compiled = _compiled(pocl)
    # the run launched only u0__flat (x + 1); the helper compiled the step's last kernels
    # and stopped there (u0__flat is among the float32 ones before it)
    assert {"arg_argmax", "colsum", "gather_scatter", "reduce_cold_int64"} <= compiled, compiled
    assert "u0__flat" in compiled and "take_words" not in compiled, compiled
    assert len(bundles.AHEAD) == len(set(bundles.AHEAD))


def test_compiling_ahead_stops_at_exit_and_can_be_turned_off(opencl_device, tmp_path):
    """The process exits at once, the helper stopping after the kernel it is on (it is
    never torn down mid-compile); EMBER_OPENCL_COMPILE_AHEAD=0 starts no helper."""
    seen, pocl, tail = _ahead(tmp_path / "exit", join=False)
    assert seen["helpers"] == 1
    assert tail < 30, tail                  # one kernel's compile at most, not the list
    seen, pocl, _ = _ahead(tmp_path / "off", join=True,
                           env={"EMBER_OPENCL_COMPILE_AHEAD": "0"})
    assert seen["helpers"] == 0
    assert "arg_argmax" not in _compiled(pocl)
