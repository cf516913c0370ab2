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
