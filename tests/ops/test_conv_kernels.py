"""The CPU backend's own im2col/col2im kernels (backends/cpu: one strided-window copy; a
stride-1 fold as contiguous adds over widened rows, a few images at a time) give the same
arrays, bit for bit and dtype for dtype, as the array-API table's kernels they replace, over
kernel sizes, dilations, paddings and strides; and unfold's result never aliases its input."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from ember.backends import array_api, cpu
from ember.backends.cpu import conv

GENERAL = array_api.kernels(np, native=True)
FOLD = cpu._fold(GENERAL["fold"])
CONV = conv.kernels(cpu._unfold, FOLD)

GEOMETRIES = [
    (kh, kw, dh, dw, ph, pw, sh, sw)
    for kh, kw, dh, dw, ph, pw, sh, sw in itertools.product(
        (1, 2, 3), (1, 3), (1, 2), (1, 2), (0, 1, 2), (0, 1), (1, 2), (1, 3))
]


def _cases(h, w):
    for kh, kw, dh, dw, ph, pw, sh, sw in GEOMETRIES:
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        if oh > 0 and ow > 0:
            yield (oh, ow), dict(kernel_size=(kh, kw), dilation=(dh, dw), padding=(ph, pw),
                                 stride=(sh, sw))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("hw", [(5, 6), (8, 7)])
def test_unfold_and_fold_match_the_array_api_kernels(dtype, hw):
    rng = np.random.default_rng(0)
    h, w = hw
    for (oh, ow), a in _cases(h, w):
        x = (rng.standard_normal((2, 3, h, w)) * 5).astype(dtype)
        got, want = cpu._unfold(x, **a), GENERAL["unfold"](x, **a)
        assert got.dtype == want.dtype and np.array_equal(got, want), a
        kk = a["kernel_size"][0] * a["kernel_size"][1]
        cols = (rng.standard_normal((2, 3 * kk, oh * ow)) * 5).astype(dtype)
        got = FOLD(cols, output_size=(h, w), **a)
        want = GENERAL["fold"](cols, output_size=(h, w), **a)
        assert got.dtype == want.dtype and np.array_equal(got, want), a


def test_fold_in_blocks_of_images_matches(monkeypatch):
    # a block smaller than one image: one image per block; the sums stay the same
    rng = np.random.default_rng(1)
    a = dict(kernel_size=(3, 3), dilation=(1, 1), padding=(1, 1), stride=(1, 1))
    cols = rng.standard_normal((5, 4 * 9, 36), dtype=np.float32)
    want = GENERAL["fold"](cols, output_size=(6, 6), **a)
    monkeypatch.setattr(cpu, "_FOLD_BLOCK", 1)
    assert np.array_equal(FOLD(cols, output_size=(6, 6), **a), want)


def test_unfold_result_is_a_new_array():
    # a 1x1 kernel without padding is a window view of x itself; the result is still a copy
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    a = dict(kernel_size=(1, 1), dilation=(1, 1), padding=(0, 0), stride=(1, 1))
    cols = cpu._unfold(x, **a)
    assert not np.shares_memory(cols, x) and cols.flags.writeable
    cols[...] = -1
    assert x.min() == 0


# -- conv2d and its gradients (backends/cpu/conv.py) --------------------------------------

def _conv_ref(x, w, padding, groups):
    """float64 direct convolution (one einsum per tap and group)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (ph, pw), og = padding, o // groups
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = h + 2 * ph - kh + 1, wd + 2 * pw - kw + 1
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", xp[:, g * cg:(g + 1) * cg, i:i + oh, j:j + ow],
                    w[g * og:(g + 1) * og, :, i, j])
    return out


