"""Sorting and scans against PyTorch on cpu and opencl:0 (sort, topk, median, kthvalue,
unique, cumsum, cumprod, logcumsumexp, cummax, cummin): forward values and gradients."""
from __future__ import annotations

import math
import zlib

import ember
import numpy as np
import pytest
from parity_helpers import Rows, check_parity

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("sort", lambda T, a: (*T.sort(a), *a.sort(0, descending=True), T.argsort(a, 1)),
     ("t", (4, 6)))
case("sort:nan", lambda T, a: (*T.sort(a), *T.sort(a, descending=True)),
     ("v", (2, 4), (1.0, math.nan, -1.0, math.nan, math.inf, 0.5, math.nan, -math.inf)))
case("topk", lambda T, a: (*T.topk(a, 3), *a.topk(2, 0, largest=False)), ("f", (5, 6)))
case("median_kthvalue", lambda T, a: (T.median(a), *a.median(1), *T.kthvalue(a, 2, 0)),
     ("f", (5, 4)))
case("cumsum_cumprod", lambda T, a: (T.cumsum(a, 1), a.cumsum(0), T.cumprod(a, 1),
                                     a.cumprod(-1)), ("f", (3, 5)))
case("cumprod:zeros", lambda T, a: T.cumprod(a, 1),
     ("v", (3, 4), (1.5, 0.0, 2.0, 3.0, 0.0, 0.0, 2.0, -1.0, 2.0, -0.5, 3.0, 0.0)))
case("cumsum:long_lines", lambda T, a: (T.cumsum(a, 1), T.cumsum(a.mT, 1)),
     ("f", (3, 300)), atol=1e-4)
case("logcumsumexp", lambda T, a: T.logcumsumexp(a, 1), ("f", (3, 5)))
case("unique", lambda T, a: (*T.unique(a, return_inverse=True, return_counts=True),
                             a.unique()), ("i", (3, 5), 4), grad=False)
case("cummax_cummin", lambda T, a: (*T.cummax(a, 1), *T.cummin(a, 0), *a.cummax(dim=-1)),
     ("t", (4, 9)), grad_tol=1e-5)
case("cummax:nan", lambda T, a: (*T.cummax(a, 0), *T.cummin(a, 0)),
     ("v", (7,), [1.0, 3.0, 3.0, float("nan"), 2.0, float("nan"), 0.0]), grad=False)
case("cummax:int", lambda T, i: (*T.cummax(i, 0), *T.cummin(i, 1)),
     ("i", (5, 3), -4, 4, np.int64), grad=False)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


def test_sort_is_stable_on_long_lines(device):
    """Merge passes past one work-group's worth of elements, many ties."""
    rng = np.random.default_rng(zlib.crc32(b"stable"))
    a = rng.integers(0, 7, (3, 1500)).astype(np.float32)
    want = torch.sort(torch.tensor(a), dim=1, descending=True, stable=True)
    got = ember.sort(ember.tensor(a, device=device), 1, descending=True)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


def test_return_types_are_named():
    x = ember.tensor([[1.0, 3.0, 2.0]])
    values, indices = ember.cummax(x, 1)
    assert ember.cummax(x, 1).indices.tolist() == indices.tolist() == [[0, 1, 1]]
    assert ember.cummin(x, 1).values.tolist() == [[1.0, 1.0, 1.0]]
    assert (ember.aminmax(x).min.item(), ember.aminmax(x).max.item()) == (1.0, 3.0)
    assert "cummax(values=" in repr(ember.cummax(x, 1))
