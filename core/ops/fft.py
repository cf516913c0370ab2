"""FFT primitives: PyTorch's three aten kernels _fft_c2c, _fft_r2c and _fft_c2r; ember.fft
(core/fft/) builds torch.fft's whole namespace on them.

Kernels (over the dims `dims` of any strided input, batched over the others):
- fft_c2c(x, *, dims, normalization, forward): complex -> complex of the same dtype, the
  forward (exp(-2 pi i jk/n)) or backward (exp(+...)) unnormalised DFT, then scaled;
- fft_r2c(x, *, dims, normalization, onesided): real -> complex (float32 -> complex64), the
  forward DFT; onesided keeps the first n//2 + 1 values of the last dim in `dims`;
- fft_c2r(x, *, dims, normalization, last_dim_size): complex -> real, the backward DFT of the
  Hermitian spectrum whose first last_dim_size//2 + 1 values along dims[-1] are given (the
  rest are the conjugates; the imaginary parts of the 0 and Nyquist values are ignored);
  the last dim of the output has last_dim_size values.
`normalization` is PyTorch's fft_norm_mode: "none" (no scale), "by_root_n" (1/sqrt(n)) or
"by_n" (1/n), n the product of the transformed (output) sizes.

The gradients are PyTorch's (tools/autograd/derivatives.yaml, FunctionsManual.cpp
fft_r2c_backward / fft_c2r_backward): c2c's is c2c in the other direction with the same
scale; r2c's is the real part of the backward c2c of the zero-padded gradient; c2r's is
r2c of the gradient with the values that stand for two (1 .. n - n//2 - 1) doubled.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..autograd.node import OWN_COMPLEX_RULE
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberValueError
from ..tensor import Tensor
from ._op import declare
from .creation import from_host
from .movement import pad

__all__: list = []          # the public functions are ember.fft's (core/fft/)

NORMALIZATIONS = ("none", "by_root_n", "by_n")


def _check_attrs(name, inputs, attrs, want):
    x = inputs[0]
    if want == "complex" and x._dtype.category != D.COMPLEX:
        raise DtypeNotSupportedError(f"{name}: expected a complex tensor, got {x._dtype.name}")
    if want == "float" and x._dtype not in (D.float32, D.float64):
        raise DtypeNotSupportedError(f"{name}: expected a float32 or float64 tensor, got "
                                     f"{x._dtype.name}")
    if attrs["normalization"] not in NORMALIZATIONS:
        raise EmberValueError(f"{name}: normalization must be one of {NORMALIZATIONS}, got "
                              f"{attrs['normalization']!r}")
    dims = attrs["dims"]
    nd = len(x._data.shape)
    if not dims or len(set(dims)) != len(dims) or any(not 0 <= d < nd for d in dims):
        raise EmberValueError(f"{name}: dims must be distinct dims of the {nd}-d input, at "
                              f"least one, got {tuple(dims)}")


def _c2c_check(inputs, attrs):
    _check_attrs("fft_c2c", inputs, attrs, "complex")


def _r2c_check(inputs, attrs):
    _check_attrs("fft_r2c", inputs, attrs, "float")


def _c2r_check(inputs, attrs):
    _check_attrs("fft_c2r", inputs, attrs, "complex")
    if attrs["last_dim_size"] < 1:
        raise EmberValueError(f"fft_c2r: last_dim_size must be >= 1, got "
                              f"{attrs['last_dim_size']}")


def _rule_c2c(op):
    def rule(inputs, attrs):
        return None, inputs[0]._dtype
    return rule


def _rule_r2c(op):
    def rule(inputs, attrs):
        return None, inputs[0]._dtype.to_complex()
    return rule


def _rule_c2r(op):
    def rule(inputs, attrs):
        return None, inputs[0]._dtype.to_real()
    return rule


def _r2c_shape(inputs, attrs):
    s = list(inputs[0]._data.shape)
    if attrs["onesided"]:
        last = attrs["dims"][-1]
        s[last] = s[last] // 2 + 1
    return tuple(s)


def _c2r_shape(inputs, attrs):
    s = list(inputs[0]._data.shape)
    s[attrs["dims"][-1]] = attrs["last_dim_size"]
    return tuple(s)


def _c2c_vjp(g, out, x, *, dims, normalization, forward):
    return (run(fft_c2c_op, g, dims=dims, normalization=normalization, forward=not forward),)


def _r2c_vjp(g, out, x, *, dims, normalization, onesided):
    if onesided:
        last = dims[-1]
        full = x.shape[last]
        missing = full - g.shape[last]
        if missing > 0:
            g = _zero_pad(g, last, missing)
    full_grad = run(fft_c2c_op, g, dims=dims, normalization=normalization, forward=False)
    return (full_grad.real,)


def _c2r_vjp(g, out, x, *, dims, normalization, last_dim_size):
    gi = run(fft_r2c_op, g, dims=dims, normalization=normalization, onesided=True)
    last = dims[-1]
    double = g.shape[last] - gi.shape[last]
    if double > 0:           # values 1 .. double stand for themselves and their conjugates
        h = gi.shape[last]
        weights = [1.0] * h
        for k in range(1, 1 + double):
            weights[k] = 2.0
        shape = [1] * gi.ndim
        shape[last] = h
        gi = gi * _weights(gi, weights, shape)
    # the input's length along the last dim may exceed last_dim_size//2 + 1 (ignored values)
    have = x.shape[last]
    if have > gi.shape[last]:
        gi = _zero_pad(gi, last, have - gi.shape[last])
    elif have < gi.shape[last]:
        gi = gi.narrow(last, 0, have)
    return (gi,)


def _weights(like: Tensor, values, shape) -> Tensor:
    return from_host(np.asarray(values, dtype=like._dtype.to_real().np).reshape(shape),
                     like.device)


def _zero_pad(g: Tensor, dim: int, count: int) -> Tensor:
    pads = [0, 0] * (g.ndim - 1 - dim) + [0, count]
    return pad(g, pads)


fft_c2c_op = declare(
    "fft_c2c", "fft", _rule_c2c,
    sig="x, *, dims: tuple[int], normalization: str, forward: bool",
    check=_c2c_check, shape=lambda i, a: i[0]._data.shape, vjp=_c2c_vjp, uses=(),
    doc="the complex DFT over dims (forward: exp(-2 pi i jk/n)), unnormalised or scaled by "
        "1/sqrt(n) or 1/n (normalization 'none', 'by_root_n', 'by_n')")
fft_r2c_op = declare(
    "fft_r2c", "fft", _rule_r2c,
    sig="x, *, dims: tuple[int], normalization: str, onesided: bool",
    check=_r2c_check, shape=_r2c_shape, vjp=_r2c_vjp, uses=(),
    doc="the forward DFT of a real tensor over dims, complex; onesided keeps n//2 + 1 values "
        "of the last dim in dims")
fft_c2r_op = declare(
    "fft_c2r", "fft", _rule_c2r,
    sig="x, *, dims: tuple[int], normalization: str, last_dim_size: int",
    check=_c2r_check, shape=_c2r_shape, vjp=_c2r_vjp, uses=(),
    doc="the backward DFT over dims of the Hermitian spectrum given by its first "
        "last_dim_size//2 + 1 values along dims[-1]; real, last_dim_size long there")


# the VJPs above take and give PyTorch's complex (conjugate Wirtinger) gradients as they are:
# the engine must not conjugate around them (autograd/node.py)
OWN_COMPLEX_RULE.update({"fft_c2c", "fft_r2c", "fft_c2r"})


def scale_of(normalization: str, count: int) -> float:
    """The factor `normalization` applies for `count` transformed points."""
    if normalization == "by_root_n":
        return 1.0 / math.sqrt(count)
    if normalization == "by_n":
        return 1.0 / count
    return 1.0
