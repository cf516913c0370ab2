"""Conformance rows of the convolutions (conv1d, conv2d, conv3d, conv_transpose1d,
conv_transpose2d and conv_transpose3d) and their building blocks unfold and fold.

Each reference is written directly in NumPy (loops over kernel taps, not over elements),
independent of the unfold/matmul decomposition ember uses.
"""
from __future__ import annotations

import numpy as np

from ._table import ALL_FLOATS, FLOATS, F, Input, Rows

ROWS = Rows("conv")
case = ROWS.case


def _conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                tap = xs[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                         j * dw:j * dw + sw * (ow - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", tap, ws[:, :, i, j])
    return out if b is None else out + b.reshape(1, o, 1, 1)


def _conv_transpose2d(x, w, b, stride, padding, output_padding, dilation=(1, 1)):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw), (oph, opw) = stride, padding, dilation, output_padding
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    out = np.zeros((n, o, full_h, full_w))
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (h - 1) + 1:sh,
                j * dw:j * dw + sw * (wd - 1) + 1:sw] += np.einsum("nchw,co->nohw", x,
                                                                   w[:, :, i, j])
    out = out[:, :, ph:full_h - ph, pw:full_w - pw]
    return out + b.reshape(1, o, 1, 1)


def _unfold(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    taps = [xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
               j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]
    return np.stack(taps, 2).reshape(n, c * k[0] * k[1], oh * ow)


def _fold(cols, size, k, d, p, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    oh = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = cols.reshape(n, c, k[0] * k[1], oh, ow)
    out = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]] += cols[:, :, i * k[1] + j]
    return out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


for _name, _kw in [("conv2d", {}),
                   ("conv2d:stride_padding", dict(stride=2, padding=1)),
                   ("conv2d:dilation", dict(dilation=2, padding=(2, 1))),
                   ("conv2d:groups", dict(groups=2, stride=(1, 2))),
                   ("conv2d:same", dict(padding="same", dilation=(1, 2)))]:
    _groups = _kw.get("groups", 1)

    def _ref(np, x, w, b, kw=_kw):
        pad = kw.get("padding", 0)
        dil = kw.get("dilation", 1)
        dil = dil if isinstance(dil, tuple) else (dil, dil)
        if pad == "same":
            pad = tuple(d * (k - 1) // 2 for d, k in zip(dil, w.shape[2:]))
        pad = pad if isinstance(pad, tuple) else (pad, pad)
        st = kw.get("stride", 1)
        st = st if isinstance(st, tuple) else (st, st)
        return _conv2d(x, w, b, st, pad, dil, kw.get("groups", 1))
    case(_name, (lambda kw: lambda E, x, w, b: F(E).conv2d(x, w, b, **kw))(_kw), _ref,
         Input((2, 4, 6, 5)), Input((4, 4 // _groups, 3, 3)), Input((4,)),
         dtypes=ALL_FLOATS if _name == "conv2d" else FLOATS, ops=("conv2d",),
         atol=1e-4, rtol=1e-4)
# 3x3 stride-1 float32 convolutions with 8+ channels a group take the CPU's Winograd
# kernels (backends/cpu/conv.py; 16+ 2x2 output tiles an image): odd sizes (a partial
# last tile), paddings 0-2, groups
case("conv2d:winograd", lambda E, x, w, b: (F(E).conv2d(x, w, b, padding=1),
                                            F(E).conv2d(x, w, None, padding=(0, 2))),
     lambda np, x, w, b: (_conv2d(x, w, b, padding=(1, 1)), _conv2d(x, w, padding=(0, 2))),
     Input((2, 8, 7, 9)), Input((12, 8, 3, 3)), Input((12,)), ops=("conv2d",),
     atol=1e-4, rtol=1e-4)
case("conv2d:winograd_groups", lambda E, x, w: F(E).conv2d(x, w, padding=2, groups=2),
     lambda np, x, w: _conv2d(x, w, padding=(2, 2), groups=2), Input((3, 16, 6, 5)),
     Input((16, 8, 3, 3)), ops=("conv2d",), atol=1e-4, rtol=1e-4)
case("conv2d:unbatched", lambda E, x, w: F(E).conv2d(x, w, padding=1),
     lambda np, x, w: _conv2d(x[None], w, padding=(1, 1))[0], Input((2, 4, 4)),
     Input((3, 2, 3, 3)), ops=("conv2d",), atol=1e-4)
case("conv1d", lambda E, x, w, b: (F(E).conv1d(x, w, b), F(E).conv1d(x, w, b, stride=2,
                                                                      padding=2, dilation=2)),
     lambda np, x, w, b: (_conv2d(x[:, :, None], w[:, :, None], b)[:, :, 0],
                          _conv2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 2),
                                  (1, 2))[:, :, 0]),
     Input((2, 3, 9)), Input((4, 3, 3)), Input((4,)), atol=1e-4)
case("conv1d:groups", lambda E, x, w: F(E).conv1d(x, w, groups=3),
     lambda np, x, w: _conv2d(x[:, :, None], w[:, :, None], groups=3)[:, :, 0],
     Input((2, 3, 7)), Input((6, 1, 2)), ops=("conv1d",))
def _conv3d(x, w, b, stride, padding, dilation):
    """Reference: loops over the kernel's depth taps, each a _conv2d over depth slices."""
    d = x.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (0, 0), (0, 0)))
    od = (d + 2 * padding[0] - dilation[0] * (w.shape[2] - 1) - 1) // stride[0] + 1
    out = 0
    for t in range(w.shape[2]):
        s0 = t * dilation[0]
        taps = xp[:, :, s0:s0 + stride[0] * (od - 1) + 1:stride[0]]
        y = np.stack([_conv2d(taps[:, :, i], w[:, :, t], None, stride[1:], padding[1:],
                              dilation[1:]) for i in range(od)], 2)
        out = out + y
    return out + b.reshape(1, -1, 1, 1, 1)


