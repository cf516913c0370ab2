"""The CPU's kernels of ops/nn.py's conv2d and its two gradients (conv2d_input_grad,
conv2d_weight_grad).

float32 3x3 stride-1 convolutions (dilation 1, padding at most 2, any groups) take Winograd
F(4x4, 3x3) (F(2x2, 3x3) where partial edge tiles make the larger ones dearer): each
(t+2)x(t+2) input tile d (stride t) becomes V = B^T d B, each 3x3 filter U = G g G^T, the
(t+2)^2 tile positions multiply as as many GEMMs (tiles x C) @ (C x O) per group, and
A^T M A gives the t x t output tile: 36 products for 16 outputs (F(2x2): 16 for 4), against
144 (64) for im2col's (4x and 2.25x fewer multiply-adds).  The input gradient is the same
convolution of the output gradient by the flipped, transposed filter (padding 2 - p); the
weight gradient transforms the output gradient's t x t tiles (A g A^T), multiplies them
with the input's V over all tiles (O x tiles x C GEMMs) and maps the sums back
(G^T dU G).

The transforms are themselves small GEMMs (B^T over each image row's columns, one GEMM
reading NCHW and writing channels-last, then over the rows of the tiles gathered by one
strided copy; kron(A^T, A^T)), and everything runs a few images at a time so that the
tiles and their products stay in the L2 cache (the whole batch's do not: NumPy's passes
over them then run at the memory's speed).

Other float32 and float64 convolutions without groups onto small planes (<= 64 pixels) fold
the batch into one GEMM each for the forward and the weight gradient (im2col as
(C*kh*kw, N*L) columns).  Larger planes (and the input gradient at any size) with kernels
over 1x1 and enough channels (_by_rows) take im2col rows channels-last, a few images at a
time: (m*L, kh*kw*C) rows, gathered in runs of kw*C values whatever the stride (the
(C*kh*kw, L) layout's strided copy moves single values at stride 2), one GEMM each for the
forward and the weight gradient (which gathers its rows again, in the cache, rather than
keeping the forward's), and for the input gradient GEMMs to the taps, added into a
channels-last block (no fold): with a stride, one GEMM per kernel row and group of
stride-many taps whose output is laid out as the block's rows (held by phase), one
contiguous add each (_rows_input_grad).  Everything else
(grouped convolutions off Winograd, float16 and other dtypes, 1x1 kernels, few channels)
runs what the decomposition runs (the unfold kernel, NumPy's matmul per image and group,
the fold kernel), with the same results.

Measured and not kept (CPU time side by side, 1 thread): NumPy's ufuncs (add) over a
strided region cost ~3x a contiguous run's per value (copyto does not), whatever the
run's length: layouts that make the adds contiguous paid, longer strided runs alone did
not (3x3 s2 input gradient within noise).  Grouped Winograd products as one GEMM with a
block-diagonal filter (4x the multiply-adds): 1.5x slower than the (tile position, group)
batch of 16x16 GEMMs; the tiler's column GEMMs over 4 images a call where the blocks hold
one (fewer, larger GEMMs): 3-7% slower (3x3 and g4 rows); Winograd blocks of 512 KiB for
the grouped g4 row: 2% faster, within noise.  The Winograd weight gradient's tiles of d
out gathered as units of t values (the copy 3.5x cheaper), A over the columns then a GEMM
on a transposed K = t operand: 4-10% slower (that GEMM 2x dearer).  Stride 2 in NCHW by
phases (the input split into its column phases, then the (C*kh*kw, L) columns copied in
runs of OW, one GEMM straight into the output: no transposes): as fast as the
channels-last rows (the columns' 16-value runs cost what the transposes save).
"""
from __future__ import annotations

import numpy as np
from ember.ops.nn import out_size

_F32 = np.dtype(np.float32)


def _scheme(t: int) -> dict:
    """F(t x t, 3x3)'s transforms: V = BT @ d @ BT.T (a (t+2) x (t+2) input tile) and the
    gradient's d M = A @ d out @ A.T; as Kronecker products over the flattened tiles
    U = KG @ g (the 3x3 filter), the output tile = KAT.T @ M, and KGT (d g from d U);
    `unit` moves t floats at once."""
    if t == 2:
        bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
        g = [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]
        at = [[1, 1, 1, 0], [0, 1, -1, -1]]
    else:                     # interpolation points 0, +-1, +-2 (Lavin & Gray)
        bt = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
        g = [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
             [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]
        at = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
              [0, 1, -1, 8, -8, 1]]
    bt, g, at = (np.array(m, np.float64) for m in (bt, g, at))
    kg = np.kron(g, g)

    def f32(a):
        return np.ascontiguousarray(a, dtype=np.float32)
    return dict(t=t, alpha=t + 2, BT=f32(bt), A=f32(at.T), KAT=f32(np.kron(at, at).T),
                KG=f32(kg), KGT=f32(kg.T), unit=np.float64 if t == 2 else np.complex128)


