"""torch's other spellings of Tensor methods (greater, divide_, fliplr, split_with_sizes,
...) and can_cast, each against torch on the same values."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = np.array([[1.5, -2.0, 0.0, 4.0], [3.0, 0.5, -1.0, 2.0]], dtype=np.float32)
B = np.array([[1.0, -2.0, 1.0, 5.0], [2.0, 0.5, -3.0, 2.0]], dtype=np.float32)
CASES = {
    "greater": lambda t, o: t.greater(o), "greater_equal": lambda t, o: t.greater_equal(o),
    "less": lambda t, o: t.less(o), "less_equal": lambda t, o: t.less_equal(o),
    "not_equal": lambda t, o: t.not_equal(o),
    "greater_": lambda t, o: t.clone().greater_(o), "less_": lambda t, o: t.clone().less_(o),
    "greater_equal_": lambda t, o: t.clone().greater_equal_(o),
    "less_equal_": lambda t, o: t.clone().less_equal_(o),
    "not_equal_": lambda t, o: t.clone().not_equal_(o),
    "divide_": lambda t, o: t.clone().divide_(o + 10),
    "true_divide_": lambda t, o: t.clone().true_divide_(o + 10),
    "multiply_": lambda t, o: t.clone().multiply_(o), "subtract_": lambda t, o: t.clone()
    .subtract_(o, alpha=2), "absolute_": lambda t, o: t.clone().absolute_(),
    "logical_xor_": lambda t, o: t.clone().logical_xor_(o),
    "fliplr": lambda t, o: t.fliplr(), "flipud": lambda t, o: t.flipud(),
    "hsplit": lambda t, o: t.hsplit(2), "vsplit": lambda t, o: t.vsplit([1]),
    "dsplit": lambda t, o: t.reshape(2, 2, 2).dsplit(2),
    "narrow_copy": lambda t, o: t.narrow_copy(1, 1, 2),
    "select_scatter": lambda t, o: t.select_scatter(o[0], 0, 1),
    "slice_scatter": lambda t, o: t.slice_scatter(o[:, :2], 1, 0, 2),
    "diagonal_scatter": lambda t, o: t[:, :2].diagonal_scatter(o[0, :2]),
    "diagflat": lambda t, o: t[0].diagflat(1), "moveaxis": lambda t, o: t.moveaxis(0, 1),
    "split_with_sizes": lambda t, o: t.split_with_sizes([1, 3], 1),
    "unsafe_chunk": lambda t, o: t.unsafe_chunk(2, 1),
    "unsafe_split": lambda t, o: t.unsafe_split(3, 1),
    "is_signed": lambda t, o: t.is_signed(), "is_same_size": lambda t, o: t.is_same_size(o),
    "is_nonzero": lambda t, o: t[0, 0].is_nonzero(),
}


def _values(x):
    if isinstance(x, (tuple, list)):
        return [_values(v) for v in x]
    return x.detach().numpy().tolist() if hasattr(x, "detach") else x


@pytest.mark.parametrize("name", sorted(CASES))
def test_method_spelling_as_torch(name):
    fn = CASES[name]
    want = _values(fn(torch.tensor(A), torch.tensor(B)))
    got = _values(fn(ember.tensor(A), ember.tensor(B)))
    assert got == want


def test_can_cast_as_torch():
    names = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32",
             "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            assert ember.can_cast(getattr(ember, a), getattr(ember, b)) == \
                torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_python_element_maps_as_torch(dtype):
    got = []
    for lib in (torch, ember):
        a = lib.arange(6).reshape(2, 3).to(getattr(lib, dtype))
        got.append([a.clone().apply_(lambda v: v * 3 - 1).tolist(),
                    a.clone().map_(lib.tensor([1, 2, 3]).to(a.dtype), lambda x, y: x * y).tolist(),
                    a.clone().map2_(a, lib.ones(1, 3, dtype=a.dtype), lambda x, y, z: x + y + z)
                    .tolist()])
    assert got[1] == got[0]

