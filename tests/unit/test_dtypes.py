"""Dtype promotion equals PyTorch's: the full tables are held here (made with torch 2.13)."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import dtypes as D
from ember.errors import EmberError

NAMES = ('bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64')

# PROMOTE[a][j] = torch.promote_types(a, NAMES[j])
PROMOTE = {
    'bool': ('bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'uint8': ('uint8', 'uint8', 'int16', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'int8': ('int8', 'int16', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'int16': ('int16', 'int16', 'int16', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'int32': ('int32', 'int32', 'int32', 'int32', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'int64': ('int64', 'int64', 'int64', 'int64', 'int64', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'float16': ('float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float32', 'float32', 'float64'),
    'bfloat16': ('bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'float32', 'bfloat16', 'float32', 'float64'),
    'float32': ('float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float64'),
    'float64': ('float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64'),
}

# SCALAR[a] = torch.result_type(tensor of a (1-D), scalar) for True, 3, 2.5
SCALAR = {
    'bool': ('bool', 'int64', 'float32'),
    'uint8': ('uint8', 'uint8', 'float32'),
    'int8': ('int8', 'int8', 'float32'),
    'int16': ('int16', 'int16', 'float32'),
    'int32': ('int32', 'int32', 'float32'),
    'int64': ('int64', 'int64', 'float32'),
    'float16': ('float16', 'float16', 'float16'),
    'bfloat16': ('bfloat16', 'bfloat16', 'bfloat16'),
    'float32': ('float32', 'float32', 'float32'),
    'float64': ('float64', 'float64', 'float64'),
}

# ZERO_DIM[a][j] = torch.result_type(1-D tensor of a, 0-d tensor of NAMES[j])
ZERO_DIM = {
    'bool': ('bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'uint8': ('uint8', 'uint8', 'uint8', 'uint8', 'uint8', 'uint8', 'float16', 'bfloat16', 'float32', 'float64'),
    'int8': ('int8', 'int8', 'int8', 'int8', 'int8', 'int8', 'float16', 'bfloat16', 'float32', 'float64'),
    'int16': ('int16', 'int16', 'int16', 'int16', 'int16', 'int16', 'float16', 'bfloat16', 'float32', 'float64'),
    'int32': ('int32', 'int32', 'int32', 'int32', 'int32', 'int32', 'float16', 'bfloat16', 'float32', 'float64'),
    'int64': ('int64', 'int64', 'int64', 'int64', 'int64', 'int64', 'float16', 'bfloat16', 'float32', 'float64'),
    'float16': ('float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'float16'),
    'bfloat16': ('bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16'),
    'float32': ('float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32'),
    'float64': ('float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64', 'float64'),
}


def _t(name, shape=(2,)):
    return ember.zeros(shape, dtype=name)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_table(a):
    for b, want in zip(NAMES, PROMOTE[a]):
        assert D.promote_types(D.get_dtype(a), D.get_dtype(b)).name == want, (a, b)
        # and the ops agree: the result of an op has the promoted dtype
        assert ember.result_type(_t(a), _t(b)).name == want


@pytest.mark.parametrize("a", NAMES)
def test_tensor_scalar_table(a):
    for value, want in zip((True, 3, 2.5), SCALAR[a]):
        assert ember.result_type(_t(a), value).name == want, (a, value)


@pytest.mark.parametrize("a", NAMES)
def test_dimensioned_vs_zero_dim_table(a):
    for b, want in zip(NAMES, ZERO_DIM[a]):
        assert ember.result_type(_t(a), _t(b, ())).name == want, (a, b)


@pytest.mark.parametrize("a", ["bool", "uint8", "int32", "int64", "float16", "float32"])
def test_ops_follow_the_table(a):
    x = ember.ones(3, dtype=a)
    for b in NAMES:
        y = ember.ones(3, dtype=b)
        if "bool" in (a, b) and a == b:
            continue
        assert (x + y).dtype.name == PROMOTE[a][NAMES.index(b)], (a, b)
    assert (x * 2.5).dtype.name == SCALAR[a][2]


def test_tables_match_live_torch():
    torch = pytest.importorskip("torch")
    for a in NAMES:
        for j, b in enumerate(NAMES):
            got = torch.promote_types(getattr(torch, a), getattr(torch, b))
            assert str(got) == f"torch.{PROMOTE[a][j]}"


def test_python_numbers_and_defaults():
    assert ember.tensor([1, 2]).dtype is ember.int64
    assert ember.tensor([1.0, 2]).dtype is ember.float32
    assert ember.tensor([True]).dtype is ember.bool
    assert ember.tensor(np.zeros(2, np.float64)).dtype is ember.float64
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert (ember.tensor([1, 2]) * 1.5).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_bad_dtype_names_are_clear():
    with pytest.raises(EmberError, match="unknown dtype name 'flaot32'"):
        ember.zeros(2, dtype="flaot32")
    with pytest.raises(TypeError, match="floating"):
        ember.set_default_dtype(ember.int32)


def test_names_and_aliases():
    assert ember.float is ember.float32 and ember.double is ember.float64
    assert ember.long is ember.int64 and ember.half is ember.float16
    assert repr(ember.bfloat16) == "ember.bfloat16"
    assert D.get_dtype("torch.float16") is ember.float16
    assert ember.zeros(2, dtype=ember.bfloat16).numpy().dtype.name == "bfloat16"
