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
    assert ("reduce", "int32", "int32") in rt._programs
    assert ("arg", "int32") in rt._programs
    # max and min: one reduction program; argmax and argmin: one more (at most two builds,
    # fewer when an earlier test in this process built them)
    assert rt.builds - before <= 2
    kernels = {name for key, name in rt._kernels if key in (("reduce", "int32", "int32"),
                                                            ("arg", "int32"))}
    assert {"reduce_max", "reduce_min", "arg_argmax", "arg_argmin"} <= kernels


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
    assert {name for _, name in rt._kernels} == {
        "add__flat_AA", "mul__flat_AS", "lt__flat_AA", "neg__flat_A", "where__flat_AAA"}


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
