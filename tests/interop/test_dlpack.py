"""DLPack both ways with NumPy and PyTorch (memory shared: a write on one side is read on the
other), the array-API protocol methods, OpenCL's refusal and its copy=True export, CuPy on
a GPU."""
from __future__ import annotations

import array_api_compat
import ember
import ember.array_api as xp
import numpy as np
import pytest
from ember.utils.dlpack import DLPackError, from_dlpack, to_dlpack

DTYPES = ["float32", "float64", "int64", "int32", "int8", "uint8", "bool"]


def _host(dtype: str, shape=(3, 4)) -> np.ndarray:
    a = np.arange(np.prod(shape)).reshape(shape) % 5
    return a.astype(dtype)


def _bump(value):
    return not value if isinstance(value, (bool, np.bool_)) else value + 1


# -- NumPy ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_to_ember_shares_memory(dtype):
    a = _host(dtype)
    t = ember.from_dlpack(a)
    assert t.dtype == ember.dtypes.get_dtype(dtype) and t.shape == a.shape
    a[1, 2] = _bump(a[1, 2])                      # numpy writes, ember reads
    assert t[1, 2].item() == a[1, 2]
    t[0, 0] = _bump(a[0, 0])                      # ember writes, numpy reads
    assert a[0, 0] == t[0, 0].item()


@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_to_numpy_shares_memory(dtype):
    t = ember.tensor(_host(dtype))
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == tuple(t.shape)
    with ember.no_grad():
        t[2, 3] = _bump(t[2, 3].item())
    assert a[2, 3] == t[2, 3].item()
    a[0, 1] = _bump(a[0, 1])
    assert t[0, 1].item() == a[0, 1]


def test_in_place_ops_and_views_share_memory():
    t = ember.zeros(4, 6)
    a = np.from_dlpack(t)
    t.add_(2.0)                                   # ember's in-place kernel
    assert (a == 2.0).all()
    view = np.from_dlpack(t.mT[::2])              # a strided view exports as one
    view[:] = -1.0
    assert (t.numpy()[:, ::2] == -1.0).all() and (t.numpy()[:, 1::2] == 2.0).all()


def test_read_only_arrays_export_read_only():
    host = np.ones(3, dtype=np.float32)
    host.flags.writeable = False
    t = ember.from_numpy(host)
    a = np.from_dlpack(t)                         # DLPack 1.x carries the read-only flag
    assert not a.flags.writeable and (a == 1).all()
    with pytest.raises(DLPackError, match="clone"):
        t.__dlpack__()                            # an unversioned capsule has no flag


def test_zero_dim_and_copy_keywords():
    t = ember.tensor(3.5).sum()
    assert np.from_dlpack(t).item() == 3.5
    a = _host("float32")
    copied = ember.from_dlpack(a, copy=True)
    a[0, 0] = 99
    assert copied[0, 0].item() == 0
    assert ember.from_dlpack(copied) is copied


# -- PyTorch ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_ember_shares_memory(torch, dtype):
    tt = torch.from_numpy(_host(dtype))
    t = ember.from_dlpack(tt)
    with torch.no_grad():
        tt[1, 1] = _bump(tt[1, 1].item())
    assert t[1, 1].item() == tt[1, 1].item()
    t[2, 0] = _bump(t[2, 0].item())
    assert tt[2, 0].item() == t[2, 0].item()


@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_to_torch_shares_memory(torch, dtype):
    t = ember.tensor(_host(dtype))
    tt = torch.from_dlpack(t)
    assert str(tt.dtype) == f"torch.{dtype}" and tuple(tt.shape) == tuple(t.shape)
    tt[0, 3] = _bump(tt[0, 3].item())
    assert t[0, 3].item() == tt[0, 3].item()
    t[1, 0] = _bump(t[1, 0].item())
    assert tt[1, 0].item() == t[1, 0].item()


def test_capsules_both_ways(torch):
    t = ember.arange(6.0)
    tt = torch.utils.dlpack.from_dlpack(to_dlpack(t))
    tt[0] = 10.0
    assert t[0].item() == 10.0
    capsule = torch.utils.dlpack.to_dlpack(torch.arange(4, dtype=torch.int32))
    back = from_dlpack(capsule)
    assert back.dtype == ember.int32 and back.tolist() == [0, 1, 2, 3]
    with pytest.raises(DLPackError, match="only once"):
        from_dlpack(capsule)                      # the first import consumed it


