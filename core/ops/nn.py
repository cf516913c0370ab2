"""Neural-network ops: unfold (im2col) and fold (col2im) over NCHW tensors, the primitives
convolution and pooling build on; and the declared kernels a backend may accelerate:
linear, softmax, max_pool2d (with its gradient kernel).

Kernels: unfold(x, *, kernel_size, dilation, padding, stride) -> (N, C*kh*kw, L);
fold(cols, *, output_size, kernel_size, dilation, padding, stride) -> (N, C, H, W),
overlapping patches summing.  All parameters are (h, w) pairs of ints.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..dispatch import run
from ..errors import ShapeError
from ..tensor import Tensor
from ._op import declare, rule_first, rule_same, shape_first

__all__ = ["fold", "unfold"]


def pair(v, name="") -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:                     # torch: one value stands for both dims
            return int(v[0]), int(v[0])
        if len(v) != 2:
            raise ShapeError(f"{name}: expected an int or a pair of ints, got {v}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def out_size(size, k, d, p, s) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


_GEOMETRY = ("kernel_size: tuple[int, int], dilation: tuple[int, int], "
             "padding: tuple[int, int], stride: tuple[int, int]")
unfold_op = declare(
    "unfold", "nn", rule_first, sig="x, *, " + _GEOMETRY,
    doc="im2col of an (N, C, H, W) array: (N, C*kh*kw, L) patches",
    vjp=lambda g, out, x, **a: (run(fold_op, g, output_size=tuple(x._data.shape[-2:]), **a),),
    uses=())
fold_op = declare("fold", "nn", rule_first,
                  sig="cols, *, output_size: tuple[int, int], " + _GEOMETRY,
                  doc="col2im: (N, C*kh*kw, L) patches summed into (N, C, H, W)",
                  vjp=lambda g, out, x, *, output_size, **a: (run(unfold_op, g, **a),), uses=())


def _params(name, kernel_size, dilation, padding, stride):
    k, d, p, s = (pair(v, name) for v in (kernel_size, dilation, padding, stride))
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise ShapeError(f"{name}: kernel_size, dilation and stride must be positive and "
                         f"padding non-negative; got kernel_size={k}, dilation={d}, "
                         f"padding={p}, stride={s}")
    return dict(kernel_size=k, dilation=d, padding=p, stride=s)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """torch.nn.functional.unfold for a 4-D (N, C, H, W) input.

    PyTorch
    -------
    ``torch.nn.functional.unfold``
    """
    if input.ndim != 4:
        raise ShapeError(f"unfold: expected a 4-D (N, C, H, W) input, got shape "
                         f"{tuple(input.shape)}")
    a = _params("unfold", kernel_size, dilation, padding, stride)
    for i, size in enumerate(input._data.shape[2:]):
        if out_size(size, a["kernel_size"][i], a["dilation"][i], a["padding"][i],
                    a["stride"][i]) <= 0:
            raise ShapeError(
                f"unfold: the kernel {a['kernel_size']} (dilation {a['dilation']}) does not "
                f"fit the padded input {tuple(input.shape[2:])} + padding {a['padding']}")
    return run(unfold_op, input, **a)


def fold(cols: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combine an array of sliding local blocks ``(N, C*kh*kw, L)`` into a tensor of shape
    ``(N, C, *output_size)``, summing overlapping values (the inverse of ``unfold``).

    PyTorch
    -------
    ``torch.nn.functional.fold``
    """
    if cols.ndim != 3:
        raise ShapeError(f"fold: expected a 3-D (N, C*kh*kw, L) input, got {tuple(cols.shape)}")
    a = _params("fold", kernel_size, dilation, padding, stride)
    osz = pair(output_size, "fold")
    kh, kw = a["kernel_size"]
    oh, ow = (out_size(osz[i], a["kernel_size"][i], a["dilation"][i], a["padding"][i],
                       a["stride"][i]) for i in range(2))
    n, ckk, length = cols._data.shape
    if ckk % (kh * kw) or length != oh * ow:
        raise ShapeError(f"fold: input of shape {tuple(cols.shape)} does not match "
                         f"output_size={osz} with kernel {(kh, kw)}: expected dim 1 divisible "
                         f"by {kh * kw} and dim 2 equal to {oh * ow}")
    return run(fold_op, cols, output_size=osz, **a)


# --- declared kernels: composites a backend may run as one kernel ------------------------

