"""unfold (im2col) and fold (col2im) over NCHW tensors: convolution and pooling build on them.

Kernels: unfold(x, *, kernel_size, dilation, padding, stride) -> (N, C*kh*kw, L);
fold(cols, *, output_size, kernel_size, dilation, padding, stride) -> (N, C, H, W),
overlapping patches summing.  All parameters are (h, w) pairs of ints.
"""
from __future__ import annotations

from ..dispatch import run
from ..errors import ShapeError
from ..tensor import Tensor
from ._op import declare, rule_first


def pair(v, name="") -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ShapeError(f"{name}: expected an int or a pair of ints, got {v}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def out_size(size, k, d, p, s) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


unfold_op = declare(
    "unfold", "nn", rule_first,
    vjp=lambda g, out, x, **a: (run(fold_op, g, output_size=tuple(x._data.shape[-2:]), **a),),
    uses=())
fold_op = declare("fold", "nn", rule_first,
                  vjp=lambda g, out, x, *, output_size, **a: (run(unfold_op, g, **a),), uses=())


def _params(name, kernel_size, dilation, padding, stride):
    k, d, p, s = (pair(v, name) for v in (kernel_size, dilation, padding, stride))
    if min(k) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise ShapeError(f"{name}: kernel_size, dilation and stride must be positive and "
                         f"padding non-negative; got kernel_size={k}, dilation={d}, "
                         f"padding={p}, stride={s}")
    return dict(kernel_size=k, dilation=d, padding=p, stride=s)


def unfold(x: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """torch.nn.functional.unfold for a 4-D (N, C, H, W) input."""
    if x.ndim != 4:
        raise ShapeError(f"unfold: expected a 4-D (N, C, H, W) input, got shape "
                         f"{tuple(x.shape)}")
    a = _params("unfold", kernel_size, dilation, padding, stride)
    for i, size in enumerate(x._data.shape[2:]):
        if out_size(size, a["kernel_size"][i], a["dilation"][i], a["padding"][i],
                    a["stride"][i]) <= 0:
            raise ShapeError(
                f"unfold: the kernel {a['kernel_size']} (dilation {a['dilation']}) does not "
                f"fit the padded input {tuple(x.shape[2:])} + padding {a['padding']}")
    return run(unfold_op, x, **a)


def fold(cols: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
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
