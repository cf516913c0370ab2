"""Conformance rows of the composites: activations, convolution, pooling, normalisation,
embedding, dropout, attention and every loss of ember.nn.functional.

Each reference is written directly in NumPy (loops over kernel taps, not over elements),
independent of the unfold/matmul decomposition ember uses.
"""
from __future__ import annotations

import math

import numpy as np

from .elementwise import ALL_FLOATS, FLOATS, Input, _erf, _lse, _softmax, case, section


def F(E):
    return E.nn.functional


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold)))
                    / beta)


# --- activations --------------------------------------------------------------------------
section("activation")
_ACTIVATIONS = [
    ("gelu", lambda E, x: F(E).gelu(x), lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    ("gelu:tanh", lambda E, x: F(E).gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("silu", lambda E, x: F(E).silu(x), lambda x: x * _sigmoid(x)),
    ("softplus", lambda E, x: F(E).softplus(x * 10, beta=0.5, threshold=5.0),
     lambda x: _softplus(x * 10, 0.5, 5.0)),
    ("elu", lambda E, x: F(E).elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    ("leaky_relu", lambda E, x: F(E).leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    ("relu6", lambda E, x: F(E).relu6(x * 4), lambda x: np.clip(x * 4, 0, 6)),
    ("hardtanh", lambda E, x: F(E).hardtanh(x, -0.5, 0.8), lambda x: np.clip(x, -0.5, 0.8)),
    ("mish", lambda E, x: F(E).mish(x), lambda x: x * np.tanh(_softplus(x))),
    ("logsigmoid", lambda E, x: F(E).logsigmoid(x * 30), lambda x: -_softplus(-x * 30)),
    ("softmin", lambda E, x: F(E).softmin(x, 1), lambda x: _softmax(-x, 1)),
    ("normalize", lambda E, x: (F(E).normalize(x), F(E).normalize(x, p=1.0, dim=-1)),
     lambda x: (x / np.maximum(np.sqrt((x * x).sum(1, keepdims=True)), 1e-12),
                x / np.maximum(np.abs(x).sum(-1, keepdims=True), 1e-12))),
    ("sigmoid:functional", lambda E, x: (F(E).sigmoid(x), F(E).tanh(x), F(E).relu(x)),
     lambda x: (_sigmoid(x), np.tanh(x), np.maximum(x, 0))),
    ("log_softmax:functional", lambda E, x: (F(E).log_softmax(x, 1), F(E).softmax(x, 0),
                                             F(E).logsumexp(x, 2)),
     lambda x: (np.log(_softmax(x, 1)), _softmax(x, 0), _lse(x, 2))),
]
_COVERS = {"sigmoid:functional": ("sigmoid", "tanh", "relu"),
           "log_softmax:functional": ("log_softmax", "softmax", "logsumexp")}
for _name, _fn, _ref in _ACTIVATIONS:
    case(_name, _fn, _ref, Input((2, 3, 4)), dtypes=ALL_FLOATS if _name in ("gelu", "silu")
         else FLOATS, ops=_COVERS.get(_name, (_name.split(":")[0],)))
case("gelu:special", lambda E, x: (F(E).gelu(x), F(E).silu(x), F(E).softplus(x)),
     lambda np, x: (x * 0.5 * (1 + _erf(x / math.sqrt(2))), x * _sigmoid(x), _softplus(x)),
     Input((8,), "f", (math.nan, math.inf, -math.inf, 0.0, -0.0, 50.0, -50.0, 1.0)),
     grad=False, layouts=False, ops=("gelu", "silu", "softplus"))
case("one_hot", lambda E, i: (F(E).one_hot(i, 5), F(E).one_hot(i)),
     lambda np, i: (np.eye(5, dtype=np.int64)[i], np.eye(i.max() + 1, dtype=np.int64)[i]),
     Input((2, 3), "ix5"), dtypes=("int64",), grad=False, out_dtype="int64")


# --- linear, convolution --------------------------------------------------------------------
section("nn")


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


case("linear", lambda E, x, w, b: (F(E).linear(x, w, b), F(E).linear(x, w)),
     lambda np, x, w, b: (x @ w.T + b, x @ w.T), Input((2, 3, 4)), Input((5, 4)), Input((5,)),
     dtypes=ALL_FLOATS)
case("linear:vector", lambda E, x, w: F(E).linear(x, w), lambda np, x, w: w @ x, Input((4,)),
     Input((3, 4)), ops=("linear",))
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


# --- pooling ------------------------------------------------------------------------------
def _windows(x, k, s, p, d, fill, ceil_mode=False, fill_past=None):
    """Every window tap of an (N, C, H, W) array, each shaped like the output; the padding
    holds `fill`, cells past it (ceil_mode) `fill_past` (default: fill)."""
    n, c, h, w = x.shape
    outs, extra = [], []
    for i, size in enumerate((h, w)):
        span = d[i] * (k[i] - 1) + 1
        num = size + 2 * p[i] - span
        o = (-(-num // s[i]) if ceil_mode else num // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= size + p[i]:
            o -= 1
        outs.append(o)
        extra.append(max(0, (o - 1) * s[i] + span - (size + 2 * p[i])))
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, extra[0]), (0, extra[1])),
                constant_values=fill if fill_past is None else fill_past)
    (oh, ow) = outs
    return [xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
               j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]


def _two(v):
    return v if isinstance(v, tuple) else (v, v)


def _max_pool(x, k, s=None, p=0, d=1, ceil_mode=False):
    return np.max(_windows(x, _two(k), _two(s or k), _two(p), _two(d), -np.inf, ceil_mode), 0)


def _avg_pool(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor=None):
    k, s, p = _two(k), _two(s or k), _two(p)
    total = np.sum(_windows(x, k, s, p, (1, 1), 0.0, ceil_mode), 0)
    if divisor is not None:
        return total / divisor
    # the cells each window averages: the input, the padding too where it counts, never
    # the cells past it (ceil_mode)
    ones = np.ones((1, 1) + x.shape[2:])
    count = np.sum(_windows(ones, k, s, p, (1, 1), float(count_include_pad), ceil_mode, 0.0), 0)
    return total / count


def _adaptive(x, size, reduce):
    """PyTorch's adaptive pooling windows (start floor(i*h/oh), end ceil((i+1)*h/oh)),
    each reduced by reduce(window, axes)."""
    n, c, h, w = x.shape
    oh, ow = size
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, :, i, j] = reduce(x[:, :, r0:r1, c0:c1], (2, 3))
    return out


def _adaptive_avg(x, size):
    return _adaptive(x, size, np.mean)


section("pooling")
for _name, _kw in [("max_pool2d", dict(kernel_size=2)),
                   ("max_pool2d:pad_stride", dict(kernel_size=3, stride=2, padding=1)),
                   ("max_pool2d:dilation_ceil", dict(kernel_size=(2, 3), stride=2, dilation=(2, 1),
                                                     ceil_mode=True)),
                   ("max_pool2d:overlapping", dict(kernel_size=3, stride=1))]:
    case(_name, (lambda kw: lambda E, x: F(E).max_pool2d(x, **kw))(_kw),
         (lambda kw: lambda np, x: _max_pool(x, kw["kernel_size"], kw.get("stride"),
                                             kw.get("padding", 0), kw.get("dilation", 1),
                                             kw.get("ceil_mode", False)))(_kw),
         Input((2, 3, 6, 7)), dtypes=ALL_FLOATS if _name == "max_pool2d" else FLOATS,
         ops=("max_pool2d",))
case("max_pool2d:ties_first", lambda E, x: F(E).max_pool2d(x * 0 + x.round(), 2),
     lambda np, x: _max_pool(np.round(x), 2), Input((1, 1, 4, 4)), grad=False,
     ops=("max_pool2d",))
case("max_pool2d:indices", lambda E, x: F(E).max_pool2d(x, 2, return_indices=True),
     lambda np, x: (_max_pool(x, 2), _pool_indices(x)), Input((2, 2, 4, 6)),
     out_dtype=("same", "int64"), ops=("max_pool2d",))
case("max_pool2d:unbatched_int", lambda E, x: F(E).max_pool2d(x, 2),
     lambda np, x: _max_pool(x[None].astype(np.float64), 2)[0].astype(x.dtype),
     Input((2, 4, 4), "i"), dtypes=("int64",), grad=False, ops=("max_pool2d",))
for _name, _kw in [("avg_pool2d", dict(kernel_size=2)),
                   ("avg_pool2d:pad", dict(kernel_size=3, stride=2, padding=1)),
                   ("avg_pool2d:exclude_pad", dict(kernel_size=3, stride=2, padding=1,
                                                   count_include_pad=False)),
                   ("avg_pool2d:ceil", dict(kernel_size=2, stride=2, ceil_mode=True)),
                   ("avg_pool2d:divisor", dict(kernel_size=2, stride=1, divisor_override=3))]:
    case(_name, (lambda kw: lambda E, x: F(E).avg_pool2d(x, **kw))(_kw),
         (lambda kw: lambda np, x: _avg_pool(x, kw["kernel_size"], kw.get("stride"),
                                             kw.get("padding", 0), kw.get("ceil_mode", False),
                                             kw.get("count_include_pad", True),
                                             kw.get("divisor_override")))(_kw),
         Input((2, 3, 5, 7)), ops=("avg_pool2d",))
case("adaptive_avg_pool2d", lambda E, x: (F(E).adaptive_avg_pool2d(x, (2, 3)),
                                          F(E).adaptive_avg_pool2d(x, 1),
                                          F(E).adaptive_avg_pool2d(x, (3, None))),
     lambda np, x: (_adaptive_avg(x, (2, 3)), _adaptive_avg(x, (1, 1)),
                    _adaptive_avg(x, (3, x.shape[3]))), Input((2, 3, 5, 7)))


def _pool_indices(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        n, c, h // 2, w // 2, 4)
    k = win.argmax(-1)
    rows = np.arange(h // 2).reshape(-1, 1) * 2 + k // 2
    cols = np.arange(w // 2).reshape(1, -1) * 2 + k % 2
    return rows * w + cols


# --- normalisation --------------------------------------------------------------------------
section("normalization")


def _norm(x, axes, eps=1e-5):
    m = x.mean(axes, keepdims=True)
    v = ((x - m) ** 2).mean(axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps)


case("batch_norm", lambda E, x, w, b: F(E).batch_norm(x, None, None, w, b, training=True),
     lambda np, x, w, b: _norm(x, (0, 2, 3)) * w.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1),
     Input((3, 2, 2, 3)), Input((2,)), Input((2,)), atol=1e-4, rtol=1e-4)
case("batch_norm:eval", lambda E, x, m, v, w, b: F(E).batch_norm(x, m, v, w, b),
     lambda np, x, m, v, w, b: (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * w[:, None]
     + b[:, None], Input((4, 3, 5)), Input((3,)), Input((3,), "p"), Input((3,)), Input((3,)),
     ops=("batch_norm",))
case("batch_norm:1d", lambda E, x: F(E).batch_norm(x, None, None, training=True, eps=1e-3),
     lambda np, x: _norm(x, (0,), 1e-3), Input((5, 3)), ops=("batch_norm",), atol=1e-4)
case("layer_norm", lambda E, x, w, b: (F(E).layer_norm(x, (4,), w, b),
                                       F(E).layer_norm(x, (3, 4), eps=1e-3)),
     lambda np, x, w, b: (_norm(x, (2,)) * w + b, _norm(x, (1, 2), 1e-3)), Input((2, 3, 4)),
     Input((4,)), Input((4,)), dtypes=ALL_FLOATS, atol=1e-4, rtol=1e-4)
case("group_norm", lambda E, x, w, b: F(E).group_norm(x, 2, w, b),
     lambda np, x, w, b: _norm(x.reshape(2, 2, -1), (2,)).reshape(x.shape)
     * w.reshape(1, -1, 1) + b.reshape(1, -1, 1),
     Input((2, 4, 3)), Input((4,)), Input((4,)), atol=1e-4, rtol=1e-4)
case("instance_norm", lambda E, x, w, b: F(E).instance_norm(x, weight=w, bias=b),
     lambda np, x, w, b: _norm(x, (2, 3)) * w.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1),
     Input((2, 3, 3, 4)), Input((3,)), Input((3,)), atol=1e-4, rtol=1e-4)
# reflect / replicate / circular padding: an index_select per padded dim
case("pad:modes", lambda E, x: tuple(F(E).pad(x, (2, 1, 1, 2), mode=m)
                                     for m in ("reflect", "replicate", "circular")),
     lambda np, x: tuple(np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode=m)
                         for m in ("reflect", "edge", "wrap")),
     Input((1, 2, 4, 5)), ops=("pad",))


# --- embedding, dropout ---------------------------------------------------------------------
section("nn")
case("embedding", lambda E, i, w: F(E).embedding(i, w), lambda np, i, w: w[i],
     Input((2, 3), "ix4"), Input((4, 3)))
# padding_idx stops the gradient of that row on purpose: forward only
case("embedding:padding_idx", lambda E, i, w: F(E).embedding(i, w, padding_idx=1),
     lambda np, i, w: w[i], Input((2, 3), "ix4"), Input((4, 3)), grad=False,
     ops=("embedding",))
case("dropout:eval", lambda E, x: (F(E).dropout(x, 0.4, training=False),
                                   F(E).dropout(x, 0.0), F(E).dropout2d(x[None], 0.3, False)),
     lambda np, x: (x, x, x[None]), Input((2, 3, 4)), ops=("dropout", "dropout2d"))


# --- attention ------------------------------------------------------------------------------
def _attention(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    return _softmax(s, -1) @ v


case("scaled_dot_product_attention", lambda E, q, k, v: (
    F(E).scaled_dot_product_attention(q, k, v),
    F(E).scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)),
     lambda np, q, k, v: (_attention(q, k, v), _attention(q, k, v, causal=True, scale=0.3)),
     Input((2, 3, 4)), Input((2, 3, 4)), Input((2, 3, 5)), atol=1e-4)
case("scaled_dot_product_attention:masks", lambda E, q, k, v, m, f: (
    F(E).scaled_dot_product_attention(q, k, v, attn_mask=m | (E.arange(4, device=q.device) == 0)),
    F(E).scaled_dot_product_attention(q, k, v, attn_mask=f)),
     lambda np, q, k, v, m, f: (_attention(q, k, v, m | (np.arange(4) == 0)),
                                _attention(q, k, v, f)),
     Input((2, 3, 2)), Input((2, 4, 2)), Input((2, 4, 3)), Input((3, 4), "b"), Input((3, 4)),
     ops=("scaled_dot_product_attention",), atol=1e-4)


# --- losses -------------------------------------------------------------------------------
section("loss")


def _log_softmax(x, axis):
    return x - _lse(x, axis)[..., None] if axis == -1 else np.log(_softmax(x, axis))


def _nll(logp, t, weight=None, ignore=-100, reduction="mean"):
    n = logp.shape[0]
    keep = t != ignore
    safe = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    w = keep.astype(np.float64) * (1.0 if weight is None else weight[safe])
    loss = -picked * w
    assert loss.shape == (n,)
    return loss.sum() / w.sum() if reduction == "mean" else loss.sum() \
        if reduction == "sum" else loss


def _ce_smooth(x, t, eps):
    logp = _log_softmax(x, 1)
    c = x.shape[1]
    return np.mean(-(1 - eps) * np.take_along_axis(logp, t[:, None], 1)[:, 0]
                   - eps / c * logp.sum(1))


_T5 = Input((5,), "i", (2, 0, 3, 3, 1))
case("cross_entropy", lambda E, x, t: (F(E).cross_entropy(x, t),
                                       F(E).cross_entropy(x, t, reduction="none")),
     lambda np, x, t: (_nll(_log_softmax(x, 1), t), _nll(_log_softmax(x, 1), t,
                                                         reduction="none")),
     Input((5, 4)), _T5, dtypes=ALL_FLOATS, atol=1e-4, rtol=1e-4)
case("cross_entropy:weight_ignore", lambda E, x, t, w: F(E).cross_entropy(
    x, t.masked_fill(t == 3, -100), weight=w.abs() + 0.1),
     lambda np, x, t, w: _nll(_log_softmax(x, 1), np.where(t == 3, -100, t), np.abs(w) + 0.1),
     Input((5, 4)), _T5, Input((4,)), ops=("cross_entropy",))
case("cross_entropy:label_smoothing", lambda E, x, t: F(E).cross_entropy(
    x, t, label_smoothing=0.2), lambda np, x, t: _ce_smooth(x, t, 0.2), Input((5, 4)), _T5,
     ops=("cross_entropy",))
case("cross_entropy:probabilities", lambda E, x, p: F(E).cross_entropy(x, p.softmax(1)),
     lambda np, x, p: np.mean(-(_softmax(p, 1) * _log_softmax(x, 1)).sum(1)),
     Input((5, 4)), Input((5, 4)), ops=("cross_entropy",))
case("cross_entropy:spatial", lambda E, x, t: F(E).cross_entropy(x, t, reduction="sum"),
     lambda np, x, t: -np.take_along_axis(np.log(_softmax(x, 1)), t[:, None], 1).sum(),
     Input((2, 3, 2, 2)), Input((2, 2, 2), "ix3"), ops=("cross_entropy",))
case("nll_loss", lambda E, x, t: (F(E).nll_loss(x, t), F(E).nll_loss(x, t, reduction="sum")),
     lambda np, x, t: (_nll(x, t), _nll(x, t, reduction="sum")), Input((5, 4)), _T5)
case("mse_loss", lambda E, x, y: (F(E).mse_loss(x, y), F(E).mse_loss(x, y, reduction="none")),
     lambda np, x, y: (((x - y) ** 2).mean(), (x - y) ** 2), Input((3, 4)), Input((3, 4)))
case("l1_loss", lambda E, x, y: (F(E).l1_loss(x, y), F(E).l1_loss(x, y, reduction="sum")),
     lambda np, x, y: (np.abs(x - y).mean(), np.abs(x - y).sum()), Input((3, 4)),
     Input((3, 4)))
case("smooth_l1_loss", lambda E, x, y: F(E).smooth_l1_loss(x * 2, y, beta=0.5),
     lambda np, x, y: np.mean(np.where(np.abs(2 * x - y) < 0.5, (2 * x - y) ** 2 / 1.0,
                                       np.abs(2 * x - y) - 0.25)), Input((3, 4)), Input((3, 4)))
case("huber_loss", lambda E, x, y: F(E).huber_loss(x * 2, y, delta=0.7),
     lambda np, x, y: np.mean(np.where(np.abs(2 * x - y) < 0.7, 0.5 * (2 * x - y) ** 2,
                                       0.7 * (np.abs(2 * x - y) - 0.35))),
     Input((3, 4)), Input((3, 4)))
case("binary_cross_entropy", lambda E, p, t, w: (F(E).binary_cross_entropy(p, t),
                                                 F(E).binary_cross_entropy(p, t, weight=w)),
     lambda np, p, t, w: (np.mean(-(t * np.log(p) + (1 - t) * np.log(1 - p))),
                          np.mean(-w * (t * np.log(p) + (1 - t) * np.log(1 - p)))),
     Input((3, 4), "f", tuple(np.linspace(0.05, 0.95, 12))), Input((3, 4), "f",
                                                              (0, 1, 1, 0) * 3),
     Input((3, 4), "p"), atol=1e-4)
case("binary_cross_entropy_with_logits", lambda E, x, t, pw: (
    F(E).binary_cross_entropy_with_logits(x * 5, t),
    F(E).binary_cross_entropy_with_logits(x, t, pos_weight=pw)),
     lambda np, x, t, pw: (np.mean((1 - t) * 5 * x + _softplus(-5 * x)),
                           np.mean((1 - t) * x + (1 + (pw - 1) * t) * _softplus(-x))),
     Input((3, 4)), Input((3, 4), "f", (0, 1, 1, 0) * 3), Input((4,), "p"), atol=1e-4)
case("kl_div", lambda E, x, t: (F(E).kl_div(x.log_softmax(1), t.softmax(1), reduction="batchmean"),
                                F(E).kl_div(x, t, reduction="sum", log_target=True)),
     lambda np, x, t: ((_softmax(t, 1) * (np.log(_softmax(t, 1)) - _log_softmax(x, 1))).sum()
                       / x.shape[0], (np.exp(t) * (t - x)).sum()),
     Input((3, 4)), Input((3, 4)))


# --- upsampling ---------------------------------------------------------------------------
section("nn")


def _nearest(n_in, n_out, exact):
    scale = n_in / n_out
    src = np.floor((np.arange(n_out) + (0.5 if exact else 0.0)) * scale).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _linear_taps(n_in, n_out, align_corners):
    if align_corners:
        src = np.arange(n_out) * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
    low = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    return low, np.minimum(low + 1, n_in - 1), src - low


def _resize(x, size, mode, align_corners=False):
    """PyTorch's interpolate, one spatial dim at a time (separable)."""
    for axis, n_out in zip(range(2, x.ndim), size):
        n_in = x.shape[axis]
        if mode.startswith("nearest"):
            x = np.take(x, _nearest(n_in, n_out, mode == "nearest-exact"), axis=axis)
        else:
            low, high, w = _linear_taps(n_in, n_out, align_corners)
            shape = [1] * x.ndim
            shape[axis] = n_out
            w = w.reshape(shape)
            x = np.take(x, low, axis=axis) * (1 - w) + np.take(x, high, axis=axis) * w
    return x


case("interpolate", lambda E, x: (F(E).interpolate(x, size=(5, 3)),
                                  F(E).interpolate(x, size=(7, 2), mode="nearest-exact"),
                                  F(E).interpolate(x, size=(5, 7), mode="bilinear"),
                                  F(E).interpolate(x, size=(3, 5), mode="bilinear",
                                                   align_corners=True)),
     lambda np, x: (_resize(x, (5, 3), "nearest"), _resize(x, (7, 2), "nearest-exact"),
                    _resize(x, (5, 7), "bilinear"), _resize(x, (3, 5), "bilinear", True)),
     Input((2, 3, 4, 4)), ops=("interpolate", "upsample"), atol=1e-5)
case("interpolate:linear", lambda E, x: (F(E).interpolate(x, size=7, mode="linear"),
                                         F(E).upsample(x, size=6)),
     lambda np, x: (_resize(x, (7,), "linear"), _resize(x, (6,), "nearest")),
     Input((2, 3, 4)), ops=("interpolate", "upsample"))


def _pixel_shuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(
        n, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // r, r, w // r, r).transpose(0, 1, 3, 5, 2, 4).reshape(
        n, c * r * r, h // r, w // r)


case("pixel_shuffle", lambda E, x: (F(E).pixel_shuffle(x, 2), F(E).pixel_unshuffle(x, 2)),
     lambda np, x: (_pixel_shuffle(x, 2), _pixel_unshuffle(x, 2)), Input((2, 8, 2, 4)),
     ops=("pixel_shuffle", "pixel_unshuffle"))
case("dropout:eval_nd", lambda E, x: (F(E).dropout1d(x[0], 0.3, False),
                                      F(E).dropout3d(x[None], 0.3, False)),
     lambda np, x: (x[0], x[None]), Input((2, 3, 4, 2)), ops=("dropout1d", "dropout3d"))
