"""On a machine with a GPU and a CuPy plugin: the conformance suite on cuda:0, CuPy's own
kernels against the CPU's, ops on two device indices, and the ember.cuda namespace.

Run by tools/gpu_check.sh; skipped, with the probe's reason, everywhere else.
"""
from __future__ import annotations

import ember
import numpy as np
import pytest

_REASON = "" if ember.cuda.is_available() else (
    ember.cuda.unavailable_reason().splitlines() or ["no CUDA/ROCm device"])[0]
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(_REASON), reason=_REASON)]


def _conformance():
    try:
        from ember import testing
        return list(testing.CASES), testing
    except (ImportError, AttributeError):       # the suite is not in this build
        return [], None


CASES, TESTING = _conformance()


def _supported(dtype: str) -> bool:
    dev = ember.device("cuda").concrete()
    return dtype in dev.backend.capabilities(dev.index).dtypes


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conformance_forward_on_cuda0(case):
    ran = [TESTING.check_forward(case, d, "cuda:0") for d in case.dtypes if _supported(d)]
    if not ran:
        pytest.skip(f"cuda:0 supports none of {case.dtypes}")


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=lambda c: c.name)
def test_conformance_gradients_on_cuda0(case):
    TESTING.check_gradients(case, "cuda:0")


# -- the kernels CuPy supplies itself, against the CPU's --------------------------------

DTYPES = ["float16", "float32", "float64", "int64", "int32", "int8", "uint8", "bool"]


def both(host: np.ndarray):
    return ember.tensor(host, device="cpu"), ember.tensor(host, device="cuda:0")


def same(cpu_out, gpu_out, dtype="float32"):
    assert gpu_out.device == ember.device("cuda").concrete()
    assert gpu_out.dtype == cpu_out.dtype
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(gpu_out.cpu().numpy().astype(np.float64),
                               cpu_out.numpy().astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_accumulates_repeats(dtype):
    rng = np.random.default_rng(1)
    x = (rng.integers(0, 3, (5, 4)) > 0) if dtype == "bool" else \
        rng.integers(0, 5, (5, 4)).astype(dtype)
    src = (rng.integers(0, 3, (6, 4)) > 0) if dtype == "bool" else \
        rng.integers(0, 5, (6, 4)).astype(dtype)
    index = np.array([0, 2, 2, 4, 0, 2])
    (xc, xg), (sc, sg), (ic, ig) = both(x), both(src), both(index)
    same(xc.index_add(0, ic, sc), xg.index_add(0, ig, sg), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add_accumulates_repeats(dtype):
    rng = np.random.default_rng(2)
    x = np.zeros((3, 5), dtype=dtype)
    src = (rng.integers(0, 2, (3, 5)) > 0) if dtype == "bool" else \
        rng.integers(1, 4, (3, 5)).astype(dtype)
    index = rng.integers(0, 5, (3, 5))
    (xc, xg), (sc, sg), (ic, ig) = both(x), both(src), both(index)
    same(xc.scatter_add(1, ic, sc), xg.scatter_add(1, ig, sg), dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erf(dtype):
    xc, xg = both(np.linspace(-3, 3, 41).astype(dtype))
    same(xc.erf(), xg.erf(), dtype)


def test_setitem_with_repeated_indices_keeps_the_last_write():
    index = np.array([1, 3, 1, 1, 0, 3])
    values = np.arange(6, dtype=np.float32) + 10
    xc, xg = both(np.zeros(5, dtype=np.float32))
    xc[ember.tensor(index)] = ember.tensor(values)
    xg[ember.tensor(index, device="cuda:0")] = ember.tensor(values, device="cuda:0")
    same(xc, xg)
    assert xg.cpu().numpy()[1] == 13.0 and xg.cpu().numpy()[3] == 15.0


def test_assign_in_place_and_broadcast():
    xc, xg = both(np.zeros((2, 3), dtype=np.float32))
    for x in (xc, xg):
        x[0] = 7.0
        x[1:] = ember.tensor([1.0, 2.0, 3.0], device=x.device)
        x.add_(1)
    same(xc, xg)


# -- devices, memory and the namespace ---------------------------------------------------

def test_namespace_answers():
    assert ember.cuda.device_count() >= 1
    assert ember.cuda.get_device_name(0)
    assert ember.cuda.current_device() == 0
    before = ember.cuda.memory_allocated()
    big = ember.zeros(1024, 1024, device="cuda:0")
    ember.cuda.synchronize()
    assert ember.cuda.memory_allocated() >= before + big.numel() * 4
    assert ember.cuda.unavailable_reason() == ""


def test_rocm_build_serves_cuda_as_an_alias():
    backend = ember.device("cuda").concrete().backend
    if backend.name != "rocm":
        pytest.skip("an NVIDIA build: 'cuda' is its own type")
    assert ember.device("cuda").concrete() == ember.device("rocm:0")
    assert ember.rocm.is_available()


def test_ops_follow_their_device_index():
    if ember.cuda.device_count() < 2:
        pytest.skip(f"needs two GPUs, this machine has {ember.cuda.device_count()}")
    kind = ember.device("cuda").concrete().type
    a = ember.arange(6.0, device=f"{kind}:0").reshape(2, 3)
    b = ember.arange(6.0, device=f"{kind}:1").reshape(2, 3)
    c = (b * 2 + 1).sum(0)
    assert c.device == ember.device(f"{kind}:1")
    assert c._data.device.id == 1         # the kernel ran, and allocated, on GPU 1
    np.testing.assert_allclose(c.cpu().numpy(), [7.0, 11.0, 15.0])
    with pytest.raises(ember.DeviceMismatchError):
        a + b
    moved = a.to(f"{kind}:1")             # peer copy
    assert moved._data.device.id == 1
    np.testing.assert_allclose((moved + b).cpu().numpy(), 2 * np.arange(6.0).reshape(2, 3))
    x = ember.ones(3, device=f"{kind}:0", requires_grad=True)
    (x.to(f"{kind}:1") * 3).sum().backward()
    assert x.grad.device == ember.device(f"{kind}:0")
    np.testing.assert_allclose(x.grad.cpu().numpy(), [3.0, 3.0, 3.0])
