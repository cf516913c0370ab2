"""ember.fft: torch.fft's namespace (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2,
irfft2, rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn, fftfreq, rfftfreq,
fftshift, ifftshift), written as PyTorch's SpectralOps.cpp writes it over the three
primitives of core/ops/fft.py (fft_c2c, fft_r2c, fft_c2r), so the argument handling (n, s,
dim, norm), the dtype promotion, the errors and the gradients are PyTorch's.

Kernels: NumPy's pocketfft through scipy.fft on the CPU (numpy.fft without SciPy), CuPy's
cuFFT/hipFFT on cuda/rocm, and ember's own Stockham/Bluestein FFT in OpenCL C on opencl
(backends/opencl/fft.py).
"""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberIndexError, EmberTypeError, EmberValueError
from ..functional.movement import roll
from ..ops import _out
from ..ops.fft import fft_c2c_op, fft_c2r_op, fft_r2c_op
from ..signatures import numpy_names
from ..tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# --- argument handling (SpectralOps.cpp) -------------------------------------------------

def _need_tensor(fname, x):
    if type(x) is not Tensor:
        raise EmberTypeError(f"fft.{fname}(): argument 'input' must be a Tensor, not "
                             f"{type(x).__name__}")


def _norm(fname, norm, forward: bool) -> str:
    """PyTorch's norm_from_string: the primitive's normalization for this direction."""
    if norm is None or norm == "backward":
        return "none" if forward else "by_n"
    if norm == "forward":
        return "by_n" if forward else "none"
    if norm == "ortho":
        return "by_root_n"
    raise EmberValueError(f"fft.{fname}: Invalid normalization mode: {norm!r}; expected None, "
                          "'forward', 'backward' or 'ortho'")


def _promote(fname, x: Tensor, require_complex: bool) -> Tensor:
    """PyTorch's promote_tensor_fft: integers and bool in the default float dtype; float16
    and bfloat16 refused (PyTorch's CPU FFT refuses them too); complex if asked."""
    dt = x._dtype
    if dt.category == D.COMPLEX:
        return x
    if dt.category != D.FLOAT:
        dt = D.get_default_dtype()
    if dt not in (D.float32, D.float64):
        raise DtypeNotSupportedError(
            f"fft.{fname}: Unsupported dtype {dt.name}; the FFT takes float32, float64, "
            "complex64 or complex128 input. Fix: x.float() (or x.double()) first")
    if require_complex:
        dt = dt.to_complex()
    return x if dt is x._dtype else x.to(dt)


def _wrap_dim(fname, dim, ndim: int) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int):
        if hasattr(dim, "__index__"):
            dim = dim.__index__()
        else:
            raise EmberTypeError(f"fft.{fname}: dim must be an int, got {type(dim).__name__}")
    if ndim == 0:
        raise EmberIndexError(f"fft.{fname}: dimension specified as {dim} but the tensor has "
                              "no dimensions; the FFT needs at least a 1-d tensor")
    if not -ndim <= dim < ndim:
        raise EmberIndexError(f"fft.{fname}: Dimension out of range (expected to be in range "
                              f"of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _check_n(n):
    if n < 1:
        raise EmberValueError(f"Invalid number of data points ({n}) specified; expected n >= 1")


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """PyTorch's resize_fft_input: each dim cut to, or zero-padded at its end to, its size."""
    pads = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes):
        have = x._data.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            pads[2 * (x.ndim - 1 - d) + 1] = n - have
    if any(pads):
        x = ops.pad(x, pads[:max(i for i, p in enumerate(pads) if p) + 1])
    return x


