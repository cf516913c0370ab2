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
from ..errors import ComplexDtypeError, EmberTypeError
from ..tensor import Tensor
from ._op import declare, shape_broadcast, shape_first

__all__ = []


def _need_complex(name):
    def check(inputs, attrs):
        x = inputs[0]
        if x._dtype.category != D.COMPLEX:
            raise ComplexDtypeError(f"{name}: expected a complex tensor, got {x._dtype.name}")
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


# --- what torch refuses on complex tensors ---------------------------------------------
# ordering and rounding have no meaning for complex numbers: torch raises for these (its
# message: "... not implemented for 'ComplexFloat'" or "not supported for complex"), so
# ember does too, before any kernel runs (NumPy would answer: lexicographic max, ...)
REFUSED = ("lt", "le", "gt", "ge", "maximum", "minimum", "remainder", "floor_divide",
           "atan2", "lgamma", "digamma", "erfinv", "erf", "floor", "ceil", "round", "sign",
           "relu", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "bitwise_left_shift", "bitwise_right_shift", "max", "min", "argmax", "argmin",
           "argsort", "topk", "unique", "max_pool2d", "softmax", "log_softmax", "lstm_cell",
           "gru_cell")
_HINT = {"sign": "use ember.sgn (z / |z|) for complex numbers, as torch",
         "max": "compare .abs() or .real instead", "min": "compare .abs() or .real instead"}


def _refusing(name, check):
    hint = _HINT.get(name, "work on .real, .imag or .abs() instead")

    def refuse(inputs, attrs):
        for x in inputs:
            if (type(x) is Tensor and x._dtype.category == D.COMPLEX) or type(x) is complex:
                got = x._dtype.name if type(x) is Tensor else "a Python complex"
                raise ComplexDtypeError(f"{name}: not defined on complex numbers (torch refuses "
                                     f"it too), got {got}; {hint}")
        if check is not None:
            check(inputs, attrs)
    return refuse


# decompositions NumPy computes for complex matrices whose VJPs are written for real ones
# only (their complex rules need conjugate transposes and gauge terms ember does not have
# yet): the values are computed, a gradient through them is refused
NO_COMPLEX_GRAD = ("cholesky", "eigh", "svd_u", "svd_vh", "qr_q", "qr_r", "logabsdet", "pinv")


def _no_complex_grad(name, vjp):
    def rule(g, out, *inputs, **attrs):
        for x in inputs:
            if type(x) is Tensor and x._dtype.category == D.COMPLEX:
                from .._torch_gaps import gap
                raise gap(f"gradient of {name} for complex matrices",
                          "its values are computed, its complex VJP is not built; detach "
                          "the input or compute in real arithmetic")
        return vjp(g, out, *inputs, **attrs)
    return rule


# decompositions whose result is real for a complex matrix (singular values, the
# eigenvalues of a Hermitian one)
REAL_VALUES = ("svdvals", "eigvalsh")


def _real_values(rule):
    def real_rule(inputs, attrs):
        compute, out = rule(inputs, attrs)
        return compute, out.to_real()
    return real_rule


def install_refusals(registry) -> None:
    """Put the complex refusal in front of each REFUSED op's own check (ops/__init__ calls
    it once every family is declared).  Complex inputs never take the fast paths (their
    tables hold real dtypes only), so run() always reaches the check."""
    for name in REFUSED:
        op = registry.get(name)
        if op is not None:
            op.check = _refusing(name, op.check)
    for name in REAL_VALUES:            # real results of complex matrices (torch's dtypes)
        op = registry.get(name)
        if op is not None:
            op.dtype = _real_values(op.dtype)
    for name in NO_COMPLEX_GRAD:
        op = registry.get(name)
        if op is not None and op.vjp is not None:
            op.vjp = _no_complex_grad(name, op.vjp)


def _hand_down() -> None:
    from ..autograd.node import use_complex_parts
    use_complex_parts(conj_op_run, real_op_run)


_hand_down()          # autograd (a layer below) conjugates complex gradients with these
