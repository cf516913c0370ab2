"""complex64/complex128 as first-class dtypes (issue 31): promotion, creation, printing,
host copies, the parts (real/imag/conj) and device transfer, each against PyTorch."""
from __future__ import annotations

import ember
import numpy as np
import pytest
import torch

DEVICES = ["cpu", "opencl:0"]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def test_names_and_kinds_are_torchs():
    assert ember.complex64.itemsize == 8 and ember.complex128.itemsize == 16
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.dtypes.get_dtype("torch.complex64") is ember.complex64
    assert ember.dtypes.get_dtype(np.complex128) is ember.complex128
    assert ember.dtypes.get_dtype(complex) is ember.complex64
    assert not ember.complex64.is_floating_point and ember.complex64.is_complex
    assert ember.finfo(ember.complex128).bits == torch.finfo(torch.complex128).bits
    assert ember.finfo(ember.complex64).eps == torch.finfo(torch.complex64).eps


def test_promote_types_is_torchs_for_every_pair_with_a_complex():
    wrong = []
    for a in DTYPES:
        for b in ("complex64", "complex128"):
            want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            got = ember.promote_types(getattr(ember, a), getattr(ember, b))
            if f"torch.{got.name}" != want:
                wrong.append((a, b, got.name, want))
    assert wrong == []


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64",
                                   "complex64", "complex128"])
def test_result_type_with_python_complex_and_0d_tensors(dtype):
    t = torch.ones(2, dtype=getattr(torch, dtype))
    e = ember.ones(2, dtype=getattr(ember, dtype))
    for other_t, other_e in ((1j, 1j), (torch.tensor(1j), ember.tensor(1j)),
                             (torch.tensor(1j, dtype=torch.complex128),
                              ember.tensor(1j, dtype=ember.complex128))):
        assert str(torch.result_type(t, other_t)) == f"torch.{ember.result_type(e, other_e).name}"
    assert str((t * 1j).dtype) == f"torch.{(e * 1j).dtype.name}"


def test_python_complex_follows_the_default_float():
    assert ember.tensor(1 + 2j).dtype is ember.complex64
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1 + 2j]).dtype is ember.complex128
        assert (ember.ones(2, dtype=ember.float32) * 1j).dtype is ember.complex64   # torch
    finally:
        ember.set_default_dtype(old)


def test_float16_with_a_complex_number_is_refused_clearly():
    # torch gives complex32 (chalf), which ember does not build
    with pytest.raises(ember.errors.NotInEmberError, match="complex32"):
        ember.ones(2, dtype=ember.float16) * 1j


def test_creation_and_host_copies():
    z = np.array([1 + 2j, -3.5 - 0j, complex(np.inf, np.nan)], dtype=np.complex128)
    e = ember.tensor(z)
    assert e.dtype is ember.complex128
    np.testing.assert_array_equal(e.numpy(), z)
    assert e.tolist()[0] == 1 + 2j and isinstance(ember.tensor(1 + 2j).item(), complex)
    for fn in ("zeros", "ones", "empty"):
        t = getattr(ember, fn)(2, 3, dtype=ember.complex64)
        assert t.dtype is ember.complex64 and t.shape == (2, 3)
    np.testing.assert_array_equal(ember.full((2,), 1 - 1j).numpy(),
                                  np.full(2, 1 - 1j, np.complex64))
    assert ember.full((2,), 1 - 1j).dtype is ember.complex64


def test_randn_and_rand_of_complex_draw_each_part_as_torch():
    ember.manual_seed(0)
    z = ember.randn(20000, dtype=ember.complex64).numpy()
    assert z.dtype == np.complex64
    # torch: each part N(0, 1/2), so E|z|^2 = 1
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.05
    assert abs(np.var(z.real) - 0.5) < 0.03 and abs(np.var(z.imag) - 0.5) < 0.03
    u = ember.rand(1000, dtype=ember.complex128).numpy()
    assert u.dtype == np.complex128 and 0 <= u.real.min() and u.imag.max() < 1


@pytest.mark.parametrize("values", [[1 + 2j, 3 - 1j], [1.5 + 2j, 3.25 - 1e-5j],
                                    [1e9 + 2j, complex("nan+1j"), complex("inf-infj")],
                                    [[1 + 2j, 3], [0, 1j]]])
def test_printing_is_torchs(values):
    assert repr(ember.tensor(values)) == repr(torch.tensor(values))
    assert repr(ember.tensor(values, dtype=ember.complex128)).replace("ember", "torch") == \
        repr(torch.tensor(values, dtype=torch.complex128))


@pytest.mark.parametrize("device", DEVICES)
def test_parts_conj_and_transfer(device):
    z = np.array([[1 + 2j, -3 + 0.5j], [np.inf - 1j, 0 - 0j]], dtype=np.complex64)
    e = ember.tensor(z, device=device)
    t = torch.tensor(z)
    assert e.device == ember.device(device)
    np.testing.assert_array_equal(e.cpu().numpy(), z)
    np.testing.assert_array_equal(e.real.cpu().numpy(), t.real.numpy())
    np.testing.assert_array_equal(e.imag.cpu().numpy(), t.imag.numpy())
    np.testing.assert_array_equal(e.conj().cpu().numpy(), t.conj().resolve_conj().numpy())
    assert e.real.dtype is ember.float32 and e.is_complex() and not e.is_conj()
    np.testing.assert_array_equal(ember.view_as_real(e).cpu().numpy(),
                                  torch.view_as_real(t).numpy())
    back = ember.view_as_complex(ember.view_as_real(e))
    np.testing.assert_array_equal(back.cpu().numpy(), z)
    re, im = ember.tensor([1.0, np.inf], device=device), ember.tensor([np.inf, 2.0], device=device)
    np.testing.assert_array_equal(ember.complex(re, im).cpu().numpy(),
                                  torch.complex(torch.tensor([1.0, np.inf]),
                                                torch.tensor([np.inf, 2.0])).numpy())
    # casts both ways: a complex cast to a real dtype keeps the real part (torch warns)
    np.testing.assert_array_equal(e.to(ember.complex128).cpu().numpy(), z.astype(np.complex128))
    np.testing.assert_array_equal(ember.ones(2, device=device).to(ember.complex64).cpu().numpy(),
                                  np.ones(2, np.complex64))
    np.testing.assert_array_equal(ember.zeros(2, dtype=ember.complex128, device=device).cpu()
                                  .numpy(), np.zeros(2, np.complex128))


def test_refusals_name_what_torch_refuses():
    with pytest.raises(TypeError, match="view_as_real is only supported for complex"):
        ember.view_as_real(ember.ones(2))
    with pytest.raises(ember.ShapeError, match="last dimension of size 2"):
        ember.view_as_complex(ember.ones(3))
    with pytest.raises(TypeError, match="non-complex"):
        ember.imag(ember.ones(2))
    with pytest.raises(TypeError, match="one dtype"):
        ember.complex(ember.ones(2), ember.ones(2, dtype=ember.float64))


def test_opencl_declares_complex64_and_complex128_with_fp64():
    dev = ember.device("opencl:0")
    caps = dev.backend.capabilities(dev.index)
    assert "complex64" in caps.dtypes
    assert ("complex128" in caps.dtypes) == ("float64" in caps.dtypes)