def _shape_and_dims(fname, x: Tensor, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args -> (sizes, dims)."""
    ndim = x.ndim
    sizes = x._data.shape
    dims = None
    if dim is not None:
        dim_list = list(dim) if isinstance(dim, (list, tuple)) else [dim]
        dims = [_wrap_dim(fname, d, ndim) for d in dim_list]
        if len(set(dims)) != len(dims):
            raise EmberValueError(f"fft.{fname}: FFT dims must be unique, got {tuple(dim_list)}")
    if s is not None:
        s = [int(v) for v in (s if isinstance(s, (list, tuple)) else [s])]
        if dims is not None and len(dims) != len(s):
            raise EmberValueError(f"fft.{fname}: When given, dim and shape arguments must "
                                  f"have the same length (got s={tuple(s)}, "
                                  f"dim={tuple(dims)})")
        if len(s) > ndim:
            raise EmberValueError(f"fft.{fname}: Got shape with {len(s)} values but input "
                                  f"tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [sizes[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(sizes)
    else:
        shape = [sizes[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2r_shape_and_dims(fname, x: Tensor, s, dim):
    """PyTorch's canonicalize_fft_c2r_shape_and_dim_args -> (sizes, dims, last_dim_size)."""
    shape, dims = _shape_and_dims(fname, x, s, dim)
    if not shape:
        raise EmberValueError(f"fft.{fname} must transform at least one axis")
    if s is None or list(s if isinstance(s, (list, tuple)) else [s])[-1] == -1:
        last = 2 * (x._data.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _finish(fname, result: Tensor, out, input: Tensor) -> Tensor:
    if out is None:
        return result
    return _out.write_out(f"fft.{fname}", result, out, (input,))


# --- the 1-D transforms (fft_c2c / fft_r2c / fft_c2r of SpectralOps.cpp) ------------------

def _c2c(fname, x, n, dim, norm, forward, out):
    _need_tensor(fname, x)
    if x._dtype.category != D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a complex input tensor, but got "
                                     f"{x._dtype.name}")
    d = _wrap_dim(fname, dim, x.ndim)
    size = x._data.shape[d] if n is None else int(n)
    _check_n(size)
    y = _resize(x, [d], [size]) if n is not None else x
    result = run(fft_c2c_op, y, dims=(d,), normalization=_norm(fname, norm, forward),
                 forward=forward)
    return _finish(fname, result, out, x)


def _r2c(fname, x, n, dim, norm, forward, onesided, out):
    _need_tensor(fname, x)
    if x._dtype.category == D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a real input tensor, but got "
                                     f"{x._dtype.name}")
    if out is not None and type(out) is Tensor and out._dtype.category != D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a complex output tensor, but got "
                                     f"{out._dtype.name}")
    d = _wrap_dim(fname, dim, x.ndim)
    size = x._data.shape[d] if n is None else int(n)
    _check_n(size)
    y = _promote(fname, x, False)
    if n is not None:
        y = _resize(y, [d], [size])
    result = run(fft_r2c_op, y, dims=(d,), normalization=_norm(fname, norm, forward),
                 onesided=onesided)
    if not forward:
        result = result.conj()
    return _finish(fname, result, out, x)


def _c2r(fname, x, n, dim, norm, forward, out):
    _need_tensor(fname, x)
    if out is not None and type(out) is Tensor and out._dtype.category == D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a floating point output tensor, "
                                     f"but got {out._dtype.name}")
    y = _promote(fname, x, True)
    d = _wrap_dim(fname, dim, y.ndim)
    size = 2 * (y._data.shape[d] - 1) if n is None else int(n)
    _check_n(size)
    if n is not None:
        y = _resize(y, [d], [size // 2 + 1])
    if forward:
        y = y.conj()
    result = run(fft_c2r_op, y, dims=(d,), normalization=_norm(fname, norm, forward),
                 last_dim_size=size)
    return _finish(fname, result, out, x)


@numpy_names
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of input along dim.

    Parameters
    ----------
    input : Tensor
        real or complex; integers and bool are computed in the default float dtype.
    n : int, optional
        the signal length: input is zero-padded or trimmed to n along dim.
    dim : int
        the dimension transformed (default the last).
    norm : str, optional
        "backward" (default, also None): no scale forward, 1/n backward; "forward": 1/n
        forward; "ortho": 1/sqrt(n) both ways.

    Returns
    -------
    Tensor
        complex (complex64 for float32 input, complex128 for float64).

    Examples
    --------
    >>> import ember
    >>> X = ember.fft.fft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    >>> X.real
    tensor([10., -2., -2., -2.])
    >>> ember.fft.ifft(X).real
    tensor([1., 2., 3., 4.])

    PyTorch
    -------
    ``torch.fft.fft``
    """
    if type(input) is Tensor and input._dtype.category == D.COMPLEX:
        return _c2c("fft", input, n, dim, norm, True, out)
    return _r2c("fft", input, n, dim, norm, True, False, out)


@numpy_names
def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform of input along dim (see fft
    for n, dim and norm; "backward", the default, scales by 1/n).

    PyTorch
    -------
    ``torch.fft.ifft``
    """
    if type(input) is Tensor and input._dtype.category == D.COMPLEX:
        return _c2c("ifft", input, n, dim, norm, False, out)
    return _r2c("ifft", input, n, dim, norm, False, False, out)


@numpy_names
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of real input: the n//2 + 1 non-negative frequencies (the others are their
    conjugates).

    PyTorch
    -------
    ``torch.fft.rfft``
    """
    return _r2c("rfft", input, n, dim, norm, True, True, out)


@numpy_names
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of rfft: the real signal of length n (default 2 (m - 1), m the input's
    length along dim) whose spectrum's non-negative half is input.

    PyTorch
    -------
    ``torch.fft.irfft``
    """
    return _c2r("irfft", input, n, dim, norm, False, out)


@numpy_names
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: real, length n
    (default 2 (m - 1)).

    PyTorch
    -------
    ``torch.fft.hfft``
    """
    return _c2r("hfft", input, n, dim, norm, True, out)


@numpy_names
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of hfft: the n//2 + 1 first values of the inverse FFT of real input.

    PyTorch
    -------
    ``torch.fft.ihfft``
    """
    return _r2c("ihfft", input, n, dim, norm, False, True, out)


# --- n-dimensional transforms -------------------------------------------------------------

def _fftn(fname, input, s, dim, norm, forward, out):
    _need_tensor(fname, input)
    shape, dims = _shape_and_dims(fname, input, s, dim)
    if not dims:
        x = _promote(fname, input, True)
        return _finish(fname, x if x is not input else x.clone(), out, input)
    mode = _norm(fname, norm, forward)
    if input._dtype.category != D.COMPLEX:
        # PyTorch casts real input to complex and runs c2c; the two-sided r2c is the same
        # transform (and gradient: the real part of c2c's) without the complex copy, and
        # twice as fast in pocketfft (2-D 1024x1024: 23 ms against 47 ms)
        x = _resize(_promote(fname, input, False), dims, shape)
        result = run(fft_r2c_op, x, dims=tuple(dims), normalization=mode, onesided=False)
        return _finish(fname, result if forward else result.conj(), out, input)
    x = _resize(input, dims, shape)
    result = run(fft_c2c_op, x, dims=tuple(dims), normalization=mode, forward=forward)
    return _finish(fname, result, out, input)


def _rfftn(fname, input, s, dim, norm, out):
    _need_tensor(fname, input)
    if input._dtype.category == D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a real-valued input tensor, but "
                                     f"got {input._dtype.name}")
    shape, dims = _shape_and_dims(fname, input, s, dim)
    if not shape:
        raise EmberValueError(f"fft.{fname} must transform at least one axis")
    x = _resize(_promote(fname, input, False), dims, shape)
    result = run(fft_r2c_op, x, dims=tuple(dims), normalization=_norm(fname, norm, True),
                 onesided=True)
    return _finish(fname, result, out, input)


