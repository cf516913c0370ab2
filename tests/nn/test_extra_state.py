"""get_extra_state / set_extra_state in state_dict and load_state_dict, against torch:
keys and their order, what set_extra_state receives, strict loading, a saved round trip."""
from __future__ import annotations

import io

import ember
import pytest

torch = pytest.importorskip("torch")


def _model(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.register_buffer("seen", lib.zeros(1))
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls, "tag": "v1"}

        def set_extra_state(self, state):
            self.calls = state["calls"] * 10

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Counter()
            self.b = lib.nn.Linear(2, 1)
    return Net()


def test_extra_state_keys_order_and_round_trip_as_torch():
    keys = []
    loaded = []
    for lib in (torch, ember):
        net = _model(lib)
        net.a.calls = 3
        sd = net.state_dict()
        keys.append(list(sd.keys()))
        assert sd["a._extra_state"] == {"calls": 3, "tag": "v1"}
        buf = io.BytesIO()
        lib.save(sd, buf)
        buf.seek(0)
        back = lib.load(buf, weights_only=False) if lib is torch else lib.load(buf)
        fresh = _model(lib)
        result = fresh.load_state_dict(back)
        loaded.append((fresh.a.calls, list(result.missing_keys), list(result.unexpected_keys)))
    assert keys[1] == keys[0]
    assert loaded[1] == loaded[0]


def test_missing_extra_state_is_a_missing_key_as_torch():
    for lib in (torch, ember):
        net = _model(lib)
        sd = net.state_dict()
        del sd["a._extra_state"]
        with pytest.raises((RuntimeError, ember.errors.EmberError), match="a._extra_state"):
            _model(lib).load_state_dict(sd)
        result = _model(lib).load_state_dict(sd, strict=False)
        assert list(result.missing_keys) == ["a._extra_state"]


def test_a_module_without_get_extra_state_saves_none():
    for lib in (torch, ember):
        assert not any(k.endswith("_extra_state") for k in lib.nn.Linear(2, 2).state_dict())