def test_torch_results_match(torch):
    """A round trip through torch ops: ember -> torch -> ember keeps values and dtype."""
    t = ember.randn(5, 3)
    back = ember.from_dlpack(torch.from_dlpack(t).mul(2.0))
    np.testing.assert_array_equal(back.numpy(), t.numpy() * 2.0)


# -- refusals ---------------------------------------------------------------------------

def test_refusals_name_the_fix(torch):
    with pytest.raises(DLPackError, match="detach"):
        np.from_dlpack(ember.ones(2, requires_grad=True))
    with pytest.raises(DLPackError, match=r"\.float\(\)"):
        np.from_dlpack(ember.ones(2, dtype=ember.bfloat16))
    with pytest.raises(DLPackError, match="float32"):
        ember.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
    with pytest.raises(DLPackError, match="__dlpack__"):
        ember.from_dlpack([1, 2, 3])
    assert issubclass(DLPackError, BufferError) and issubclass(DLPackError, ember.EmberError)


# -- devices: OpenCL has no DLPack consumer -------------------------------------------------

def test_device_tensors(device):
    a = _host("float32")
    t = ember.from_dlpack(a, device=device)
    assert t.device == ember.device(device) and (t.numpy() == a).all()
    if device == "cpu":
        assert t.__dlpack_device__() == (1, 0)
        return
    assert t.__dlpack_device__() == (4, ember.device(device).index)   # kDLOpenCL
    with pytest.raises(DLPackError, match=r"\.cpu\(\)"):
        np.from_dlpack(t)
    with pytest.raises(DLPackError, match="copy=True"):
        t.__dlpack__(dl_device=(1, 0))
    host = np.from_dlpack(t, copy=True)           # the standard's copy: a host export
    assert (host == a).all()
    pending = t * 2.0 + 1.0                       # deferred (fused) work is done first
    np.testing.assert_array_equal(np.from_dlpack(pending, copy=True), a * 2.0 + 1.0)
    with pytest.raises(DLPackError, match="copy=False"):
        ember.from_dlpack(a, device=device, copy=False)
    shared = np.from_dlpack(t.cpu())              # the fix the message names
    assert (shared == a).all()


# -- the array API protocol ---------------------------------------------------------------

def test_array_namespace_and_to_device(device):
    t = ember.ones(2, 3, device=device)
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ember.EmberError, match="2023.12"):
        t.__array_namespace__(api_version="2099.12")
    # how scikit-learn and SciPy find the namespace
    assert array_api_compat.is_array_api_obj(t)
    assert array_api_compat.array_namespace(t, t) is xp
    assert array_api_compat.device(t) == ember.device(device)
    moved = t.to_device("cpu")
    assert moved.device == ember.device("cpu") and moved.tolist() == [[1.0] * 3] * 2
    info = xp.__array_namespace_info__()
    assert ember.device(device) in info.devices()
    assert info.default_device() == ember.get_default_device()
    assert set(info.dtypes(device=device, kind="integral")) <= {"int8", "int16", "int32",
                                                                "int64", "uint8"}
    assert info.dtypes(kind="real floating")["float32"] is xp.float32
    assert info.capabilities()["boolean indexing"] is True


# -- CuPy: run where a GPU is lent ---------------------------------------------------------

_GPU = "" if ember.cuda.is_available() else (
    ember.cuda.unavailable_reason().splitlines() or ["no CUDA/ROCm device"])[0]


@pytest.mark.gpu
@pytest.mark.skipif(bool(_GPU), reason=_GPU)
def test_cupy_both_ways():
    cupy = ember.device("cuda").concrete().backend.cupy
    c = cupy.arange(6, dtype=cupy.float32)
    t = ember.from_dlpack(c)
    assert t.device == ember.device("cuda").concrete()
    c[0] = 5.0
    assert t[0].item() == 5.0
    back = cupy.from_dlpack(t)
    back[1] = 7.0
    assert t[1].item() == 7.0
    assert t.__dlpack_device__()[0] in (2, 10)    # kDLCUDA / kDLROCM