def _irfftn(fname, input, s, dim, norm, out):
    _need_tensor(fname, input)
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(fname, input, True), dims, shape)
    result = run(fft_c2r_op, x, dims=tuple(dims), normalization=_norm(fname, norm, False),
                 last_dim_size=last)
    return _finish(fname, result, out, input)


def _hfftn(fname, input, s, dim, norm, out):
    _need_tensor(fname, input)
    shape, dims, last = _c2r_shape_and_dims(fname, input, s, dim)
    x = _resize(_promote(fname, input, True), dims, shape)
    mode = _norm(fname, norm, True)
    if len(dims) > 1:
        x = run(fft_c2c_op, x, dims=tuple(dims[:-1]), normalization=mode, forward=True)
    result = run(fft_c2r_op, x.conj(), dims=(dims[-1],), normalization=mode,
                 last_dim_size=last)
    return _finish(fname, result, out, input)


def _ihfftn(fname, input, s, dim, norm, out):
    _need_tensor(fname, input)
    if input._dtype.category == D.COMPLEX:
        raise DtypeNotSupportedError(f"fft.{fname} expects a real-valued input tensor, but "
                                     f"got {input._dtype.name}")
    shape, dims = _shape_and_dims(fname, input, s, dim)
    if not shape:
        raise EmberValueError(f"fft.{fname} must transform at least one axis")
    x = _resize(_promote(fname, input, False), dims, shape)
    mode = _norm(fname, norm, False)
    tmp = run(fft_r2c_op, x, dims=(dims[-1],), normalization=mode, onesided=True).conj()
    if len(dims) > 1:
        tmp = run(fft_c2c_op, tmp, dims=tuple(dims[:-1]), normalization=mode, forward=False)
    return _finish(fname, tmp, out, input)


@numpy_names
def fftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT over dim (default: the last len(s) dims, or all), each cut or
    zero-padded to its size in s (-1: unchanged).

    PyTorch
    -------
    ``torch.fft.fftn``
    """
    return _fftn("fftn", input, s, dim, norm, True, out)


@numpy_names
def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional inverse FFT (see fftn).

    PyTorch
    -------
    ``torch.fft.ifftn``
    """
    return _fftn("ifftn", input, s, dim, norm, False, out)


@numpy_names
def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The 2-D FFT over dim (default the last two).

    PyTorch
    -------
    ``torch.fft.fft2``
    """
    return _fftn("fft2", input, s, dim, norm, True, out)


@numpy_names
def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The 2-D inverse FFT over dim (default the last two).

    PyTorch
    -------
    ``torch.fft.ifft2``
    """
    return _fftn("ifft2", input, s, dim, norm, False, out)