WINOGRAD = [  # (N, C, H, W, O, padding, groups): odd sizes, paddings 0-2, groups; F(4x4)
    # but for the flat (2, 34) output (F(2x2): its tiles cost less there)
    (2, 8, 9, 9, 8, (1, 1), 1), (3, 8, 10, 9, 16, (0, 0), 1), (2, 16, 8, 11, 8, (2, 1), 1),
    (2, 16, 9, 8, 32, (1, 2), 2), (5, 24, 8, 8, 24, (1, 1), 3), (1, 8, 7, 9, 8, (2, 2), 1),
    (2, 8, 2, 34, 8, (1, 1), 1), (4, 32, 16, 16, 32, (1, 1), 1)]


@pytest.mark.parametrize("shape", WINOGRAD)
@pytest.mark.parametrize("block", [None, 1])
def test_winograd_conv2d_and_gradients_match_a_float64_reference(shape, block, monkeypatch):
    """The Winograd kernels (float32 3x3 stride 1) against a direct float64 convolution:
    the forward, the input gradient (the convolution's adjoint) and the weight gradient,
    within float32 rounding of the sums (F(4x4)'s transforms round ~15x more than a direct
    sum's: 1e-5 of the largest value); block=1 runs one image a block (a partial last
    block, buffers reused across blocks)."""
    if block is not None:
        monkeypatch.setattr(conv, "_BLOCK", block)
    n, c, h, w, o, padding, groups = shape
    a = dict(stride=(1, 1), padding=padding, dilation=(1, 1), groups=groups)
    assert conv.winograd(np.dtype(np.float32), (o, c // groups, 3, 3), (h, w), **a)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((o, c // groups, 3, 3), dtype=np.float32)
    want = _conv_ref(x, wt, padding, groups)
    g = rng.standard_normal(want.shape, dtype=np.float32)
    got = CONV["conv2d"](x, wt, **a)
    bias = rng.standard_normal(o, dtype=np.float32)
    np.testing.assert_allclose(CONV["conv2d"](x, wt, bias, **a), want + bias[:, None, None],
                               rtol=0, atol=1e-5 * np.abs(want).max(), err_msg="bias")
    # the references: dx = the convolution of g by the flipped, transposed filter (padding
    # 2 - p); dw[o, c, i, j] = sum of g[:, o] * the (i, j)-shifted padded input x[:, c]
    gx = CONV["conv2d_input_grad"](g, wt, input_size=(h, w), **a)
    gw = CONV["conv2d_weight_grad"](g, x, kernel_size=(3, 3), **a)
    cg, og = c // groups, o // groups
    flipped = np.concatenate([wt[k * og:(k + 1) * og, :, ::-1, ::-1].transpose(1, 0, 2, 3)
                              for k in range(groups)])
    want_gx = _conv_ref(g, flipped, (2 - padding[0], 2 - padding[1]), groups)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh, ow = want.shape[2:]
    want_gw = np.stack([np.stack([np.concatenate([np.einsum(
        "nohw,nchw->oc", g[:, k * og:(k + 1) * og], xp[:, k * cg:(k + 1) * cg, i:i + oh, j:j + ow])
        for k in range(groups)]) for j in range(3)], -1) for i in range(3)], -2)
    for name, got_, want_ in (("forward", got, want), ("input grad", gx, want_gx),
                              ("weight grad", gw, want_gw)):
        assert got_.dtype == np.float32 and got_.shape == want_.shape, name
        scale = np.abs(want_).max()
        np.testing.assert_allclose(got_, want_, rtol=0, atol=1e-5 * scale, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_conv2d_kernels_off_winograd_match_the_decomposition(dtype):
    """Every other convolution (stride, dilation, other kernels, few channels, small
    planes, float64/float16): without groups, float32 and float64 forwards and weight
    gradients onto planes of up to 64 pixels are one GEMM over the whole batch, and the
    kernels conv._by_rows picks (larger planes, kernels over 1x1) run channels-last im2col
    rows (the same sums in another order: equal within rounding); everything else runs
    the decomposition's kernels, so its results are the decomposition's bit for bit."""
    import ember
    from ember.ops.nn import conv2d_op
    rng = np.random.default_rng(2)
    for (n, c, h, w, o, k, s, p, d, g) in [
            (2, 4, 9, 8, 6, 3, 1, 1, 1, 1), (2, 8, 9, 8, 8, 3, 2, 1, 1, 1),
            (2, 8, 9, 8, 8, 3, 1, 1, 2, 1), (2, 8, 4, 4, 8, 3, 1, 1, 1, 1),
            (3, 5, 6, 7, 4, 1, 1, 0, 1, 1), (2, 3, 11, 10, 5, 4, 3, 2, 1, 1),
            (2, 8, 9, 8, 12, (1, 3), 1, (0, 1), 1, 2), (3, 6, 7, 7, 9, 2, 1, 0, 1, 3),
            # channels-last rows: 32 channels (the input gradient's too), strides, dilation,
            # uneven kernels, strides and paddings, a 7x7 kernel on 3 channels
            (2, 32, 12, 11, 8, 3, 2, 1, 1, 1), (2, 32, 20, 19, 8, 3, 2, 1, 2, 1),
            (2, 32, 19, 21, 6, (3, 2), (2, 3), (1, 0), (1, 2), 1),
            (2, 3, 23, 22, 5, 7, 2, 3, 1, 1), (2, 8, 13, 12, 4, 4, 2, 1, 1, 1),
            # the input gradient's strided rows by phase: dilated rows, 4x4 stride 2, a
            # stride over the kernel's width
            (2, 32, 15, 14, 8, (3, 4), 2, (1, 2), (2, 1), 1), (3, 32, 9, 10, 8, 4, 2, 1, 1, 1),
            (2, 32, 13, 11, 8, (2, 3), (3, 4), (1, 2), 1, 1)]:
        k2, s2, p2, d2 = (v if isinstance(v, tuple) else (v, v) for v in (k, s, p, d))
        a = dict(stride=s2, padding=p2, dilation=d2, groups=g)
        x = rng.standard_normal((n, c, h, w)).astype(dtype)
        wt = rng.standard_normal((o, c // g) + k2).astype(dtype)
        assert not conv.winograd(np.dtype(dtype), wt.shape, (h, w), **a)
        b = rng.standard_normal(o).astype(dtype)
        ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(wt, requires_grad=True)
        eb = ember.tensor(b, requires_grad=True)
        got = ember.dispatch.run(conv2d_op, ex, ew, eb, **a)
        g_ = rng.standard_normal(got.shape).astype(dtype)
        got.backward(ember.tensor(g_))
        dx, dw = ember.tensor(x, requires_grad=True), ember.tensor(wt, requires_grad=True)
        db = ember.tensor(b, requires_grad=True)
        want = conv2d_op.decompose(dx, dw, db, **a)
        want.backward(ember.tensor(g_))
        # the bias gradient: one sum over (N, OH, OW) each way
        np.testing.assert_allclose(eb.grad.numpy().astype(np.float64),
                                   db.grad.numpy().astype(np.float64),
                                   rtol=1e-2 if dtype == np.float16 else 1e-5)
        flat = g == 1 and dtype != np.float16 and got.shape[2] * got.shape[3] <= 64
        rows = {kernel: conv._by_rows(kernel, np.dtype(dtype), np.dtype(dtype), g, c // g, k2)
                for kernel in ("forward", "input", "weight")}
        for name, u, v, exact in (("forward", got, want, not (flat or rows["forward"])),
                                  ("input grad", ex.grad, dx.grad, not rows["input"]),
                                  ("weight grad", ew.grad, dw.grad,
                                   not (flat or rows["weight"]))):
            u, v = u.detach().numpy(), v.detach().numpy()
            assert u.dtype == v.dtype and u.shape == v.shape, name
            if exact:
                assert np.array_equal(u, v), (name, n, c, k, s, p, d, g)
            else:
                tol = 1e-5 if dtype == np.float32 else 1e-13
                np.testing.assert_allclose(u, v, rtol=tol, atol=tol * np.abs(v).max(),
                                           err_msg=name)
