"""ember.fft against torch.fft on cpu and opencl:0: every transform of the namespace with n,
s, dim and norm, real and complex input of both precisions, forward values and gradients for
a random upstream gradient (complex where the output is); the helpers; out=; torch's
errors; the OpenCL kernels' lengths (radix 2, 3, 5, 7 passes and Bluestein) against
numpy.fft; array_api.fft; SciPy's fft and fftconvolve on ember tensors."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)


def _array(shape, kind, dtype):
    real = RNG.standard_normal(shape)
    if kind == "c":
        real = real + 1j * RNG.standard_normal(shape)
    return real.astype(dtype)


def _has(dtype, device) -> bool:
    try:
        ember.zeros(1, dtype=dtype, device=device)
    except ember.EmberError:
        return False
    return True


def _tol(dtype):
    return (2e-5, 2e-5) if np.dtype(dtype) in (np.float32, np.complex64) else (1e-10, 1e-10)


def _both(fn_name, arr, device, kwargs, grad=True):
    """(torch result, ember result, torch grad, ember grad) for the same call; a complex
    leaf's gradient is PyTorch's conjugate Wirtinger one."""
    t_in = torch.from_numpy(arr.copy()).requires_grad_(grad)
    e_in = ember.tensor(arr, device=device, requires_grad=grad)
    t_out = getattr(torch.fft, fn_name)(t_in, **kwargs)
    e_out = getattr(ember.fft, fn_name)(e_in, **kwargs)
    if not grad:
        return t_out, e_out, None, None
    shape = tuple(t_out.shape)
    up = RNG.standard_normal(shape)
    if t_out.is_complex():
        up = up + 1j * RNG.standard_normal(shape)
    up = up.astype(t_out.detach().resolve_conj().numpy().dtype)
    (t_g,) = torch.autograd.grad(t_out, t_in, torch.from_numpy(up))
    (e_g,) = ember.autograd.grad(e_out, e_in, ember.tensor(up, device=device))
    return t_out, e_out, t_g, e_g


def _close(t, e, dtype, what):
    rtol, atol = _tol(dtype)
    want = t.detach().resolve_conj().numpy()
    got = e.detach().cpu().numpy()
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs torch's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs torch's {want.shape}"
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale, err_msg=what)


# (function, input kind, shape, kwargs)
CALLS = [
    ("fft", "c", (4, 6), {}), ("fft", "r", (5, 7), {"dim": 0, "norm": "ortho"}),
    ("fft", "c", (3, 5), {"n": 8, "norm": "forward"}), ("fft", "c", (3, 9), {"n": 4}),
    ("ifft", "c", (4, 6), {}), ("ifft", "r", (6,), {"n": 10, "norm": "forward"}),
    ("fft2", "c", (2, 4, 6), {}), ("fft2", "r", (4, 8), {}), ("fft", "r", (3, 8), {}),
    ("fft2", "r", (4, 6), {"s": (5, 3), "norm": "ortho"}),
    ("ifft2", "c", (3, 4, 5), {"dim": (0, 2)}),
    ("fftn", "c", (3, 4, 5), {}), ("fftn", "r", (3, 4, 5), {"s": (6, -1), "dim": (2, 0)}),
    ("fftn", "c", (3, 4, 5), {"s": (2, 7)}), ("ifftn", "c", (3, 4, 5), {"norm": "forward"}),
    ("rfft", "r", (4, 10), {}), ("rfft", "r", (4, 9), {"dim": 0, "n": 7, "norm": "ortho"}),
    ("irfft", "c", (4, 6), {}), ("irfft", "c", (4, 6), {"n": 11, "norm": "forward"}),
    ("irfft", "c", (5, 4), {"n": 3, "dim": 0}),
    ("rfft2", "r", (4, 6), {}), ("irfft2", "c", (4, 5), {"s": (4, 8), "norm": "ortho"}),
    ("rfftn", "r", (3, 4, 6), {}), ("rfftn", "r", (3, 4, 7), {"dim": (0, 2), "s": (5, 9)}),
    ("irfftn", "c", (3, 4, 5), {}), ("irfftn", "c", (3, 4, 5), {"s": (-1, 7), "dim": (0, 1)}),
    ("hfft", "c", (4, 6), {}), ("hfft", "c", (3, 5), {"n": 9, "norm": "ortho"}),
    ("ihfft", "r", (4, 9), {}), ("ihfft", "r", (4, 8), {"n": 6, "dim": 0}),
    ("hfft2", "c", (4, 5), {}), ("ihfft2", "r", (4, 6), {"norm": "forward"}),
    ("hfftn", "c", (3, 4, 5), {"s": (3, 4, 8)}), ("ihfftn", "r", (3, 4, 6), {}),
    ("ihfftn", "r", (3, 4, 6), {"dim": (2, 0), "norm": "ortho"}),
]
KIND_DTYPES = {"r": (np.float32, np.float64), "c": (np.complex64, np.complex128)}


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c[0]}-{c[1]}{c[2]}-{c[3]}")
def test_transform_and_gradient_match_torch(call, device):
    name, kind, shape, kwargs = call
    dtypes = KIND_DTYPES[kind]
    if device != "cpu":
        dtypes = dtypes[:1]            # the float64 kernels are the same code
    for dtype in dtypes:
        arr = _array(shape, kind, dtype)
        t_out, e_out, t_g, e_g = _both(name, arr, device, kwargs)
        _close(t_out, e_out, dtype, f"{name}{kwargs} {np.dtype(dtype).name} on {device}")
        _close(t_g, e_g, dtype, f"grad of {name}{kwargs} {np.dtype(dtype).name} on {device}")


def test_integer_input_is_computed_in_the_default_float(device):
    arr = np.arange(12, dtype=np.int64).reshape(3, 4)
    for name in ("fft", "rfft", "ihfft", "fftn", "rfftn"):
        t = getattr(torch.fft, name)(torch.from_numpy(arr))
        e = getattr(ember.fft, name)(ember.tensor(arr, device=device))
        _close(t, e, np.float32, name)


def test_helpers_match_torch(device):
    for n, d in ((1, 1.0), (5, 0.5), (8, 2.0)):
        for name in ("fftfreq", "rfftfreq"):
            t = getattr(torch.fft, name)(n, d)
            e = getattr(ember.fft, name)(n, d, device=device)
            _close(t, e, np.float32, f"{name}({n}, {d})")
        t = torch.fft.fftfreq(n, d, dtype=torch.float64)
        _close(t, ember.fft.fftfreq(n, d, dtype=ember.float64, device=device), np.float64,
               "fftfreq float64")
    arr = _array((3, 4, 5), "r", np.float32)
    for dims in (None, 1, (0, 2), (-1,)):
        for name in ("fftshift", "ifftshift"):
            t = getattr(torch.fft, name)(torch.from_numpy(arr), dims)
            e = getattr(ember.fft, name)(ember.tensor(arr, device=device), dims)
            _close(t, e, np.float32, f"{name}({dims})")


def test_out_is_written(device):
    arr = _array((4, 6), "c", np.complex64)
    out = ember.empty((4, 6), dtype=ember.complex64, device=device)
    got = ember.fft.fft(ember.tensor(arr, device=device), out=out)
    assert got is out
    _close(torch.fft.fft(torch.from_numpy(arr)), out, np.complex64, "fft(out=)")
    out = ember.empty((0,), dtype=ember.float32, device=device)   # resized without a warning
    ember.fft.irfft(ember.tensor(arr, device=device), out=out)
    assert tuple(out.shape) == (4, 10)
    with pytest.raises(ember.EmberError, match="rfft.*complex output"):
        ember.fft.rfft(ember.tensor(arr.real.copy(), device=device),
                       out=ember.empty((4, 4), device=device))


@pytest.mark.parametrize("call, match", [
    (lambda F, x: F.fft(x, norm="bogus"), "Invalid normalization mode"),
    (lambda F, x: F.fft(x, n=0), "Invalid number of data points"),
    (lambda F, x: F.fftn(x, dim=(0, 0)), "unique"),
    (lambda F, x: F.fftn(x, s=(2, 3), dim=(0,)), "same length"),
    (lambda F, x: F.fftn(x, s=(2, 3, 4)), "only has 2 dimensions"),
    (lambda F, x: F.rfft(x.to(ember.complex64)), "real input tensor"),
    (lambda F, x: F.rfftn(x.to(ember.complex64)), "real-valued input"),
    (lambda F, x: F.irfft(x[:, :1]), "Invalid number of data points"),
    (lambda F, x: F.fft(x, dim=2), "out of range"),
    (lambda F, x: F.fft(x.sum()), "no dimensions"),
    (lambda F, x: F.fft(x.half()), "Unsupported dtype float16"),
    (lambda F, x: F.fftfreq(4, layout="sparse_coo"), "strided"),
    (lambda F, x: F.fftfreq(-1), "non-negative"),
])
def test_torch_errors_are_ember_errors(call, match):
    x = ember.randn(3, 4)
    with pytest.raises(ember.EmberError, match=match):
        call(ember.fft, x)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 12, 16, 30, 49, 64, 105, 343, 512, 1000,
                               11, 13, 97, 127, 1031])
def test_opencl_kernel_lengths(n):
    """Every radix (8, 4, 2, 3, 5, 7) and Bluestein (primes 11 .. 1031) against numpy.fft,
    along the last dim and along a strided one."""
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError as exc:
        pytest.skip(f"opencl:0: {exc}")
    for dtype, tol in ((np.complex64, 3e-6), (np.complex128, 1e-13)):
        if dtype is np.complex128 and not _has(ember.complex128, "opencl:0"):
            continue
        arr = _array((3, n), "c", dtype)
        x = ember.tensor(arr, device="opencl:0")
        for dim, ref in ((1, np.fft.fft(arr, axis=1)),
                         (0, np.fft.ifft(arr, axis=0))):
            got = (ember.fft.fft(x, dim=1) if dim == 1 else ember.fft.ifft(x, dim=0)).numpy()
            err = np.abs(got - ref).max() / max(1.0, np.abs(ref).max())
            assert err < tol * max(1.0, np.log2(n)), (n, dtype, dim, err)


def test_opencl_one_work_group_per_line_kernel(monkeypatch):
    """The GPU's local-memory kernel, forced on the CPU device (it runs anywhere)."""
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError as exc:
        pytest.skip(f"opencl:0: {exc}")
    from ember.backends.opencl import fft as ocl_fft
    monkeypatch.setattr(ocl_fft.Plan, "fits_locally", lambda self, n, inner: n >= 16)
    for n in (16, 60, 343, 1024):
        arr = _array((3, n), "c", np.complex64)
        got = ember.fft.ifft(ember.tensor(arr, device="opencl:0"), norm="ortho").numpy()
        np.testing.assert_allclose(got, np.fft.ifft(arr, norm="ortho"), rtol=1e-5,
                                   atol=1e-5 * np.sqrt(n))