@numpy_names
def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of real input; the last dim transformed keeps n//2 + 1 values.

    PyTorch
    -------
    ``torch.fft.rfftn``
    """
    return _rfftn("rfftn", input, s, dim, norm, out)


@numpy_names
def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """rfftn over the last two dims by default.

    PyTorch
    -------
    ``torch.fft.rfft2``
    """
    return _rfftn("rfft2", input, s, dim, norm, out)


@numpy_names
def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of rfftn: real, the last dim 2 (m - 1) long unless s says otherwise.

    PyTorch
    -------
    ``torch.fft.irfftn``
    """
    return _irfftn("irfftn", input, s, dim, norm, out)


@numpy_names
def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """irfftn over the last two dims by default.

    PyTorch
    -------
    ``torch.fft.irfft2``
    """
    return _irfftn("irfft2", input, s, dim, norm, out)


@numpy_names
def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of a Hermitian-symmetric signal given by its half along the
    last dim transformed: real.

    PyTorch
    -------
    ``torch.fft.hfftn``
    """
    return _hfftn("hfftn", input, s, dim, norm, out)


@numpy_names
def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """hfftn over the last two dims by default.

    PyTorch
    -------
    ``torch.fft.hfft2``
    """
    return _hfftn("hfft2", input, s, dim, norm, out)


@numpy_names
def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of hfftn: the one-sided inverse FFT of real input.

    PyTorch
    -------
    ``torch.fft.ihfftn``
    """
    return _ihfftn("ihfftn", input, s, dim, norm, out)


@numpy_names
def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """ihfftn over the last two dims by default.

    PyTorch
    -------
    ``torch.fft.ihfft2``
    """
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# --- helpers ----------------------------------------------------------------------------

def _freq_dtype(fname, dtype):
    dt = D.get_default_dtype() if dtype is None else D.get_dtype(dtype)
    if dt.category not in (D.FLOAT, D.COMPLEX):
        raise DtypeNotSupportedError(f"fft.{fname}: expected a floating point or complex "
                                     f"dtype, got {dt.name}")
    return dt


def _freq(fname, values, scale, out, dtype, device, requires_grad, layout):
    if layout is not None and str(layout).rsplit(".", 1)[-1] != "strided":
        raise EmberValueError(f"fft.{fname}: ember tensors are strided (dense); got layout="
                              f"{layout}. Fix: leave layout out")
    if out is not None:
        dtype = out._dtype if dtype is None else dtype
        device = out.device if device is None else device
    dt = _freq_dtype(fname, dtype)
    result = ops.tensor(values, dtype=dt, device=device) * scale    # as torch: in dtype
    if out is not None:
        return _out.write_out(f"fft.{fname}", result, out, ())
    return result.requires_grad_(True) if requires_grad else result


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None,
            device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point FFT with sample spacing d: [0, 1, ..., n//2 - 1
    (or (n-1)//2), -(n//2), ..., -1] / (d n).

    PyTorch
    -------
    ``torch.fft.fftfreq``
    """
    n = int(n)
    if n < 0:
        raise EmberValueError(f"fft.fftfreq: n must be non-negative, got {n}")
    values = list(range((n + 1) // 2)) + list(range(-(n // 2), 0))
    return _freq("fftfreq", values, 1.0 / (n * d) if n else 1.0, out, dtype, device,
                 requires_grad, layout)


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """The n//2 + 1 non-negative sample frequencies of an n-point rfft: [0, ..., n//2] /
    (d n).

    PyTorch
    -------
    ``torch.fft.rfftfreq``
    """
    n = int(n)
    if n < 0:
        raise EmberValueError(f"fft.rfftfreq: n must be non-negative, got {n}")
    values = list(range(n // 2 + 1))
    return _freq("rfftfreq", values, 1.0 / (n * d) if n else 1.0, out, dtype, device,
                 requires_grad, layout)


def _shift(fname, input, dim, inverse):
    _need_tensor(fname, input)
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_wrap_dim(fname, d, input.ndim)
                for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
    if not dims:
        return input.clone() if input.ndim == 0 else input
    sizes = [input._data.shape[d] for d in dims]
    shifts = [(n + 1) // 2 if inverse else n // 2 for n in sizes]
    return roll(input, shifts, dims)


@numpy_names
def fftshift(input: Tensor, dim=None) -> Tensor:
    """input with the zero frequency moved to the middle of each dim (all by default):
    rolled by n//2.

    PyTorch
    -------
    ``torch.fft.fftshift``
    """
    return _shift("fftshift", input, dim, False)


@numpy_names
def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift: rolled by (n + 1)//2.

    PyTorch
    -------
    ``torch.fft.ifftshift``
    """
    return _shift("ifftshift", input, dim, True)

