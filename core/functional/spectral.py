"""torch.stft and torch.istft: the short-time Fourier transform and its inverse, written as
PyTorch's SpectralOps.cpp writes them, over ember ops (pad, windows by index_select, the
ember.fft transforms, overlap-add by index_add), so they run on every device and have
PyTorch's gradients with respect to the signal and the window."""
from __future__ import annotations

import warnings

from .. import dtypes as D
from .. import fft as _fft
from .. import ops
from ..errors import (
    ComplexDtypeError,
    EmberTypeError,
    EmberValueError,
    EmberWarning,
    ShapeError,
)
from ..tensor import Tensor
from .complexes import view_as_real
from .movement import unfold_windows

__all__ = ["stft", "istft"]


def _warn(message: str) -> None:
    # torch's warnings, in its words (TORCH_WARN_ONCE; Python's filter shows each once)
    warnings.warn(message, EmberWarning, stacklevel=3)


def _window(fname, window, win_length: int, n_fft: int, dtype, device, aligned=False):
    """window (ones where None) zero-padded to n_fft, centred as torch centres it (None
    for a missing window that needs no padding: torch multiplies by nothing then)."""
    if window is None:
        _warn(f"{fname}: a window was not provided: a rectangular window is applied, which is"
              f" known to cause spectral leakage; pass one such as ember.hann_window(n_fft) "
              f"(or window=ember.ones(n_fft) for this one without the warning)")
    if window is not None:
        if type(window) is not Tensor:
            raise EmberTypeError(f"{fname}: window must be a Tensor or None, got "
                                 f"{type(window).__name__}")
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ShapeError(f"{fname}: expected a 1-D window of size win_length="
                             f"{win_length}, got a window of shape {tuple(window.shape)}; "
                             f"pass win_length={window.shape[0] if window.ndim == 1 else '...'}"
                             f" or a window of {win_length} values")
    if win_length == n_fft or aligned:
        return window
    if window is None:
        window = ops.ones(win_length, dtype=dtype, device=device)
    left = (n_fft - win_length) // 2
    return ops.pad(window, (left, n_fft - win_length - left))


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: the FFT of each window of n_fft samples, hop_length
    apart, times window; shape (B?, N, T) complex, or (B?, N, T, 2) real parts with
    return_complex=False (N = n_fft // 2 + 1 when onesided, else n_fft; T frames).

    center pads input by n_fft // 2 on both sides (pad_mode) so that frame t is centred at
    t * hop_length; align_to_window (center=False only) starts each window, rather than
    each n_fft frame, at t * hop_length.  normalized scales by n_fft ** -0.5.

    PyTorch
    -------
    ``torch.stft``, ``Tensor.stft``
    """
    if type(input) is not Tensor:
        raise EmberTypeError(f"stft: input must be a Tensor, got {type(input).__name__}")
    if center and align_to_window is not None:
        raise EmberValueError("stft: align_to_window should only be set when center=False; "
                              "pass center=False or leave align_to_window unset")
    window_complex = window is not None and type(window) is Tensor and window.is_complex()
    if return_complex is None:
        if not (input.is_complex() or window_complex):
            raise EmberValueError(
                "stft: the return_complex parameter must be given for real inputs (as "
                "torch requires); pass return_complex=True (or False for the (..., 2) "
                "real form)")
        return_complex = True
    if not return_complex:
        _warn("stft: return_complex=False is deprecated (as in torch, whose future releases "
              "will refuse it); pass return_complex=True and take ember.view_as_real of "
              "the result for the (..., 2) form")
    if input._dtype.category not in (D.FLOAT, D.COMPLEX):
        raise EmberTypeError(f"stft: expected a tensor of floating point or complex values, "
                             f"got {input._dtype.name}; cast it first (x.float())")
    if input.ndim not in (1, 2):
        raise ShapeError(f"stft: expected a 1-D or 2-D (batch, length) tensor, got shape "
                         f"{tuple(input.shape)}")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if center:
        pad = n_fft // 2
        x = ops.pad(x.reshape(1, *x.shape), (pad, pad), pad_mode).reshape(x.shape[0], -1)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise EmberValueError(f"stft: expected 0 < n_fft <= {length} (the signal's length"
                              f"{', padded' if center else ''}), got n_fft={n_fft}")
    if hop_length <= 0:
        raise EmberValueError(f"stft: expected hop_length > 0, got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise EmberValueError(f"stft: expected 0 < win_length <= n_fft={n_fft}, got "
                              f"win_length={win_length}")
    real_dtype = input._dtype.to_real()
    aligned = bool(align_to_window)
    window = _window("stft", window, win_length, n_fft, real_dtype, input._device, aligned)
    # frames (batch, n_frames, n_fft): with align_to_window the windows' own win_length
    # samples, zero-padded to n_fft as the window would be
    frames = unfold_windows(x, 1, win_length if aligned else n_fft, hop_length)
    if window is not None:
        frames = frames * window
    if aligned and win_length < n_fft:
        left = (n_fft - win_length) // 2
        frames = ops.pad(frames, (left, n_fft - win_length - left))
    complex_fft = frames.is_complex()
    onesided = (not complex_fft) if onesided is None else onesided
    if complex_fft and onesided:
        raise EmberValueError("stft: cannot have a onesided output when the window or input "
                              "is complex; pass onesided=False")
    norm = "ortho" if normalized else "backward"
    out = (_fft.fft(frames, norm=norm) if complex_fft or not onesided
           else _fft.rfft(frames, norm=norm))
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.reshape(out.shape[1:])
    return out if return_complex else view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of stft: the inverse FFT of each frame times window, overlap-added and
    divided by the overlap-added squared window.  input is stft's complex output,
    (B?, N, T); the result is (B?, length) (real unless return_complex).

    PyTorch
    -------
    ``torch.istft``, ``Tensor.istft``
    """
    if type(input) is not Tensor:
        raise EmberTypeError(f"istft: input must be a Tensor, got {type(input).__name__}")
    if not input.is_complex():
        raise ComplexDtypeError(f"istft: expected a complex input (stft's output with "
                                f"return_complex=True), got {input._dtype.name}; pass "
                                f"ember.view_as_complex(x) for the (..., 2) real form")
    if input.numel() == 0:
        raise ShapeError(f"istft: the input cannot be empty, got shape {tuple(input.shape)}")
    if input.ndim not in (2, 3):
        raise ShapeError(f"istft: expected a 2-D (freq, frames) or 3-D (batch, freq, frames) "
                         f"complex tensor, got shape {tuple(input.shape)}")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    fft_size, n_frames = input.shape[-2], input.shape[-1]
    expected_len = n_fft + hop_length * (n_frames - 1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and fft_size != n_fft // 2 + 1:
        raise ShapeError(f"istft: expected the frequency dim (-2) of the input to be "
                         f"n_fft // 2 + 1 = {n_fft // 2 + 1} when onesided=True, got "
                         f"{fft_size}; pass the n_fft stft used, or onesided=False")
    if not onesided and fft_size != n_fft:
        raise ShapeError(f"istft: expected the frequency dim (-2) of the input to be "
                         f"n_fft = {n_fft} when onesided=False, got {fft_size}; pass the "
                         f"n_fft stft used, or onesided=True")
    if not 0 < hop_length <= win_length:
        raise EmberValueError(f"istft: expected 0 < hop_length <= win_length={win_length}, "
                              f"got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise EmberValueError(f"istft: expected 0 < win_length <= n_fft={n_fft}, got "
                              f"win_length={win_length}")
    real_dtype = input._dtype.to_real()
    window = _window("istft", window, win_length, n_fft, real_dtype, input._device)
    if window is None:
        window = ops.ones(n_fft, dtype=real_dtype, device=input._device)
    x = (input if input.ndim == 3 else input.reshape(1, *input.shape)).transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise EmberValueError("istft: cannot have a onesided output with "
                                  "return_complex=True; pass onesided=False and the full "
                                  "spectrum")
        frames = _fft.ifft(x, norm=norm)
    else:
        if window.is_complex():
            raise ComplexDtypeError("istft: a complex window is incompatible with "
                                    "return_complex=False; pass return_complex=True")
        if not onesided:
            x = x[..., :n_fft // 2 + 1]
        frames = _fft.irfft(x, n_fft, norm=norm)
    frames = frames * window
    # overlap-add: frame t's sample k lands on t * hop_length + k
    where = (ops.arange(n_frames, device=input._device).reshape(-1, 1) * hop_length +
             ops.arange(n_fft, device=input._device)).reshape(-1)
    batch = frames.shape[0]
    y = ops.index_add(ops.zeros(batch, expected_len, dtype=frames._dtype,
                                device=input._device), 1, where, frames.reshape(batch, -1))
    squares = (window * window).reshape(1, n_fft).expand(n_frames, n_fft).reshape(1, -1)
    envelope = ops.index_add(ops.zeros(1, expected_len, dtype=squares._dtype,
                                       device=input._device), 1, where, squares)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_len
    y, envelope = y[:, start:end], envelope[:, start:end]
    if envelope.numel() and bool(envelope.abs().min() < 1e-11):
        raise EmberValueError(
            "istft: the window's overlap-add (the sum of the squared windows over the frames"
            " that cover a sample) falls below 1e-11, so the signal cannot be recovered "
            "there (the NOLA condition); use a window and hop_length whose overlaps do not "
            "vanish, e.g. hann_window(n_fft) with hop_length <= n_fft // 2")
    y = y / envelope
    if input.ndim == 2:
        y = y.reshape(y.shape[1:])
    if end > expected_len:
        _warn(f"istft: the signal the frames cover ({expected_len - start} samples) is "
              f"shorter than length={length}: the result is padded with zeros at its end; "
              f"check center and hop_length")
        y = ops.pad(y, (0, end - expected_len))
    return y