def test_opencl_2d_along_the_first_dim_of_a_view():
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError as exc:
        pytest.skip(f"opencl:0: {exc}")
    arr = _array((6, 10), "r", np.float32)
    x = ember.tensor(arr, device="opencl:0")
    view = x.mT[1:, ::2]                      # strided, offset, transposed
    want = np.fft.rfft2(arr.T[1:, ::2])
    np.testing.assert_allclose(ember.fft.rfft2(view).numpy(), want, rtol=1e-5, atol=1e-5)
    # an even last dim of stride 2: the packed real transform reads pairs 2 apart
    arr = _array((6, 16), "r", np.float32)
    view = ember.tensor(arr, device="opencl:0")[1:, ::2]
    for norm in ("backward", "ortho"):
        np.testing.assert_allclose(ember.fft.rfft2(view, norm=norm).numpy(),
                                   np.fft.rfft2(arr[1:, ::2], norm=norm), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ember.fft.fft(view, norm=norm).numpy(),
                                   np.fft.fft(arr[1:, ::2], norm=norm), rtol=1e-5, atol=1e-5)


def test_opencl_more_dims_than_the_kernels_index():
    """A contiguous 9-d tensor (the gather kernel indexes 8 dims: contiguous ones merge)."""
    try:
        ember.Device("opencl").concrete()
    except ember.EmberError as exc:
        pytest.skip(f"opencl:0: {exc}")
    arr = _array((2,) * 9, "r", np.float32)
    got = ember.fft.fftn(ember.tensor(arr, device="opencl:0"), dim=(0, 8)).numpy()
    np.testing.assert_allclose(got, np.fft.fftn(arr, axes=(0, 8)), rtol=1e-5, atol=1e-5)


