"""The CPU backend's own im2col/col2im kernels (backends/cpu: one strided-window copy; a
stride-1 fold as contiguous adds over widened rows, a few images at a time) give the same
arrays, bit for bit and dtype for dtype, as the array-API table's kernels they replace, over
kernel sizes, dilations, paddings and strides; and unfold's result never aliases its input."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from ember.backends import array_api, cpu

GENERAL = array_api.kernels(np, native=True)
FOLD = cpu._fold(GENERAL["fold"])

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