# F(2x2, 3x3): 16 products for 4 outputs; F(4x4, 3x3): 36 for 16 (1.8x fewer, and 1.8x
# fewer transformed values to copy), its rounding ~15x F(2x2)'s (still ~1e-5 of the
# largest output on 576-term sums); the larger tiles waste more on partial edges
_F2, _F4 = _scheme(2), _scheme(4)

_BLOCK = 1 << 18     # bytes of transformed tiles per block of images (measured: 256 KiB
#                      beats 1 and 4 MiB by 1.5-2x; the GEMMs and copies stay in L2)
_MIN_CHANNELS = 8    # per group, in and out: below it the im2col GEMMs are as fast
# tiles per image: on smaller planes the tile copies' short rows cost more than the GEMMs
# save (measured, 16 -> 32 channels, batch 32: 4x4 images 2x slower than im2col, 8x8
# (16 tiles) 1.7x faster, fwd + both gradients)
_MIN_TILES = 16


def winograd(dtype, weight_shape, hw, stride, padding, dilation, groups) -> bool:
    """Whether a conv2d of (N, C, *hw) images of dtype by a weight of weight_shape, and
    its gradients, take the Winograd kernels."""
    o, cg, kh, kw = weight_shape
    if not (dtype is _F32 and kh == 3 and kw == 3 and stride == (1, 1)
            and dilation == (1, 1) and max(padding) <= 2 and cg >= _MIN_CHANNELS
            and o // groups >= _MIN_CHANNELS):
        return False
    oh, ow = hw[0] + 2 * padding[0] - 2, hw[1] + 2 * padding[1] - 2
    return oh > 0 and ow > 0 and (oh + 1) // 2 * ((ow + 1) // 2) >= _MIN_TILES


def _pick(oh, ow) -> dict:
    """F(4x4) where its tiles (36 values each, partial ones at the edges counted whole)
    cost less than F(2x2)'s (16 each): 16x16 outputs 576 against 1024, 8x8 144 against 256
    (measured 10-17% faster, fwd + both gradients)."""
    return _F4 if 36 * -(-oh // 4) * -(-ow // 4) < 16 * -(-oh // 2) * -(-ow // 2) else _F2


def _filters(s, weight, groups, flip):
    """U: (alpha^2, G, C/G, O/G), or with flip (the input gradient's flipped, transposed
    filters) (alpha^2, G, O/G, C/G): G g G^T of each 3x3 filter, as one GEMM KG @ the
    filters laid out (3*3, G, in, out) (a copy of the weight, 9x smaller than U's)."""
    o, cg = weight.shape[:2]
    w = weight.reshape(groups, o // groups, cg, 3, 3)
    w = w[..., ::-1, ::-1].transpose(3, 4, 0, 1, 2) if flip else w.transpose(3, 4, 0, 2, 1)
    u = s["KG"] @ np.ascontiguousarray(w).reshape(9, -1)
    return u.reshape(s["alpha"] ** 2, groups, *w.shape[3:])


def _columns(m, t, tiles, pad, width):
    """(len(m) * tiles, width): the 1-D transform m (alpha x alpha or alpha x t) over the
    windows (stride t) of a zero-padded row of width values, the padding folded in: rows
    (b, j) = sum over q of m[b, q] * row[t*j + q - pad] (out-of-range taps dropped)."""
    k = m.shape[1]
    r = np.zeros((m.shape[0], tiles, width), _F32)
    for j in range(tiles):
        lo, hi = max(0, t * j - pad), min(width, t * j - pad + k)
        if lo < hi:
            r[:, j, lo:hi] = m[:, lo + pad - t * j:hi + pad - t * j]
    return r.reshape(-1, width)


def _tiler(s, c, th, tw, pad, step, hw):
    """tiles(x, b, m): images b..b+m of x (N, C, *hw) as their alpha x alpha tiles (stride
    t) transformed: V (alpha^2, th*tw*m*C) = B^T d B for each zero-padded tile d.  B^T
    over the tiles' columns is one small GEMM per row h of the block, (alpha*tw, W) @ the
    row's (W, m*C) (a transposed operand: BLAS reads NCHW and writes channels-last, the
    padding and the windows folded into the left matrix), into a zero-bordered block;
    its alpha-row windows (stride t) are gathered by one strided copy (runs of m*C) and
    B^T over the rows is one GEMM.  The NCHW -> channels-last copy, the column windows'
    copy and a GEMM over the whole tiles they replace cost 1.3x as much.  The buffers
    and the window view are made once a call (as_strided costs ~30 us)."""
    t, alpha = s["t"], s["alpha"]
    (ph, pw), hp = pad, t * th + 2
    hh, ww = min(hw[0], hp - ph), min(hw[1], t * tw + 2 - pw)
    rc = _columns(s["BT"], t, tw, pw, ww)                  # rows (b', j)
    # rows h, columns (b', j), then the block's images and channels: one GEMM per row h
    # for the whole block (its (m, C) rows of x are evenly spaced)
    yp = np.zeros((hp, alpha * tw, step, c), _F32)         # its rows outside the image stay 0
    s0, s1, s2, s3 = yp.strides
    win = np.lib.stride_tricks.as_strided(yp, (alpha, alpha, th, tw, step, c),
                                          (s0, tw * s1, t * s0, s1, s2, s3), writeable=False)
    bufs = {}

    def tiles(x, b, m):
        rows = x[b:b + m, :, :hh, :ww].transpose(2, 0, 1, 3).reshape(hh, m * c, ww)
        np.matmul(rc, rows.transpose(0, 2, 1),
                  out=yp[ph:ph + hh, :, :m].reshape(hh, alpha * tw, m * c))
        if m not in bufs:          # the last block may be smaller
            bufs[m] = (np.empty((alpha, alpha, th, tw, m, c), _F32), win[:, :, :, :, :m],
                       np.empty((alpha * alpha, th * tw * m * c), _F32))
        d, view, v = bufs[m]
        np.copyto(d, view)
        np.matmul(s["BT"], d.reshape(alpha, -1), out=v.reshape(alpha, -1))
        return v
    return tiles


def _blocks(n, per_image, block=None):
    step = max(1, min(n, (block or _BLOCK) // max(per_image, 1)))
    return [(b, min(step, n - b)) for b in range(0, n, step)], step


def _padded(x, b, m, pad, buf):
    """Images b..b+m of x channels-last into the zero-bordered buffer (m, H', W', C) (its
    borders stay zero; the im2col rows' copy then moves runs of kw*C values)."""
    (ph, pw), (hp, wp) = pad, buf.shape[1:3]
    hh, ww = min(x.shape[2], hp - ph), min(x.shape[3], wp - pw)
    np.copyto(buf[:m, ph:ph + hh, pw:pw + ww], x[b:b + m, :, :hh, :ww].transpose(0, 2, 3, 1))


def _wino_conv(s, x, u, pad, out_hw, bias=None):
    """x (N, C, H, W) by the transformed filters u (alpha^2, G, C/G, O/G), zero padding pad,
    cropped to out_hw (N, O, OH, OW), plus bias (O,) (added to each block's tiles while
    they are in the cache: no pass over the whole output)."""
    t, a2 = s["t"], s["alpha"] ** 2
    n, c = x.shape[:2]
    _, groups, cg, og = u.shape
    o = groups * og
    oh, ow = out_hw
    th, tw = -(-oh // t), -(-ow // t)
    out = np.empty((n, o, oh, ow), _F32)
    blocks, step = _blocks(n, a2 * th * tw * max(c, o) * 4)
    tiles = _tiler(s, c, th, tw, pad, step, x.shape[2:])
    whole = oh == t * th and ow == t * tw
    full = None if whole else np.empty((step, o, t * th, t * tw), _F32)
    dest = (out if whole else full).view(s["unit"]).reshape(-1, groups, og, th, t, tw)
    bias = None if bias is None else bias.reshape(groups, 1, og, 1)
    per_m = {}     # each block size's buffers and views over them, made once a call
    for b, m in blocks:
        vb = tiles(x, b, m)         # the same buffer for every block of m images
        if m not in per_m:
            p = th * tw * m
            mm = np.empty((a2, groups, p, og), _F32)
            y = np.empty((groups * p * og, t * t), _F32)
            # the output tiles as rows (G, th, tw, m, O/G) of t x t values (a, b): each row
            # of t (b = 0..t-1) is then one unit (8 or 16 bytes), so the copy into the
            # (N, O, OH, OW) layout moves rows of tw units (the tile order's (a, b)-major
            # GEMM output copied t floats a row: 2.3x slower)
            # the bias laid out as the tiles (NumPy adds a broadcast operand ~3x slower
            # per value than a contiguous one)
            per_m[m] = (vb.reshape(a2, p, groups, cg).transpose(0, 2, 1, 3), mm,
                        mm.reshape(a2, -1).T, y, y.reshape(groups, p, og, t * t),
                        y.view(s["unit"]).reshape(groups, th, tw, m, og, t).transpose(
                            3, 0, 4, 1, 5, 2),
                        None if bias is None else np.ascontiguousarray(
                            np.broadcast_to(bias, (groups, p, og, t * t)))
                        if len(blocks) > 2 else bias)
        v, mm, mt, y, yb, rows, tiled = per_m[m]
        np.matmul(v, u, out=mm)                          # (a2, G, P, O/G)
        np.matmul(mt, s["KAT"], out=y)                   # (G*th*tw*m*O/G, t*t)
        if bias is not None:
            np.add(yb, tiled, out=yb)
        np.copyto(dest[b:b + m] if whole else dest[:m], rows)
        if not whole:
            out[b:b + m] = full[:m, :, :oh, :ow]
    return out


def _wino_weight_grad(g, x, padding, groups):
    n, o, oh, ow = g.shape
    c = x.shape[1]
    cg, og = c // groups, o // groups
    s = _pick(oh, ow)
    t, alpha = s["t"], s["alpha"]
    a2 = alpha * alpha
    th, tw = -(-oh // t), -(-ow // t)
    # each block adds its products into du, a pass over du: blocks of 2 _BLOCKs where du
    # is that large (measured, 64 channels (du 576 KiB), 3 images a block against 1: the
    # weight gradient 12-19% faster; the grouped g4 (du 144 KiB) 4% slower)
    scale = 2 if a2 * o * cg * 4 >= 1 << 19 else 1
    blocks, step = _blocks(n, a2 * th * tw * max(c, o) * 4, scale * _BLOCK)
    tiles = _tiler(s, c, th, tw, padding, step, x.shape[2:])
    whole = oh == t * th and ow == t * tw
    gp = None if whole else np.zeros((step, o, t * th, t * tw), _F32)   # partial tiles' zeros
    du = np.empty((a2, groups, og, cg), _F32)
    per_m = {}     # each block size's buffers and views over them, made once a call
    for b, m in blocks:
        vb = tiles(x, b, m)         # the same buffer for every block of m images
        if m not in per_m:
            p = th * tw * m
            dm = np.empty((alpha, alpha, p * o), _F32)
            per_m[m] = (np.empty((t, t, th, tw, m, o), _F32), np.empty((alpha, t * p * o), _F32),
                        dm, dm.reshape(a2, p, groups, og).transpose(0, 2, 3, 1),  # a2,G,O/G,P
                        vb.reshape(a2, p, groups, cg).transpose(0, 2, 1, 3),
                        np.empty((a2, groups, og, cg), _F32))
        gb, half, dm, dmv, vv, prod = per_m[m]
        if whole:
            src = g[b:b + m]
        else:
            gp[:m, :, :oh, :ow] = g[b:b + m]
            src = gp[:m]
        np.copyto(gb, src.reshape(m, o, th, t, tw, t).transpose(3, 5, 2, 4, 0, 1))
        # d M = A (d out) A^T, as A over the tiles' rows then over their columns (2.4x
        # fewer products than kron(A, A) @ d out)
        np.matmul(s["A"], gb.reshape(t, -1), out=half)                     # (alpha, t*P*O)
        np.matmul(s["A"], half.reshape(alpha, t, -1), out=dm)               # (alpha, alpha, P*O)
        if b == 0:
            np.matmul(dmv, vv, out=du)
        else:
            np.matmul(dmv, vv, out=prod)
            du += prod
    dw = (s["KGT"] @ du.reshape(a2, o * cg)).reshape(3, 3, o, cg)
    return np.ascontiguousarray(dw.transpose(2, 3, 0, 1))


_FLAT = (_F32, np.dtype(np.float64))
# output pixels an image up to which one GEMM over the batch beats one per image (measured:
# 4x4 and 8x8 planes 13-25% faster fwd + gradients; 16x16 and larger 5-25% slower, the
# copies between layouts costing more than the per-image GEMMs' overhead)
_FLAT_PIXELS = 64


def _small(shape, kernel_size, stride, padding, dilation):
    oh, ow = (out_size(shape[2 + i], kernel_size[i], dilation[i], padding[i], stride[i])
              for i in (0, 1))
    return oh * ow <= _FLAT_PIXELS


def padded_windows(x, kernel_size, dilation, padding, stride):
    """The zero-padded input (x itself without padding) and the output's (OH, OW): what
    both im2col layouts take their strided window views of."""
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh, ow = out_size(h, kh, dh, ph, sh), out_size(w, kw, dw, pw, sw)
    if not (ph or pw):
        return x, oh, ow
    src = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    src[:, :, ph:ph + h, pw:pw + w] = x
    return src, oh, ow


def _flat_cols(x, kernel_size, dilation, padding, stride):
    """im2col with the batch folded into the columns: (C*kh*kw, N*OH*OW), one strided copy
    of the zero-padded input's windows; and (OH, OW)."""
    n, c = x.shape[:2]
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    src, oh, ow = padded_windows(x, kernel_size, dilation, padding, stride)
    s0, s1, s2, s3 = src.strides
    cols = np.empty((c, kh, kw, n, oh, ow), dtype=x.dtype)
    np.copyto(cols, np.lib.stride_tricks.as_strided(
        src, cols.shape, (s1, dh * s2, dw * s3, s0, sh * s2, sw * s3), writeable=False))
    return cols.reshape(c * kh * kw, n * oh * ow), (oh, ow)


def _rows_geometry(shape, kernel_size, dilation, padding, stride):
    """(OH, OW) and the padded plane (H', W') the channels-last windows are taken from."""
    h, w = shape[2:]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    return (out_size(h, kh, dh, ph, sh), out_size(w, kw, dw, pw, sw)), (h + 2 * ph, w + 2 * pw)


def _row_gather(x_shape, dtype, kernel_size, dilation, padding, stride, step):
    """rows(x, b, m): images b..b+m of x (N, C, H, W) as im2col rows (m*OH*OW, kh*kw*C),
    columns ordered (i, j, c): one copy into a zero-bordered channels-last block, one
    strided copy of its windows (a window's row of kw taps is then kw*C contiguous values
    where dilation is 1, whatever the stride: 3-4x faster than the (C*kh*kw, L) layout's
    copy of 1-value runs at stride 2).  The buffers and the window view are made once a
    call and reused by every block."""
    c = x_shape[1]
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    (oh, ow), (hp, wp) = _rows_geometry(x_shape, kernel_size, dilation, padding, stride)
    xp = np.zeros((step, hp, wp, c), dtype)
    s0, s1, s2, s3 = xp.strides
    win = np.lib.stride_tricks.as_strided(xp, (step, oh, ow, kh, kw, c),
                                          (s0, sh * s1, sw * s2, dh * s1, dw * s2, s3),
                                          writeable=False)
    buf = np.empty((step, oh, ow, kh, kw, c), dtype)

    def rows(x, b, m):
        _padded(x, b, m, padding, xp)
        np.copyto(buf[:m], win[:m])
        return buf[:m].reshape(m * oh * ow, kh * kw * c)
    return rows


# bytes of im2col rows per block of images (measured, CPU time against torch: 512 KiB
# 2-5% better than 256 KiB and 1 MiB on the stride-2 rows, 2 MiB 5-12% worse)
_ROWS_BLOCK = 1 << 19


def _row_blocks(shape, kernel_size, itemsize):
    per_image = shape[1] * kernel_size[0] * kernel_size[1] * shape[2] * shape[3] * itemsize
    step = max(1, min(shape[0], _ROWS_BLOCK // max(per_image, 1)))
    return [(b, min(step, shape[0] - b)) for b in range(0, shape[0], step)], step


def _rows_conv(x, weight, bias, stride, padding, dilation):
    """conv2d (groups 1) as (m*L, kh*kw*C) @ (kh*kw*C, O) GEMMs over blocks of images
    whose rows stay in the cache, each block's (m*L, O) result (plus bias) copied into
    the (N, O, OH, OW) output."""
    n = x.shape[0]
    o, c, kh, kw = weight.shape
    (oh, ow), _ = _rows_geometry(x.shape, (kh, kw), dilation, padding, stride)
    wk = np.ascontiguousarray(weight.transpose(2, 3, 1, 0)).reshape(kh * kw * c, o)
    blocks, step = _row_blocks((n, c, oh, ow), (kh, kw), x.itemsize)
    rows = _row_gather(x.shape, x.dtype, (kh, kw), dilation, padding, stride, step)
    out = np.empty((n, o, oh, ow), x.dtype)
    buf = np.empty(step * oh * ow * o, x.dtype)     # each block's products, made once a call
    # the bias as the products' rows (a broadcast operand's add costs ~3x per value)
    tiled = None if bias is None else np.ascontiguousarray(
        np.broadcast_to(bias, (step * oh * ow, o))) if len(blocks) > 2 else bias
    for b, m in blocks:
        y = np.matmul(rows(x, b, m), wk, out=buf[:m * oh * ow * o].reshape(-1, o))
        if bias is not None:
            np.add(y, tiled if tiled.ndim == 1 else tiled[:m * oh * ow], out=y)
        np.copyto(out[b:b + m], y.reshape(m, oh, ow, o).transpose(0, 3, 1, 2))
    return out


def _rows_weight_grad(g, x, kernel_size, stride, padding, dilation):
    """conv2d_weight_grad (groups 1): the sum over blocks of images of (O, m*L) @ the
    block's im2col rows (m*L, kh*kw*C), gathered again here (in the cache: cheaper than
    keeping the forward's whole-batch columns in memory)."""
    n, o, oh, ow = g.shape
    c = x.shape[1]
    kh, kw = kernel_size
    blocks, step = _row_blocks((n, c, oh, ow), kernel_size, x.itemsize)
    rows = _row_gather(x.shape, x.dtype, kernel_size, dilation, padding, stride, step)
    gw = np.empty((o, kh * kw * c), x.dtype)
    prod = np.empty_like(gw)
    gt = np.empty(o * step * oh * ow, x.dtype)      # each block's (O, m*L), made once a call
    for b, m in blocks:
        gb = gt[:o * m * oh * ow].reshape(o, m, oh * ow)
        np.copyto(gb, g[b:b + m].reshape(m, o, oh * ow).transpose(1, 0, 2))
        np.matmul(gb.reshape(o, -1), rows(x, b, m), out=gw if b == 0 else prod)
        if b:
            gw += prod
    return np.ascontiguousarray(gw.reshape(o, kh, kw, c).transpose(0, 3, 1, 2))


def _rows_input_grad(g, weight, input_size, stride, padding, dilation):
    """conv2d_input_grad (groups 1): per block of images, g's rows (pixels, O) times the
    filter's taps, each product added into a zero-bordered channels-last block at its
    (i, j) offset, the block copied out as (N, C, H, W).

    With a stride s > 1 and no dilation, the taps j = s*d .. s*d+s-1 of a kernel row land
    side by side, s*C values, at column s*(x+d) for pixel x: one GEMM per (i, d) of g's
    rows shifted by d pixels (g copied once into rows of OW + E values, E >= d of them
    zero, and read at an offset of -d) writes (OH, OW+E, s*C) rows whose column s*x' is the
    block's (a last group of fewer than s taps leaves the rest zero); the block holds its
    rows by phase (row R at [R % s, R // s]), so that the kernel row i's OH rows are
    consecutive and the add is one contiguous run per image (NumPy's add of a strided
    region costs ~3x a contiguous one per value; 3x3 stride 2, 6 adds an image)."""
    n, o, oh, ow = g.shape
    _, c, kh, kw = weight.shape
    h, w = input_size
    (dh, dw), (ph, pw), (sh, sw) = dilation, padding, stride
    blocks, step = _row_blocks((n, c, oh, ow), (kh, kw), g.itemsize)
    if dw != 1 or sw == 1:
        return _taps_input_grad(g, weight, input_size, stride, padding, dilation, blocks,
                                step)
    groups = -(-kw // sw)        # d: the taps s*d .. s*d+s-1 of each kernel row
    hp, wp = h + 2 * ph, w + 2 * pw
    extra = max(groups - 1, -(-wp // sw) - ow)     # zero pixels after each row of g
    wide = ow + extra
    hq = max(-(-hp // sh), dh * (kh - 1) // sh + oh)
    dxq = np.empty((step, sh, hq, sw * wide * c), g.dtype)      # padded row R at [R % sh, R // sh]
    gz = np.zeros(extra + step * o * oh * wide, g.dtype)         # zeros before it for d > 0
    gzv = gz[extra:].reshape(step, o, oh, wide)
    it = g.itemsize
    # g's rows (pixels (y, x'), O) shifted by d (transposed views; made once a call:
    # as_strided costs ~30 us)
    shifted = [np.lib.stride_tricks.as_strided(
        gz[extra - d:], (step, oh * wide, o), (o * oh * wide * it, it, oh * wide * it),
        writeable=False) for d in range(groups)]
    wt = weight.transpose(0, 2, 3, 1)                                  # (O, kh, kw, C)
    parts = [(np.ascontiguousarray(wt[:, i, sw * d:sw * d + sw]).reshape(o, -1),
              dh * i % sh, dh * i // sh, shifted[d]) for i in range(kh) for d in range(groups)]
    full = np.empty((step, oh * wide, sw * c), g.dtype)      # made once a call
    short = np.zeros_like(full) if kw % sw else None         # its last columns stay zero
    dx = np.empty((n, c, h, w), g.dtype)
    # the image's rows r0, r0 + sh, ... are the phase a's rows q0, q0 + 1, ...
    phases = [(r0, (ph + r0) % sh, (ph + r0) // sh, len(range(r0, h, sh)))
              for r0 in range(min(sh, h))]
    for b, m in blocks:
        np.copyto(gzv[:m, :, :, :ow], g[b:b + m])
        part = dxq[:m]
        part.fill(0)
        for wk, a, q0, rows in parts:
            buf = full if wk.shape[1] == sw * c else short
            np.matmul(rows[:m], wk, out=buf[:m, :, :wk.shape[1]])
            for k in range(m):
                region = part[k, a, q0:q0 + oh].reshape(-1)
                np.add(region, buf[k].reshape(-1), out=region)
        for r0, a, q0, count in phases:
            np.copyto(dx[b:b + m, :, r0::sh], part[:, a, q0:q0 + count].reshape(
                m, count, sw * wide, c)[:, :, pw:pw + w].transpose(0, 3, 1, 2))
    return dx


def _taps_input_grad(g, weight, input_size, stride, padding, dilation, blocks, step):
    """_rows_input_grad with dilation or stride 1: one GEMM to (m*L, kh*kw*C) taps, each
    tap's (m*L, C) part added at its offset (taps j..j+s-1 side by side in one add)."""
    n, o, oh, ow = g.shape
    _, c, kh, kw = weight.shape
    h, w = input_size
    (dh, dw), (ph, pw), (sh, sw) = dilation, padding, stride
    run = min(sw, kw) if dw == 1 else 1
    wk = np.ascontiguousarray(weight.transpose(0, 2, 3, 1)).reshape(o, kh * kw * c)
    dxp = np.empty((step, h + 2 * ph, w + 2 * pw, c), g.dtype)
    p0, p1, p2, p3 = dxp.strides
    # taps (i, j..j+r-1) of every pixel: (step, OH, OW, r*C) at rows i*dh + sh*y, columns
    # j*dw + sw*x; made once a call (as_strided costs ~30 us; a reshaped slice could be a
    # copy)
    regions = [(i, j, r, np.lib.stride_tricks.as_strided(
        dxp[:, i * dh:, j * dw:], (step, oh, ow, r * c), (p0, sh * p1, sw * p2, p3)))
        for i in range(kh) for j in range(0, kw, run) for r in (min(run, kw - j),)]
    dx = np.empty((n, c, h, w), g.dtype)
    buf = np.empty(step * oh * ow * kh * kw * c, g.dtype)   # each block's taps, made once a call
    for b, m in blocks:
        taps = buf[:m * oh * ow * kh * kw * c].reshape(m, oh * ow, kh * kw * c)
        np.matmul(g[b:b + m].reshape(m, o, oh * ow).transpose(0, 2, 1), wk, out=taps)
        taps = taps.reshape(m, oh, ow, kh, kw * c)
        part = dxp[:m]
        part.fill(0)
        for i, j, r, region in regions:
            region = region[:m]
            np.add(region, taps[..., i, j * c:(j + r) * c], out=region)
        np.copyto(dx[b:b + m], part[:, ph:ph + h, pw:pw + w].transpose(0, 3, 1, 2))
    return dx


# the channels-last rows (_rows_*) against unfold's (C*kh*kw, L) per-image GEMMs and the
# fold, measured at 16x16 and 32x32 outputs: the weight gradient faster from 8 channels
# (3x3: 4 are 20% slower) and with 3 on 7x7; the forward from 32 channels (3x3: 16 are
# 12% slower) or with 3 on 7x7; the input gradient from 32 channels (16: 30% slower; 3 on
# 7x7: 2.2x, its adds move runs of 3-6 values).  1x1 kernels: unfold is a plain copy, the
# rows only add transposes.
_ROWS_CHANNELS = {"forward": 32, "input": 32, "weight": 8}
_ROWS_TAPS = {"forward": 25, "weight": 25}        # or from this many taps (7x7)


def _by_rows(kernel, dtype, other, groups, c, kernel_size) -> bool:
    """Whether kernel ("forward", "input", "weight") of a conv2d of c input channels
    takes the channels-last rows."""
    taps = kernel_size[0] * kernel_size[1]
    if not (groups == 1 and dtype in _FLAT and other is dtype and taps > 1):
        return False
    return c >= _ROWS_CHANNELS[kernel] or taps >= _ROWS_TAPS.get(kernel, taps + 1)


def kernels(unfold, fold) -> dict:
    """conv2d, conv2d_input_grad and conv2d_weight_grad over the backend's unfold and fold
    kernels (what the decompositions run elsewhere)."""

    def conv2d(x, weight, bias=None, *, stride, padding, dilation, groups):
        n = x.shape[0]
        o, cg, kh, kw = weight.shape
        if n and weight.dtype is x.dtype and (bias is None or bias.dtype is x.dtype) and \
                winograd(x.dtype, weight.shape, x.shape[2:], stride, padding, dilation, groups):
            oh, ow = x.shape[2] + 2 * padding[0] - 2, x.shape[3] + 2 * padding[1] - 2
            s = _pick(oh, ow)
            return _wino_conv(s, x, _filters(s, weight, groups, False), padding, (oh, ow),
                              bias)
        small = _small(x.shape, (kh, kw), stride, padding, dilation)
        if n and _by_rows("forward", x.dtype, weight.dtype, groups, cg, (kh, kw)) and (
                stride[1] > 1 or not small):
            # before the small planes' flat GEMM where a stride makes its columns' copy
            # move single values (measured 20-35% slower than the rows)
            return _rows_conv(x, weight, bias, stride, padding, dilation)
        if n and groups == 1 and x.dtype in _FLAT and weight.dtype is x.dtype and small:
            # one (O, C*kh*kw) @ (C*kh*kw, N*L) GEMM, not N of them: the batch folded
            # into the columns (then one copy back to (N, O, OH, OW))
            cols, (oh, ow) = _flat_cols(x, (kh, kw), dilation, padding, stride)
            out = weight.reshape(o, cg * kh * kw) @ cols
            if bias is not None:
                out += bias.reshape(o, 1)
            return np.ascontiguousarray(out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3))
        cols = unfold(x, kernel_size=(kh, kw), dilation=dilation, padding=padding,
                      stride=stride)                                   # (N, C*kh*kw, L)
        length = cols.shape[-1]
        if groups == 1:
            out = np.matmul(weight.reshape(o, cg * kh * kw), cols)
        else:
            out = np.matmul(weight.reshape(groups, o // groups, cg * kh * kw),
                            cols.reshape(n, groups, cg * kh * kw, length))
        out = out.reshape(n, o, *(out_size(x.shape[2 + i], (kh, kw)[i], dilation[i],
                                           padding[i], stride[i]) for i in (0, 1)))
        if bias is not None:      # the decomposition's out + bias, in place
            np.add(out, bias.reshape(o, 1, 1), out=out)
        return out

    def conv2d_input_grad(g, weight, *, input_size, stride, padding, dilation, groups):
        n, o, oh, ow = g.shape
        _, cg, kh, kw = weight.shape
        if n and weight.dtype is g.dtype and winograd(
                g.dtype, weight.shape, input_size, stride, padding, dilation, groups):
            s = _pick(oh, ow)      # as the forward's (the same tiles' rounding)
            return _wino_conv(s, g, _filters(s, weight, groups, True),
                              (2 - padding[0], 2 - padding[1]), input_size)
        if n and _by_rows("input", g.dtype, weight.dtype, groups, cg, (kh, kw)):
            return _rows_input_grad(g, weight, input_size, stride, padding, dilation)
        if groups == 1:
            cols = np.matmul(weight.reshape(o, cg * kh * kw).T, g.reshape(n, o, oh * ow))
        else:
            cols = np.matmul(weight.reshape(groups, o // groups, cg * kh * kw).transpose(
                0, 2, 1), g.reshape(n, groups, o // groups, oh * ow))
        return fold(cols.reshape(n, groups * cg * kh * kw, oh * ow),
                    output_size=tuple(input_size), kernel_size=(kh, kw), dilation=dilation,
                    padding=padding, stride=stride)

    def conv2d_weight_grad(g, x, *, kernel_size, stride, padding, dilation, groups):
        n, o, oh, ow = g.shape
        c = x.shape[1]
        kh, kw = kernel_size
        if n and x.dtype is g.dtype and winograd(g.dtype, (o, c // groups, kh, kw),
                                                 x.shape[2:], stride, padding, dilation,
                                                 groups):
            return _wino_weight_grad(g, x, padding, groups)
        small = oh * ow <= _FLAT_PIXELS
        if n and _by_rows("weight", x.dtype, g.dtype, groups, c, kernel_size) and (
                stride[1] > 1 or not small):
            return _rows_weight_grad(g, x, kernel_size, stride, padding, dilation)
        if n and groups == 1 and x.dtype in _FLAT and g.dtype is x.dtype and small:
            # one GEMM over the whole batch: (O, N*L) @ (N*L, C*kh*kw), no per-image
            # products to sum
            cols = _flat_cols(x, kernel_size, dilation, padding, stride)[0]
            g2 = np.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(o, n * oh * ow)
            return (g2 @ cols.T).reshape(o, c, kh, kw)
        cols = unfold(x, kernel_size=kernel_size, dilation=dilation, padding=padding,
                      stride=stride)
        if groups == 1:
            gw = np.matmul(g.reshape(n, o, oh * ow), cols.transpose(0, 2, 1))
        else:
            gw = np.matmul(g.reshape(n, groups, o // groups, oh * ow), cols.reshape(
                n, groups, c // groups * kh * kw, oh * ow).transpose(0, 1, 3, 2))
        if gw.dtype.itemsize < 4 and gw.dtype.kind == "f":   # as the sum kernel: float32
            gw = np.add.reduce(gw, axis=0, dtype=np.float32).astype(gw.dtype)
        else:
            gw = np.add.reduce(gw, axis=0)
        return gw.reshape(o, c // groups, kh, kw)

    return {"conv2d": conv2d, "conv2d_input_grad": conv2d_input_grad,
            "conv2d_weight_grad": conv2d_weight_grad}
