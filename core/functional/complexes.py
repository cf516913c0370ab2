"""torch.* functions of complex tensors: real, imag, conj, angle, complex, polar,
view_as_real, view_as_complex, isreal and the conjugate/negative bit queries.

conj is eager (ops/complex.py says why): `conj(x)` is a new tensor, `is_conj` is always
False and `resolve_conj`/`resolve_neg` return their input.  view_as_real and
view_as_complex return new tensors too (the parts copied, not a view of the same memory:
a write into one does not reach the other, unlike PyTorch's views); their values and
gradients are PyTorch's.
"""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import ComplexDtypeError, EmberTypeError, ShapeError
from ..ops._out import write_out
from ..ops.complex import complex_op_run, conj_op_run, imag_op_run, real_op_run
from ..ops.special import atan2_op
from ..tensor import Tensor

__all__ = ["real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj",
           "is_neg", "isreal", "angle", "complex", "polar", "view_as_real", "view_as_complex"]


def _need(name, x):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): argument 'input' must be Tensor, not "
                             f"{type(x).__name__}")


def real(input: Tensor) -> Tensor:
    """The real part of a complex tensor (a real tensor itself for a real one).

    PyTorch
    -------
    ``torch.real``; a new tensor, not a view (writes into it do not reach ``input``).
    """
    _need("real", input)
    if input._dtype.category != D.COMPLEX:
        return input
    return real_op_run(input)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor; a real tensor has none (as torch, an error).

    PyTorch
    -------
    ``torch.imag``; a new tensor, not a view.
    """
    _need("imag", input)
    if input._dtype.category != D.COMPLEX:
        raise ComplexDtypeError("imag is not implemented for tensors with non-complex dtypes "
                             f"(as torch), got {input._dtype.name}")
    return imag_op_run(input)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a real tensor itself); eager: a new tensor.

    PyTorch
    -------
    ``torch.conj``; computed at once instead of torch's lazy conjugate bit.
    """
    _need("conj", input)
    if input._dtype.category != D.COMPLEX:
        return input
    return conj_op_run(input)


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (for a real tensor: a copy, as torch).

    PyTorch
    -------
    ``torch.conj_physical``
    """
    _need("conj_physical", input)
    if input._dtype.category != D.COMPLEX:
        return input.clone()
    return conj_op_run(input)


def resolve_conj(input: Tensor) -> Tensor:
    """``input``: ember's conjugates are computed at once, so none is pending.

    PyTorch
    -------
    ``torch.resolve_conj``
    """
    _need("resolve_conj", input)
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """``input``: ember has no lazy negation bit.

    PyTorch
    -------
    ``torch.resolve_neg``
    """
    _need("resolve_neg", input)
    return input


def is_conj(input: Tensor) -> bool:
    """False: ember computes conjugates at once (no lazy conjugate bit).

    PyTorch
    -------
    ``torch.is_conj``
    """
    _need("is_conj", input)
    return False


def is_neg(input: Tensor) -> bool:
    """False: ember has no lazy negation bit.

    PyTorch
    -------
    ``torch.is_neg``
    """
    _need("is_neg", input)
    return False


def isreal(input: Tensor) -> Tensor:
    """Where the imaginary part is zero (everywhere for a real tensor).

    PyTorch
    -------
    ``torch.isreal``
    """
    _need("isreal", input)
    if input._dtype.category != D.COMPLEX:
        return ops.ones_like(input, dtype=D.bool_)
    return imag_op_run(input) == 0


def angle(input: Tensor) -> Tensor:
    """The argument: atan2(imag, real) of a complex tensor (real dtype); of a real number
    pi for negatives, 0 otherwise, nan stays nan (a float result, gradient zero, as torch).

    PyTorch
    -------
    ``torch.angle``
    """
    _need("angle", input)
    if input._dtype.category == D.COMPLEX:
        return run(atan2_op, imag_op_run(input), real_op_run(input))
    x = input if input._dtype.category == D.FLOAT else input.to(D.get_default_dtype())
    return ops.where(x < 0, math.pi, ops.where(x.isnan(), x, 0.0))


def _pair(name, a, b, first="real", second="imag"):
    for what, t in ((first, a), (second, b)):
        if type(t) is not Tensor:
            raise EmberTypeError(f"{name}(): argument '{what}' must be Tensor, not "
                                 f"{type(t).__name__}")
    if a._device is not b._device and a._device != b._device:
        from ..errors import DeviceMismatchError
        raise DeviceMismatchError(f"{name}: expected {first} and {second} on one device, got "
                                  f"{a._device} and {b._device}; move one with .to()")


def complex(real: Tensor, imag: Tensor, *, out=None) -> Tensor:
    """The complex tensor real + imag * 1j (broadcast; both float32 or both float64).

    PyTorch
    -------
    ``torch.complex``
    """
    _pair("complex", real, imag)
    result = complex_op_run(real, imag)
    return result if out is None else write_out("complex", result, out, (real, imag))


def polar(abs: Tensor, angle: Tensor, *, out=None) -> Tensor:
    """abs * (cos(angle) + sin(angle) * 1j) (both float32 or both float64).

    PyTorch
    -------
    ``torch.polar``
    """
    _pair("polar", abs, angle, "abs", "angle")
    if abs._dtype is not angle._dtype or abs._dtype not in (D.float32, D.float64):
        raise EmberTypeError(f"polar: expected abs and angle of one dtype, float32 or "
                             f"float64 (as torch), got {abs._dtype.name} and "
                             f"{angle._dtype.name}")
    result = complex_op_run(abs * angle.cos(), abs * angle.sin())
    return result if out is None else write_out("polar", result, out, (abs, angle))


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's parts as a real tensor of shape (..., 2): [..., 0] the real parts,
    [..., 1] the imaginary ones.

    PyTorch
    -------
    ``torch.view_as_real``; a new tensor, not a view of ``input``'s memory.
    """
    _need("view_as_real", input)
    if input._dtype.category != D.COMPLEX:
        raise ComplexDtypeError(f"view_as_real is only supported for complex tensors, got "
                             f"{input._dtype.name} (as torch); make one with "
                             "ember.complex(real, imag)")
    return ops.stack([real_op_run(input), imag_op_run(input)], -1)


def view_as_complex(input: Tensor) -> Tensor:
    """A float32/float64 tensor of shape (..., 2) as the complex tensor of shape (...):
    [..., 0] + [..., 1] * 1j.

    PyTorch
    -------
    ``torch.view_as_complex``; a new tensor, not a view of ``input``'s memory.
    """
    _need("view_as_complex", input)
    if input._dtype not in (D.float32, D.float64):
        raise ComplexDtypeError(f"view_as_complex is only supported for float32 and float64 "
                             f"tensors (ember has no complex32), got {input._dtype.name}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: Tensor must have a last dimension of size 2, got "
                         f"shape {list(input.shape)} (as torch)")
    return complex_op_run(input[..., 0], input[..., 1])
