"""Complex primitives: the parts of a complex tensor (real, imag), its conjugate, and the
complex tensor made of two real ones (complex).

Kernel signatures: real k(x), imag k(x), conj k(x) take a complex array; complex k(re, im)
takes two real arrays of one float dtype (float32 -> complex64, float64 -> complex128).

conj is eager: a new tensor holding the conjugate (a copy), not PyTorch's lazy conjugate
bit.  ember's kernels have no per-tensor flags to honour, and a bit every kernel has to
resolve (or a view whose writes conjugate back) would touch every backend for a saving of
one elementwise pass; the values, dtypes and gradients are PyTorch's, `is_conj()` is
always False and `resolve_conj` returns its input.
"""
from __future__ import annotations

from .. import dtypes as D
from ..dispatch import run
from ..errors import EmberTypeError
from ..tensor import Tensor
from ._op import declare, shape_broadcast, shape_first

__all__ = []


def _need_complex(name):
    def check(inputs, attrs):
        x = inputs[0]
        if x._dtype.category != D.COMPLEX:
            raise EmberTypeError(f"{name}: expected a complex tensor, got {x._dtype.name}")
    return check


def rule_parts(op):
    """A complex input, the real dtype of its parts out (real, imag, abs, angle)."""
    def rule(inputs, attrs):
        d = inputs[0]._dtype
        return d, d.to_real()
    return rule


def rule_joined(op):
    """Two reals of one float dtype in, their complex dtype out (complex, polar)."""
    def rule(inputs, attrs):
        re, im = inputs
        if re._dtype is not im._dtype:
            raise EmberTypeError(f"{op.name}: expected real and imag of one dtype, got "
                                 f"{re._dtype.name} and {im._dtype.name} (as torch); cast "
                                 "one first")
        if re._dtype not in (D.float32, D.float64):
            raise EmberTypeError(f"{op.name}: expected float32 or float64 inputs, got "
                                 f"{re._dtype.name} (as torch: Expected both inputs to be "
                                 "Float or Double tensors)")
        return None, re._dtype.to_complex()
    return rule


def rule_abs(op):
    """abs: a real tensor's own dtype; a complex one's magnitudes are real (torch)."""
    def rule(inputs, attrs):
        d = inputs[0]._dtype
        return d, d.to_real()
    return rule


def rule_same_complex(op):
    def rule(inputs, attrs):
        d = inputs[0]._dtype
        return d, d
    return rule


def _r2c(g):
    """A real gradient as the complex one of a complex input (imag 0)."""
    return complex_op_run(g, g * 0)


def _real_vjp(g, out, x):
    return (_r2c(g),)


def _imag_vjp(g, out, x):
    # torch: d imag(z) for the conjugate Wirtinger convention is g * 1j
    return (complex_op_run(g * 0, g),)


real_op = declare("real", "unary", rule_parts, sig="x", shape=shape_first,
                  check=_need_complex("real"), doc="the real part of a complex tensor",
                  vjp=_real_vjp, uses=())
imag_op = declare("imag", "unary", rule_parts, sig="x", shape=shape_first,
                  check=_need_complex("imag"), doc="the imaginary part of a complex tensor",
                  vjp=_imag_vjp, uses=())
conj_op = declare("conj", "unary", rule_same_complex, sig="x", shape=shape_first,
                  check=_need_complex("conj"),
                  doc="the complex conjugate (eager: a new tensor, no lazy bit)",
                  vjp=lambda g, out, x: (conj_op_run(g),), uses=())


def _complex_vjp(g, out, re, im):
    return (lambda: real_op_run(g), lambda: imag_op_run(g))


complex_op = declare("complex", "binary", rule_joined, sig="re, im", shape=shape_broadcast,
                     doc="re + im * 1j from two real tensors of one float dtype",
                     vjp=_complex_vjp, uses=())


def real_op_run(x: Tensor) -> Tensor:
    return run(real_op, x)


def imag_op_run(x: Tensor) -> Tensor:
    return run(imag_op, x)


def conj_op_run(x: Tensor) -> Tensor:
    return run(conj_op, x)


def complex_op_run(re: Tensor, im: Tensor) -> Tensor:
    return run(complex_op, re, im)
