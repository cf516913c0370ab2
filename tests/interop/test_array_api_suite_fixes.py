"""What the public array-api-tests suite (2023.12, complex and fft included) found in
ember.array_api, one regression test each (tests/interop/array_api_suite/skips.txt has the
command and what stays skipped, with reasons)."""
from __future__ import annotations

import inspect
import math
import re
from collections import Counter

import array_api_strict as strict
import ember
import ember.array_api as xp
import numpy as np
import pytest


@pytest.mark.parametrize("name, expected", [
    ("fftfreq", [0.0, 0.4, 0.8, -0.8, -0.4]),
    ("rfftfreq", [0.0, 0.4, 0.8]),
])
def test_fftfreq_takes_a_real_floating_dtype(name, expected):
    """2025.12's dtype keyword (array-api-tests passes it): TypeError before."""
    f = getattr(xp.fft, name)
    out = f(5, d=0.5, dtype=xp.float64)
    assert out.dtype == xp.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15)
    assert f(5).dtype == xp.__array_namespace_info__().default_dtypes()["real floating"]
    with pytest.raises(ember.DtypeNotSupportedError, match=f"fft.{name}: dtype must be a real "
                                                            "floating dtype, got int32"):
        f(5, dtype=xp.int32)


def test_take_counts_negative_indices_from_the_end():
    """index_select (PyTorch's) refused them: an EmberIndexError before."""
    a = np.arange(12).reshape(3, 4)
    x = xp.asarray(a)
    idx = [-1, 0, -4]
    np.testing.assert_array_equal(xp.take(x, xp.asarray(idx), axis=1).numpy(),
                                  np.take(a, idx, axis=1))
    np.testing.assert_array_equal(xp.take(x, xp.asarray([-3, 2]), axis=-2).numpy(),
                                  np.take(a, [-3, 2], axis=0))
    np.testing.assert_array_equal(xp.take(xp.asarray([5, 6, 7]), xp.asarray([-1])).numpy(),
                                  [7])


def test_expand_dims_axis_is_positional_or_keyword():
    """The spec's stub: expand_dims(x, /, axis=0) (keyword-only before)."""
    p = inspect.signature(xp.expand_dims).parameters["axis"]
    assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default == 0
    x = xp.ones((2, 3))
    assert xp.expand_dims(x, 1).shape == (2, 1, 3)
    assert xp.expand_dims(x, axis=-1).shape == (2, 3, 1)


def test_info_dtypes_are_the_standards():
    """float16/bfloat16 (ember's extensions) were listed: the standard's keys are its own
    dtypes' canonical names."""
    info = xp.__array_namespace_info__()
    names = set(info.dtypes())
    assert names == {"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64",
                     "complex64", "complex128"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}


def test_unique_all_of_complex_values():
    """argsort refuses complex (the standard orders none): unique_* raised before."""
    vals = np.array([1 + 2j, 0j, 1 + 2j, 1 - 1j, 0j, -3 + 0j], dtype=np.complex64)
    r = xp.unique_all(xp.asarray(vals))
    v, i, inv, c = np.unique(vals, return_index=True, return_inverse=True, return_counts=True)
    assert r.values.dtype == xp.complex64
    np.testing.assert_array_equal(r.values.numpy(), v)
    np.testing.assert_array_equal(r.indices.numpy(), i)
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv.reshape(vals.shape))
    np.testing.assert_array_equal(r.counts.numpy(), c)
    np.testing.assert_array_equal(xp.unique_values(xp.asarray(0j)).numpy(), [0j])


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_opencl_complex_programs_define_each_kernel_once(dt):
    """The complex ops of a dtype's elementwise program were named by op alone, so copy
    float32 -> complex64 and complex64 -> complex64 both defined `copy__flat_A`: the program
    failed to build (22 compiler errors printed) in every process, and each op fell back to
    a program of its own."""
    pytest.importorskip("pyopencl")
    from ember.backends.opencl import launch
    # the complex ops live in the dtype's program of ops with kernels of their own
    # (launch._own_source); its group kernels in the shared one: each program once a name
    found = 0
    for source in (launch._family_source(dt), launch._own_source(dt)):
        names = re.findall(r"__kernel void (\w+)\(", source)
        assert not [n for n, k in Counter(names).items() if k > 1]
        found += len(names)
    assert found


def test_masked_assignment_into_an_empty_array():
    """NumPy gives an empty (0, 2) array zero strides, which the expanded-view check took for
    shared memory: x[mask] = v raised KernelValueError before. A real expanded view still
    refuses the write."""
    x = xp.zeros((0, 2))
    x[xp.zeros((0, 2), dtype=xp.bool)] = False
    assert x.shape == (0, 2)
    with pytest.raises(ember.EmberError, match="expanded view"):
        ember.zeros(1).expand(3)[...] = 1.0


@pytest.mark.parametrize("ord", [0, 1, 2, math.inf, -math.inf, 3])
def test_vector_norm_of_complex_is_real(ord):
    """ord=0 counted nonzeros in x's dtype: complex64 out, where the standard (and
    torch.linalg.vector_norm) give the real dtype."""
    z = np.array([[1 + 1j, 0j], [3 - 4j, 2j]], dtype=np.complex64)
    out = xp.linalg.vector_norm(xp.asarray(z), ord=ord)
    assert out.dtype == xp.float32
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(z.ravel(), ord=ord), rtol=1e-6)


@pytest.mark.parametrize("ord", [0, 1, 2, math.inf, -math.inf, 3])
def test_vector_norm_over_no_axes_is_elementwise(ord):
    """axis=() reduced every axis (ember's reductions read dim=() as all, as PyTorch's
    do): a 0-d result where the standard keeps x's shape."""
    a = np.array([[1.0, -2.0, 0.0], [0.5, 3.0, -0.0]], dtype=np.float32)
    out = xp.linalg.vector_norm(xp.asarray(a), axis=(), ord=ord)
    ref = strict.linalg.vector_norm(strict.asarray(a), axis=(), ord=ord)
    assert out.shape == (2, 3) and out.dtype == xp.float32
    # ord=3 goes through |x|**3 and **(1/3) in float32: NumPy's SIMD power loop and its
    # scalar tail round differently (which elements take which depends on the arrays'
    # alignment), so array-api-strict itself gives 3.0 or 3.0000002: one ulp apart
    np.testing.assert_allclose(out.numpy(), np.asarray(ref), rtol=2.5e-7, atol=0)