def test_array_api_fft_extension():
    xp = ember.array_api
    arr = _array((4, 6), "c", np.complex64)
    x = xp.asarray(arr)
    np.testing.assert_allclose(xp.fft.fft(x).numpy(), np.fft.fft(arr), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xp.fft.irfftn(x, s=(4, 9)).numpy(),
                               np.fft.irfftn(arr, s=(4, 9), axes=(0, 1)), rtol=1e-5, atol=1e-5)
    real = xp.asarray(arr.real.copy())
    np.testing.assert_allclose(xp.fft.rfft(real, n=5, axis=0).numpy(),
                               np.fft.rfft(arr.real, n=5, axis=0), rtol=1e-5, atol=1e-5)
    assert xp.fft.fftfreq(4, d=0.5).dtype == xp.float32
    with pytest.raises(ember.EmberError, match="complex floating"):
        xp.fft.fft(real)
    with pytest.raises(ember.EmberError, match="real floating"):
        xp.fft.rfft(x)


_SCIPY_CODE = textwrap.dedent("""
    import sys, traceback
    import numpy as np, ember, scipy.fft, scipy.signal

    def check(dev):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64,)).astype(np.float64)
        b = rng.standard_normal((9,)).astype(np.float64)
        x, y = ember.tensor(a, device=dev), ember.tensor(b, device=dev)
        r = scipy.fft.rfft(x)
        assert type(r) is ember.Tensor and r.dtype == ember.complex128, (type(r), r.dtype)
        assert str(r.device) == dev, r.device
        np.testing.assert_allclose(r.numpy(), np.fft.rfft(a), rtol=1e-12, atol=1e-12)
        back = scipy.fft.irfft(r, n=64)
        assert type(back) is ember.Tensor and str(back.device) == dev, back.device
        np.testing.assert_allclose(back.numpy(), a, rtol=1e-12, atol=1e-12)
        for mode in ("full", "same", "valid"):
            c = scipy.signal.fftconvolve(x, y, mode=mode)
            assert type(c) is ember.Tensor and str(c.device) == dev, (type(c), mode)
            np.testing.assert_allclose(c.numpy(), scipy.signal.fftconvolve(a, b, mode=mode),
                                       rtol=1e-12, atol=1e-12)
        a2 = rng.standard_normal((16, 12)).astype(np.float32)
        c = scipy.signal.fftconvolve(ember.tensor(a2, device=dev),
                                     ember.tensor(a2[:3, :4], device=dev))
        assert c.dtype == ember.float32 and str(c.device) == dev, (c.dtype, c.device)
        np.testing.assert_allclose(c.numpy(), scipy.signal.fftconvolve(a2, a2[:3, :4]),
                                   rtol=1e-4, atol=1e-4)

    for dev in sys.argv[1:]:
        try:
            check(dev)
        except Exception:
            print(f"FAILED {dev}: " + traceback.format_exc().replace(chr(10), " | "))
        else:
            print(f"ok {dev}")
""")


