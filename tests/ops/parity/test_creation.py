"""Creation functions against PyTorch on cpu and opencl:0 (logspace, tril/triu_indices)."""
from __future__ import annotations

import pytest
from parity_helpers import Rows, check_parity

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("logspace_concat", lambda T, a: (T.logspace(0, 2, 5), T.concat([a, a], 1),
                                      *T.std_mean(a, 1)), ("f", (2, 3)))
case("tri_indices", lambda T: (T.tril_indices(3, 4), T.tril_indices(4, 3, 1),
                               T.triu_indices(3, 3, -1), T.triu_indices(2, 5, 2)), grad=False)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")
