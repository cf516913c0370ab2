"""Movement functions against PyTorch on cpu and opencl:0 (roll, narrow, select, repeat,
broadcast, flatten, unfold, clone, tensor_split, diff): forward values and gradients."""
from __future__ import annotations

import ember
import pytest
from parity_helpers import Rows, check_parity

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("roll", lambda T, a: (T.roll(a, 1), T.roll(a, -2, 1), a.roll((1, 2), (0, 2))),
     ("f", (3, 4, 5)))
case("narrow_select_unbind", lambda T, a: (a.narrow(1, 1, 2), T.narrow(a, -1, 0, 3),
                                           a.select(0, -1), *a.unbind(1)), ("f", (3, 4, 5)))
case("repeat", lambda T, a: (a.repeat(2, 3), a.repeat(2, 1, 1), T.tile(a, (2,))),
     ("f", (3, 4)))
case("repeat_interleave", lambda T, a, r: (
    T.repeat_interleave(a, 2), a.repeat_interleave(3, dim=1),
    T.repeat_interleave(a, r, dim=0), T.repeat_interleave(r)), ("f", (3, 2)), ("i", (3,), 3))
case("broadcast", lambda T, a: (T.broadcast_to(a, (2, 3, 4)), a.broadcast_to((3, 4)),
                                *T.broadcast_tensors(a, a[:1])), ("f", (3, 1)))
case("unflatten_flatten", lambda T, a: (a.unflatten(1, (2, -1)), T.unflatten(a, 0, (1, 3)),
                                        T.flatten(a, 1)), ("f", (3, 6)))
case("unfold_windows", lambda T, a: (a.unfold(1, 3, 2), a.unfold(0, 2, 1)), ("f", (4, 7)))
case("clone", lambda T, a: (T.clone(a) * 2,), ("f", (2, 3)), grad_tol=1e-5)
case("tensor_split:sections", lambda T, a: T.tensor_split(a, 3, dim=1), ("f", (2, 7)),
     grad_tol=1e-5)
case("tensor_split:indices", lambda T, a: (*T.tensor_split(a, [1, 5, 9]),
                                           *a.tensor_split([4, 2])), ("f", (7, 2)),
     grad_tol=1e-5)
case("tensor_split:tensor", lambda T, a: T.tensor_split(a, T.tensor([2, -1]), 0), ("f", (5,)),
     grad_tol=1e-5)
case("diff", lambda T, a, p, q: (T.diff(a), T.diff(a, n=2, dim=0, prepend=p, append=q),
                                 a.diff(dim=0)), ("f", (3, 4)), ("f", (1, 4)), ("f", (2, 4)),
     grad_tol=1e-5)
case("diff:bool", lambda T, b: (T.diff(b, dim=1),), ("b", (3, 5)), grad=False)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


def test_function_errors():
    with pytest.raises(ember.EmberError, match="number of sections must be > 0"):
        ember.tensor_split(ember.zeros(3), 0)
    with pytest.raises(ember.EmberError, match="expected integer or bool tensors"):
        ember.bitwise_and(ember.zeros(3), ember.zeros(3))
    with pytest.raises(ember.EmberError, match="bool tensors only"):
        ember.zeros(3) & ember.zeros(3)
    with pytest.raises(ember.EmberError, match="selects 3 elements but source has only 2"):
        ember.zeros(3).masked_scatter(ember.ones(3, dtype=ember.bool), ember.zeros(2))
    with pytest.raises(ember.EmberError, match="0-d"):
        ember.diff(ember.tensor(1.0))


def test_repeat_returns_new_memory():
    """x.repeat(...) then an in-place op (fast_neural_style's normalize_batch): a copy, as
    torch's, never a stride-0 view that in-place ops refuse."""
    x = ember.ones(1, 3, 2, 2)
    y = x.repeat(2, 1, 1, 1)
    y.div_(2.0)
    assert y.numpy().tolist() == (ember.ones(2, 3, 2, 2) / 2).numpy().tolist()
    assert x.numpy().min() == 1.0