# conv2d: a composite (unfold + one matmul per group) with its own gradient rule, so that a
# backend may run the forward, the input gradient and the weight gradient as one kernel each
# (the CPU's: backends/cpu/conv.py, Winograd for 3x3 stride-1 convolutions); without one
# the decompositions below run as ember ops on any device, and create_graph differentiates
# them.  x is already padded for asymmetric 'same' padding; the bias is added outside.

_CONV = ("stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int], "
         "groups: int")


def _conv2d_decompose(x, weight, bias=None, *, stride, padding, dilation, groups):
    n, c = x._data.shape[:2]
    o, cg, kh, kw = weight._data.shape
    cols = unfold(x, (kh, kw), dilation, padding, stride)          # (N, C*kh*kw, L)
    length = cols._data.shape[-1]
    if groups == 1:
        out = weight.reshape(o, c * kh * kw) @ cols                # (N, O, L)
    else:
        out = weight.reshape(groups, o // groups, cg * kh * kw) @ cols.reshape(
            n, groups, cg * kh * kw, length)                       # (N, G, O/G, L)
    out = out.reshape(_conv2d_shape((x, weight), dict(stride=stride, padding=padding,
                                                      dilation=dilation)))
    return out if bias is None else out + bias.reshape(o, 1, 1)


def _conv2d_shape(inputs, attrs) -> tuple:
    (n, _, h, w), (o, _, kh, kw) = inputs[0]._data.shape, inputs[1]._data.shape
    (sh, sw), (ph, pw), (dh, dw) = attrs["stride"], attrs["padding"], attrs["dilation"]
    return n, o, out_size(h, kh, dh, ph, sh), out_size(w, kw, dw, pw, sw)