case("conv3d", lambda E, x, w, b: (F(E).conv3d(x, w, b),
                                   F(E).conv3d(x, w, b, stride=(2, 1, 2), padding=(1, 2, 0),
                                               dilation=(1, 2, 1))),
     lambda np, x, w, b: (_conv3d(x, w, b, (1, 1, 1), (0, 0, 0), (1, 1, 1)),
                          _conv3d(x, w, b, (2, 1, 2), (1, 2, 0), (1, 2, 1))),
     Input((2, 3, 5, 4, 6)), Input((4, 3, 2, 3, 2)), Input((4,)), atol=1e-4, rtol=1e-4)
case("conv3d:same", lambda E, x, w: F(E).conv3d(x, w, padding="same"),
     lambda np, x, w: _conv3d(x, w, np.zeros(w.shape[0]), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
     Input((1, 2, 4, 5, 3)), Input((3, 2, 3, 3, 3)), ops=("conv3d",), atol=1e-4, rtol=1e-4)
case("conv_transpose2d", lambda E, x, w, b: F(E).conv_transpose2d(
    x, w, b, stride=2, padding=1, output_padding=1),
     lambda np, x, w, b: _conv_transpose2d(x, w, b, (2, 2), (1, 1), (1, 1)),
     Input((2, 3, 3, 4)), Input((3, 2, 3, 3)), Input((2,)), atol=1e-4)
case("unfold", lambda E, x: (E.unfold(x, 3, padding=1, stride=2),
                             E.unfold(x, (2, 3), dilation=(2, 1), stride=(1, 2))),
     lambda np, x: (_unfold(x, (3, 3), (1, 1), (1, 1), (2, 2)),
                    _unfold(x, (2, 3), (2, 1), (0, 0), (1, 2))), Input((2, 2, 5, 6)))
case("unfold:tiles", lambda E, x: E.unfold(x, 2, stride=2),
     lambda np, x: _unfold(x, (2, 2), (1, 1), (0, 0), (2, 2)), Input((2, 3, 4, 6)),
     ops=("unfold",))
case("fold", lambda E, c, d: (E.fold(c, (4, 4), 2, stride=2), E.fold(d, (5, 5), 2, padding=1,
                                                                      stride=2)),
     lambda np, c, d: (_fold(c, (4, 4), (2, 2), (1, 1), (0, 0), (2, 2)),
                       _fold(d, (5, 5), (2, 2), (1, 1), (1, 1), (2, 2))), Input((1, 8, 4)),
     Input((2, 4, 9)))
case("fold:overlapping", lambda E, c: E.fold(c, (4, 5), (2, 3), dilation=(1, 1)),
     lambda np, c: _fold(c, (4, 5), (2, 3), (1, 1), (0, 0), (1, 1)), Input((2, 6, 9)),
     ops=("fold",))
case("conv_transpose1d", lambda E, x, w, b: (F(E).conv_transpose1d(x, w, b),
                                             F(E).conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                   output_padding=1,
                                                                   dilation=2)),
     lambda np, x, w, b: (_conv_transpose2d(x[:, :, None], w[:, :, None], b, (1, 1), (0, 0),
                                            (0, 0))[:, :, 0],
                          _conv_transpose2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 1),
                                            (0, 1), (1, 2))[:, :, 0]),
     Input((2, 3, 5)), Input((3, 2, 3)), Input((2,)), atol=1e-4)


def _conv_transpose3d(x, w, b, stride, padding, output_padding):
    """Reference: every input depth slice's _conv_transpose2d, added at its depth taps."""
    n, _, d = x.shape[:3]
    kd = w.shape[2]
    full = (d - 1) * stride[0] + kd + output_padding[0]
    out = None
    for i in range(d):
        for t in range(kd):
            y = _conv_transpose2d(x[:, :, i], w[:, :, t], np.zeros(w.shape[1]), stride[1:],
                                  padding[1:], output_padding[1:])
            if out is None:
                out = np.zeros((n, w.shape[1], full) + y.shape[2:])
            out[:, :, i * stride[0] + t] += y
    out = out[:, :, padding[0]:full - padding[0]]
    return out + b.reshape(1, -1, 1, 1, 1)


case("conv_transpose3d", lambda E, x, w, b: (
    F(E).conv_transpose3d(x, w, b),
    F(E).conv_transpose3d(x, w, b, stride=(2, 1, 2), padding=(1, 0, 1),
                          output_padding=(1, 0, 1))),
     lambda np, x, w, b: (_conv_transpose3d(x, w, b, (1, 1, 1), (0, 0, 0), (0, 0, 0)),
                          _conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 0, 1))),
     Input((2, 3, 3, 2, 3)), Input((3, 2, 2, 2, 3)), Input((2,)), atol=1e-4, rtol=1e-4)
