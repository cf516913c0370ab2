"""Conformance rows of interpolate and upsample (nearest, nearest-exact, linear, bilinear), and
of the spatial transformers affine_grid and grid_sample."""
from __future__ import annotations

import numpy as np

from ._table import F, Input, Rows

ROWS = Rows("upsampling")
case = ROWS.case


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
# torch's deprecated spellings: upsample_bilinear is bilinear with align_corners=True
case("upsample_bilinear", lambda E, x: (F(E).upsample_bilinear(x, size=(5, 7)),
                                        F(E).upsample_nearest(x, scale_factor=2)),
     lambda np, x: (_resize(x, (5, 7), "bilinear", True), _resize(x, (8, 8), "nearest")),
     Input((2, 3, 4, 4)), ops=("upsample_bilinear", "upsample_nearest"), atol=1e-5)


# --- spatial transformers: affine_grid and grid_sample ----------------------------------------
def _affine_grid(theta, size, align):
    """Each output cell's normalized position [x, y(, z), 1] times theta^T."""
    axes = []
    for n in size[2:][::-1]:                                   # x first
        line = np.linspace(-1.0, 1.0, n)
        axes.append(line if align else line * (n - 1) / n)
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]      # in (D,) H, W order
    base = np.stack([*grids, np.ones_like(grids[0])], -1)
    return np.einsum("...k,njk->n...j", base, theta)


def _grid_sample(x, g, mode="bilinear", align=False):
    """x (N, C, *sizes) at grid g (N, *out, dims) (x first), zeros outside: the nearest
    cell (ties to even) or the (bi/tri)linear blend of the neighbouring cells."""
    sizes, dims = x.shape[2:], x.ndim - 2
    coords = []
    for k, n in enumerate(sizes):
        c = g[..., dims - 1 - k]
        coords.append((c + 1) / 2 * (n - 1) if align else ((c + 1) * n - 1) / 2)

    def at(points):
        inside = np.all([(p >= 0) & (p <= n - 1) for p, n in zip(points, sizes)], 0)
        idx = tuple(np.clip(p, 0, n - 1).astype(np.int64) for p, n in zip(points, sizes))
        batch = np.arange(x.shape[0]).reshape((-1,) + (1,) * dims)
        vals = np.moveaxis(x[(batch, slice(None)) + idx], -1, 1)   # (N, C, *out)
        return np.where(inside[:, None], vals, 0.0)

    if mode == "nearest":
        return at([np.rint(c) for c in coords])
    if mode == "bicubic":                     # torch's cubic convolution, A = -0.75
        def cubic(t):
            a, s = -0.75, 1 - t
            near = [((a + 2) * v - (a + 3)) * v * v + 1 for v in (t, s)]
            far = [((a * v - 5 * a) * v + 8 * a) * v - 4 * a for v in (t + 1, s + 1)]
            return [far[0], near[0], near[1], far[1]]
        lows = [np.floor(c) for c in coords]
        wy, wx = (cubic(c - lo) for c, lo in zip(coords, lows))
        return sum(wy[i][:, None] * wx[j][:, None] * at([lows[0] + i - 1, lows[1] + j - 1])
                   for i in range(4) for j in range(4))
    lows = [np.floor(c) for c in coords]
    out = 0.0
    for corner in np.ndindex(*(2,) * dims):
        w = np.prod([f if o else 1 - f for o, f in zip(corner, [c - lo for c, lo in
                                                                 zip(coords, lows)])], 0)
        out = out + w[:, None] * at([lo + o for lo, o in zip(lows, corner)])
    return out


case("affine_grid", lambda E, t, t3: (F(E).affine_grid(t, (2, 3, 4, 5), align_corners=False),
                                      F(E).affine_grid(t, (2, 3, 4, 5), align_corners=True),
                                      F(E).affine_grid(t3, (2, 1, 2, 3, 4))),
     lambda np, t, t3: (_affine_grid(t, (2, 3, 4, 5), False),
                        _affine_grid(t, (2, 3, 4, 5), True),
                        _affine_grid(t3, (2, 1, 2, 3, 4), False)),
     Input((2, 2, 3)), Input((2, 3, 4)))
# grid positions to +-1.17: some fall outside the input (the zeros padding)
case("grid_sample", lambda E, x, g: (
    F(E).grid_sample(x, g * 1.3, align_corners=False),
    F(E).grid_sample(x, g * 1.3, align_corners=True),
    F(E).grid_sample(x, g * 1.3, mode="nearest", align_corners=False)),
     lambda np, x, g: (_grid_sample(x, g * 1.3), _grid_sample(x, g * 1.3, align=True),
                       _grid_sample(x, g * 1.3, "nearest")),
     Input((2, 3, 4, 5)), Input((2, 3, 4, 2), "u"), atol=1e-5)
case("grid_sample:bicubic", lambda E, x, g: (
    F(E).grid_sample(x, g * 1.3, mode="bicubic", align_corners=False),
    F(E).grid_sample(x, g * 1.3, mode="bicubic", align_corners=True)),
     lambda np, x, g: (_grid_sample(x, g * 1.3, "bicubic"),
                       _grid_sample(x, g * 1.3, "bicubic", align=True)),
     Input((2, 3, 4, 5)), Input((2, 3, 4, 2), "u"), ops=("grid_sample",), atol=1e-5)
case("grid_sample:3d", lambda E, x, g: F(E).grid_sample(x, g * 1.3, align_corners=True),
     lambda np, x, g: _grid_sample(x, g * 1.3, align=True), Input((1, 2, 3, 4, 3)),
     Input((1, 2, 2, 3, 3), "u"), ops=("grid_sample",))