def _conv2d_input_grad_decompose(g, weight, *, input_size, stride, padding, dilation,
                                 groups):
    n, o, oh, ow = g._data.shape
    _, cg, kh, kw = weight._data.shape
    if groups == 1:
        cols = weight.reshape(o, cg * kh * kw).mT @ g.reshape(n, o, oh * ow)
    else:
        cols = weight.reshape(groups, o // groups, cg * kh * kw).mT @ g.reshape(
            n, groups, o // groups, oh * ow)                       # (N, G, C/G*kh*kw, L)
    return fold(cols.reshape(n, groups * cg * kh * kw, oh * ow), input_size, (kh, kw),
                dilation, padding, stride)


def _conv2d_weight_grad_decompose(g, x, *, kernel_size, stride, padding, dilation, groups):
    n, o, oh, ow = g._data.shape
    c = x._data.shape[1]
    kh, kw = kernel_size
    cols = unfold(x, kernel_size, dilation, padding, stride)       # (N, C*kh*kw, L)
    if groups == 1:
        gw = (g.reshape(n, o, oh * ow) @ cols.mT).sum(0)
    else:
        gw = (g.reshape(n, groups, o // groups, oh * ow) @ cols.reshape(
            n, groups, c // groups * kh * kw, oh * ow).mT).sum(0)
    return gw.reshape(o, c // groups, kh, kw)


def _conv2d_input_grad_vjp(gy, out, g, weight, *, input_size, **attrs):
    # the transposed convolution's own rule (conv_transpose2d runs this op): d g is the
    # convolution of gy by the same weight, d weight the weight gradient of a convolution
    # of gy whose output gradient is g
    return (lambda: run(conv2d_op, gy, weight, **attrs),
            lambda: run(conv2d_weight_grad_op, g, gy,
                        kernel_size=tuple(weight._data.shape[-2:]), **attrs))


conv2d_input_grad_op = declare(
    "conv2d_input_grad", "gradient", rule_same, sig="g, weight, *, input_size: "
    "tuple[int, int], " + _CONV, serves="conv2d", decompose=_conv2d_input_grad_decompose,
    vjp=_conv2d_input_grad_vjp,
    shape=lambda inputs, attrs: (inputs[0]._data.shape[0],
                                 inputs[1]._data.shape[1] * attrs["groups"])
    + tuple(attrs["input_size"]),
    doc="conv2d's gradient to its input x (N, C, H, W) from d out: the transposed "
        "convolution of g by the weight")
conv2d_weight_grad_op = declare(
    "conv2d_weight_grad", "gradient", rule_same, sig="g, x, *, kernel_size: "
    "tuple[int, int], " + _CONV, serves="conv2d", decompose=_conv2d_weight_grad_decompose,
    shape=lambda inputs, attrs: (inputs[0]._data.shape[1],
                                 inputs[1]._data.shape[1] // attrs["groups"])
    + tuple(attrs["kernel_size"]),
    doc="conv2d's gradient to its weight (O, C/groups, kh, kw) from d out and the input x")


def _conv2d_vjp(g, out, x, weight, bias=None, **attrs):
    # lazily: a frozen input or weight costs nothing (the first layer's x)
    from .reduce import sum as sum_
    grads = (lambda: run(conv2d_input_grad_op, g, weight,
                         input_size=tuple(x._data.shape[-2:]), **attrs),
             lambda: run(conv2d_weight_grad_op, g, x,
                         kernel_size=tuple(weight._data.shape[-2:]), **attrs))
    return grads if bias is None else grads + (lambda: sum_(g, (0, 2, 3)),)


conv2d_op = declare(
    "conv2d", "composite", rule_same, sig="x, weight, bias?, *, " + _CONV,
    shape=_conv2d_shape, decompose=_conv2d_decompose, vjp=_conv2d_vjp,
    doc="2-D convolution (cross-correlation) of x (N, C, H, W) by weight (O, C/groups, kh, "
        "kw), plus bias (O,) when given: (N, O, OH, OW)")


def _windows(x, kernel_size, stride, padding, dilation, extra):
    """x's pooling windows as columns (N*C, kh*kw, L), padded with the dtype's lowest value,
    and the position of each window's first maximum (N*C, 1, L)."""
    from .index import mark_in_range
    from .movement import pad
    from .reduce import argmax
    n, c, h, w = x._data.shape
    (ph, pw), (eh, ew) = padding, extra
    flat = x.reshape(n * c, 1, h, w)
    if padding != (0, 0) or eh or ew:
        low = -math.inf if x._dtype.category == D.FLOAT else _int_min(x._dtype)
        flat = pad(flat, (pw, pw + ew, ph, ph + eh), value=low)
    cols = unfold(flat, kernel_size, dilation, 0, stride)          # (N*C, kh*kw, L)
    return cols, mark_in_range(argmax(cols, 1, keepdim=True), cols._data.shape[1])


def max_pool2d_decomposed(x, *, kernel_size, stride, padding, dilation, extra):
    """max_pool2d written with primitives: unfold, then argmax + gather, so the gradient
    goes to the first maximum of each window, as in PyTorch.  Returns the pooled array and
    each maximum's position in its window (what max_pool2d(return_indices=True) needs)."""
    from .index import gather
    n, c, h, w = x._data.shape
    (ph, pw), (eh, ew) = padding, extra
    cols, idx = _windows(x, kernel_size, stride, padding, dilation, extra)
    oh = (h + 2 * ph + eh - dilation[0] * (kernel_size[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pw + ew - dilation[1] * (kernel_size[1] - 1) - 1) // stride[1] + 1
    return gather(cols, 1, idx).reshape(n, c, oh, ow), idx


_POOL = ("kernel_size: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int], "
         "dilation: tuple[int, int], extra: tuple[int, int]")


def _max_pool_grad_decomposed(g, x, out, *, kernel_size, stride, padding, dilation, extra):
    """The decomposition's gradient, written with ops so that it differentiates again
    (create_graph): g goes to each window's first maximum (gather's gradient), the windows
    fold back onto the padded image (unfold's) and the padding is cut off (pad's)."""
    from .index import scatter_add
    n, c, h, w = x._data.shape
    (ph, pw), (eh, ew) = padding, extra
    cols, idx = _windows(x.detach(), kernel_size, stride, padding, dilation, extra)
    picked = scatter_add(g.new_zeros(cols._data.shape), 1, idx, g.reshape(n * c, 1, -1))
    grid = fold(picked, (h + 2 * ph + eh, w + 2 * pw + ew), kernel_size, dilation, 0, stride)
    if padding != (0, 0) or eh or ew:
        grid = grid[:, :, ph:ph + h, pw:pw + w]
    return grid.reshape(n, c, h, w)


max_pool2d_backward_op = declare(
    "max_pool2d_backward", "gradient", rule_first, sig="g, x, out, *, " + _POOL,
    serves="max_pool2d", decompose=_max_pool_grad_decomposed,
    shape=lambda inputs, attrs: inputs[1]._data.shape,
    doc="max_pool2d's gradient: g routed to the first maximum of each window")


def _max_pool_vjp(g, out, x, **attrs):
    return (run(max_pool2d_backward_op, g, x, out, **attrs),)


# a composite with its own gradient rule: the CPU runs it as one kernel each way
max_pool2d_op = declare("max_pool2d", "composite", rule_first, sig="x, *, " + _POOL,
                        save_out=True, vjp=_max_pool_vjp,
                        decompose=lambda x, **a: max_pool2d_decomposed(x, **a)[0],
                        doc="the max over each window of an (N, C, H, W) array; `extra` "
                            "pads the far edges for ceil_mode (with -inf)")




def _int_min(dtype):
    return int(np.iinfo(dtype.np).min) if dtype.category == D.INT else False


def _linear_decompose(x, weight, bias=None):
    out = x @ weight.mT
    return out if bias is None else out + bias


def _linear_vjp(g, out, x, weight, bias=None):
    # the weight's gradient comes out in the weight's own (row-major) layout: an
    # optimizer updating it then runs at full speed; a 2-D input (the common case) needs
    # no flattening of its leading dims
    flat = len(g._data.shape) == 2 and len(x._data.shape) == 2

    def gw():
        if flat:
            return g.mT @ x
        return g.reshape(-1, g._data.shape[-1]).mT @ x.reshape(-1, x._data.shape[-1])

    def gb():
        return (g if flat else g.reshape(-1, g._data.shape[-1])).sum(0)
    grads = (lambda: g @ weight, gw)
    return grads if bias is None else grads + (gb,)


def _linear_check(inputs, attrs):
    x, weight = inputs[0], inputs[1]
    xs, ws = x._data.shape, weight._data.shape        # (natives' shapes: no Size objects)
    if len(ws) != 2 or not xs or xs[-1] != ws[1]:
        raise ShapeError(
            f"linear: input {tuple(x.shape)} and weight {tuple(weight.shape)} do not fit: "
            "expected weight (out_features, in_features) with in_features == the input's "
            "last dim")
    if len(inputs) > 2 and tuple(inputs[2]._data.shape) != (ws[0],):
        raise ShapeError(f"linear: bias shape {tuple(inputs[2].shape)}, expected "
                         f"({weight._data.shape[0]},)")


def _linear_shape(inputs, attrs):
    return inputs[0]._data.shape[:-1] + inputs[1]._data.shape[:1]


# a composite with its own gradient rule; backends may give it one kernel
linear_op = declare("linear", "composite", rule_same, sig="x, weight, bias?", check=_linear_check,
                    vjp=_linear_vjp, decompose=_linear_decompose, shape=_linear_shape,
                    doc="x @ weight.T (+ bias): weight is (out_features, in_features)")


def _softmax_decompose(x, *, axis):
    from .elementwise import UNARY
    from .reduce import amax
    from .reduce import sum as sum_
    e = UNARY["exp"](x - amax(x, axis, keepdim=True).detach())
    return e / sum_(e, axis, keepdim=True)


def _softmax_vjp(g, out, x, *, axis):
    from .reduce import sum as sum_
    return (out * (g - sum_(g * out, axis, keepdim=True)),)


softmax_op = declare("softmax", "composite", rule_first, sig="x, *, axis: int",
                     shape=shape_first, save_out=True, uses=(), decompose=_softmax_decompose,
                     vjp=_softmax_vjp,
                     doc="exp(x) / sum(exp(x)) along axis (floating x; shifted by the max)")


def log_softmax_shifted(x: Tensor, axis: int) -> Tensor:
    """log(softmax(x)) along axis, x shifted by its (detached) max first: log_softmax's
    decomposition, and cross-entropy's (ops/loss.py)."""
    from .elementwise import UNARY
    from .reduce import amax
    from .reduce import sum as sum_
    shifted = x - amax(x, axis, keepdim=True).detach()
    return shifted - UNARY["log"](sum_(UNARY["exp"](shifted), axis, keepdim=True))


def _log_softmax_decompose(x, *, axis):
    return log_softmax_shifted(x, axis)


def _log_softmax_vjp(g, out, x, *, axis):
    from .elementwise import UNARY
    from .reduce import sum as sum_
    return (g - UNARY["exp"](out) * sum_(g, axis, keepdim=True),)


# one kernel where a backend has it (the CPU's: 4 NumPy passes, no ember op between them),
# else the 6 ops of its decomposition; the gradient needs only the output
log_softmax_op = declare("log_softmax", "composite", rule_first, sig="x, *, axis: int",
                         shape=shape_first, save_out=True, uses=(),
                         decompose=_log_softmax_decompose, vjp=_log_softmax_vjp,
                         doc="x - max - log(sum(exp(x - max))) along axis (floating x)")
