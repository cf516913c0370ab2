"""The CPU backend's recycled result arrays (backends/cpu/spares.py): an array is handed
out again only once nothing references it, within a cap (tests/nn/test_rnn.py: an LSTM's
training steps that keep results alive)."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from ember.backends.cpu import spares


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(spares, "_spares", {})
    monkeypatch.setattr(spares, "_held", [0])
    return spares


def address(a) -> int:
    return a.__array_interface__["data"][0]


def test_an_array_comes_back_only_when_nothing_holds_it(fresh):
    shape = (fresh.MIN_BYTES // 4,)
    a = fresh.result(shape, np.float32)
    first = address(a)
    view = a[1:]
    del a
    b = fresh.result(shape, np.float32)               # the view holds the first one
    assert address(b) != first
    as_tensor = ember.from_numpy(b)
    del b
    del view
    c = fresh.result(shape, np.float32)               # the first one again
    assert address(c) == first
    d = fresh.result(shape, np.float32)               # the second one: the tensor holds it
    assert address(d) not in (first, address(as_tensor.numpy()))
    assert fresh.result(shape, np.float64).dtype == np.float64      # its own key
    small = fresh.result((4,), np.float32)             # under MIN_BYTES: never kept
    assert all(a is not small for kept in fresh._spares.values() for a in kept)


def test_the_cap_drops_free_arrays_of_the_shapes_used_longest_ago(fresh, monkeypatch):
    size = fresh.MIN_BYTES
    monkeypatch.setattr(fresh, "CAP_BYTES", 2 * size)
    a = fresh.result((size,), np.uint8)
    fresh.result((size + 1,), np.uint8)                # no room: a is in use; not kept
    assert fresh._held[0] == size and len(fresh._spares) == 1
    del a
    fresh.result((size + 2,), np.uint8)                # room made: a is free now
    assert fresh._held[0] == size + 2
    assert list(fresh._spares) == [((size + 2,), np.dtype(np.uint8))]
