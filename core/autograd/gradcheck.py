"""gradcheck / gradgradcheck: analytical Jacobians vs float64 central differences."""
from __future__ import annotations

import numpy as np

from ..errors import AutogradError
from ..tensor import Tensor
from .engine import grad


class GradcheckError(AutogradError):
    """Analytical and numerical gradients disagree."""


def _as_tuple(x):
    # a list is a sequence of inputs (or outputs), as torch.autograd.gradcheck takes it
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def _reals(a: np.ndarray) -> np.ndarray:
    """An array as its real coordinates: a complex element is (real, imag), in that order
    (torch's gradcheck takes complex numbers as pairs of reals too)."""
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).astype(np.float64).reshape(-1)
    return a.astype(np.float64).reshape(-1)


def _numerical(fn, inputs, i, eps):
    """d outputs / d inputs[i] by central differences, as a (n_in, n_out) matrix over the
    real coordinates (a complex element is two: its real and its imaginary part)."""
    from .. import ops
    x = inputs[i]
    is_complex = x._dtype.category == 3
    host = x.detach()._host().astype(np.complex128 if is_complex else np.float64).copy()
    flat = host.reshape(-1)
    cols = []
    for j in range(flat.size):
        orig = flat[j]
        for step in ((1, 1j) if is_complex else (1,)):
            vals = []
            for delta in (eps, -eps):
                flat[j] = orig + delta * step
                probe = list(inputs)
                probe[i] = ops.from_host(host.astype(x._dtype.np), x._device, x.requires_grad)
                outs = _as_tuple(fn(*probe))
                vals.append(np.concatenate([_reals(o.detach()._host()) for o in outs]))
            flat[j] = orig
            cols.append((vals[0] - vals[1]) / (2 * eps))
    return np.stack(cols) if cols else np.zeros((0, 0))


def _analytical(fn, inputs, i):
    """The same matrix from backward passes: a complex output's real part is the backward of
    grad_output 1, its imaginary part of 1j (torch's convention: the gradient of
    Re(conj(g) * out)); a complex input's gradient gives d/d real and d/d imag."""
    from .. import ops
    outs = _as_tuple(fn(*inputs))
    x = inputs[i]
    width = x.numel() * (2 if x._dtype.category == 3 else 1)
    rows = []
    for out in outs:
        n = out.numel()
        for j in range(n):
            for unit in ((1, 1j) if out._dtype.category == 3 else (1,)):
                if not out.requires_grad:
                    rows.append(np.zeros(width))
                    continue
                g = np.zeros(n, dtype=out._dtype.np)
                g[j] = unit
                go = ops.from_host(g.reshape(out._data.shape), out._device)
                (gi,) = grad(out, x, go, retain_graph=True, allow_unused=True)
                rows.append(np.zeros(width) if gi is None else _reals(gi.detach()._host()))
    return np.stack(rows).T if rows else np.zeros((width, 0))


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compare analytical and numerical Jacobians for every input that requires grad."""
    inputs = _as_tuple(inputs)
    for i, x in enumerate(inputs):
        if type(x) is not Tensor or not x.requires_grad:
            continue
        num = _numerical(fn, inputs, i, eps)
        ana = _analytical(fn, inputs, i)
        if num.shape != ana.shape or not np.allclose(ana, num, atol=atol, rtol=rtol):
            if not raise_exception:
                return False
            diff = np.abs(ana - num) if num.shape == ana.shape else None
            where = np.unravel_index(np.argmax(diff), diff.shape) if diff is not None and \
                diff.size else None
            raise GradcheckError(
                f"Jacobian mismatch for input {i} (shape {tuple(x.shape)}, {x._dtype.name}):"
                f"\nnumerical:\n{np.array2string(num, precision=6)}\nanalytical:\n"
                f"{np.array2string(ana, precision=6)}\nlargest difference "
                f"{diff.max() if diff is not None and diff.size else 'shape mismatch'} at "
                f"(input element, output element) {where}; atol={atol}, rtol={rtol}")
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """gradcheck of the function x -> d(sum(fn(x) * v))/dx (second derivatives)."""
    from .. import ops
    inputs = _as_tuple(inputs)
    outs = _as_tuple(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(ops.from_host(rng.standard_normal(o._data.shape).astype(
            o._dtype.np), o._device) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    diff_idx = [i for i, x in enumerate(inputs) if type(x) is Tensor and x.requires_grad]

    def first(*xs):
        outs = _as_tuple(fn(*xs))
        grads = grad(outs, [xs[i] for i in diff_idx], grad_outputs,
                              create_graph=True, allow_unused=True, materialize_grads=True)
        return tuple(grads)
    return gradcheck(first, inputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
