"""Tensor.to takes torch's arguments: (device, dtype, non_blocking, copy, memory_format),
positional or by keyword, with torch's results (identity, strides, copies)."""
from __future__ import annotations

import ember
import pytest
from ember.errors import EmberError

torch = pytest.importorskip("torch")


def _facts(L) -> dict:
    x = L.arange(24.0).reshape(1, 2, 3, 4)
    y = x.to(memory_format=L.channels_last)
    w = x.to(L.float64, memory_format=L.channels_last)
    c = x.to("cpu", L.float32, False, True)
    d = x.to(device="cpu", dtype=L.float64, non_blocking=True, copy=False,
             memory_format=L.contiguous_format)
    return {
        "channels_last": (tuple(y.stride()), y.is_contiguous(memory_format=L.channels_last),
                          y is x, y.tolist() == x.tolist()),
        "already_in_format_is_self": y.to(memory_format=L.channels_last) is y,
        "dtype_and_format": (tuple(w.stride()), str(w.dtype).split(".")[-1]),
        "positional_copy": (c is x, tuple(c.stride()), c.tolist() == x.tolist()),
        "keywords": (tuple(d.stride()), str(d.dtype).split(".")[-1]),
        "nothing_changes_is_self": (x.to("cpu") is x, x.to(L.float32) is x,
                                    x.to(x) is x, x.to(memory_format=L.contiguous_format) is x),
        "copy_keyword": (x.to(x, copy=True) is x, x.to(x, False, True) is x),
        "copy_in_format": (y.to(memory_format=L.channels_last, copy=True) is y,
                           tuple(y.to(memory_format=L.channels_last, copy=True).stride())),
        "preserve_keeps_strides": tuple(y.to(L.float64).stride()),
        "non_blocking_positional": str(x.to(L.float64, True).dtype).split(".")[-1],
    }


def test_to_arguments_as_torch():
    assert _facts(ember) == _facts(torch)


def test_to_refuses_what_torch_refuses():
    with pytest.raises(EmberError):
        ember.ones(2, 3).to(memory_format=ember.channels_last)      # channels_last is 4-D
    with pytest.raises(TypeError, match="memory_format must be"):
        ember.ones(2).to(memory_format="channels_last")
    with pytest.raises(TypeError, match="at most two positional booleans"):
        ember.ones(2).to("cpu", True, True, True)
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.ones(2).to(object())