@pytest.fixture(scope="module")
def scipy_on_ember():
    """One interpreter (SciPy reads SCIPY_ARRAY_API=1 when it loads) runs the SciPy checks
    on cpu and, where it runs, opencl:0: (stdout, stderr)."""
    pytest.importorskip("scipy")
    devices = ["cpu"]
    try:
        ember.Device("opencl").concrete()
        devices.append("opencl:0")
    except ember.EmberError:
        pass
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, "-c", _SCIPY_CODE, *devices], capture_output=True,
                         text=True, env=env, timeout=180)
    return out.stdout, out.stderr


def test_scipy_fft_and_fftconvolve_on_ember_tensors(device, scipy_on_ember):
    """SciPy with SCIPY_ARRAY_API=1: rfft, irfft and fftconvolve (1-D in float64, every
    mode; 2-D in float32) equal NumPy's and come back as ember tensors on the input's
    device."""
    stdout, stderr = scipy_on_ember
    assert f"ok {device}" in stdout.splitlines(), (stdout[-3000:], stderr[-3000:])
    if device != "cpu":
        # a complex program the OpenCL compiler rejected printed its errors (and fell back)
        assert "errors generated" not in stderr, stderr[-3000:]


@pytest.mark.parametrize("module", ["numpy.fft", "scipy.fft", "standard"])
def test_array_api_kernel_table(module):
    """backends/array_api.fft_kernels through numpy.fft (the CPU without SciPy), scipy.fft
    (the CPU's choice) and the standard's xp.fft with complex-only fftn (array_api_strict's
    rules), against numpy.fft; dtypes kept."""
    from ember.backends import array_api
    if module == "scipy.fft":
        sfft = pytest.importorskip("scipy.fft")
        table = array_api.fft_kernels(np, sfft, native=True)
    else:
        table = array_api.fft_kernels(np, native=module == "numpy.fft")
    a = _array((3, 8), "r", np.float32)
    c = _array((3, 8), "c", np.complex64)
    out = table["fft_c2c"](c, dims=(1,), normalization="by_n", forward=False)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, np.fft.ifft(c), rtol=1e-5, atol=1e-6)
    out = table["fft_r2c"](a, dims=(0, 1), normalization="by_root_n", onesided=False)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, np.fft.fft2(a, norm="ortho"), rtol=1e-5, atol=1e-5)
    out = table["fft_r2c"](a, dims=(1,), normalization="none", onesided=True)
    np.testing.assert_allclose(out, np.fft.rfft(a), rtol=1e-5, atol=1e-5)
    out = table["fft_c2r"](c[:, :5], dims=(0, 1), normalization="by_n", last_dim_size=8)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.fft.irfftn(c[:, :5], s=(3, 8), axes=(0, 1)),
                               rtol=1e-5, atol=1e-5)
