"""Whole-object checkpoints with PyTorch 2.6+ semantics, against real torch: ember.save of
any picklable object (PyTorch's zip format), load's weights_only allowlist with torch's
refusal and add_safe_globals / safe_globals, weights_only=False, and mmap=True."""
from __future__ import annotations

import argparse
import dataclasses
import io
import pickle
import re

import ember
import numpy as np
import pytest
from ember import nn
from ember.errors import CheckpointError, EmberError

torch = pytest.importorskip("torch")


@dataclasses.dataclass
class Config:
    lr: float
    scale: object            # a tensor


def _unsupported(message: str) -> str:
    """The "Unsupported global: GLOBAL x was not an allowed global" part of a refusal,
    with the namespace of the fix (torch. / ember.) left out."""
    found = re.search(r"WeightsUnpickler error: (Unsupported global: GLOBAL \S+ was not an "
                      r"allowed global by default)", message)
    assert found, message
    return found.group(1)


def _refusals(path) -> tuple[str, str]:
    with pytest.raises(Exception) as theirs:
        torch.load(path)
    with pytest.raises(CheckpointError) as ours:
        ember.load(path)
    assert isinstance(ours.value, ember.io.WeightsOnlyError)
    assert isinstance(ours.value, pickle.UnpicklingError)
    assert isinstance(theirs.value, pickle.UnpicklingError)
    assert "ember.serialization.add_safe_globals([" in str(ours.value)
    assert "weights_only` set to `False`" in str(ours.value)
    return _unsupported(str(theirs.value)), _unsupported(str(ours.value))


@pytest.fixture(autouse=True)
def _no_leftover_globals():
    ember.serialization.clear_safe_globals()
    yield
    ember.serialization.clear_safe_globals()


def test_a_torch_saved_module_refuses_and_loads_as_torch_does(tmp_path):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    torch.save(theirs, path)
    torch_says, ember_says = _refusals(path)
    assert ember_says == torch_says == ("Unsupported global: GLOBAL torch.nn.modules.container"
                                        ".Sequential was not an allowed global by default")
    x = np.random.default_rng(0).random((2, 3), dtype=np.float32)
    expected = theirs(torch.tensor(x)).detach().numpy()
    ours = ember.load(path, weights_only=False)          # full unpickle: trusted file
    assert type(ours) is nn.Sequential and type(ours[0]) is nn.Linear
    np.testing.assert_allclose(ours(ember.tensor(x)).detach().numpy(), expected, rtol=1e-6)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # marking the classes safe (by their ember names, as torch.nn.X is ember.nn.X under
    # ember.torch_alias) loads it with weights_only=True
    with ember.serialization.safe_globals([nn.Sequential, nn.Linear, nn.Tanh]):
        assert len(ember.serialization.get_safe_globals()) == 3
        allowed = ember.load(path)
    assert ember.serialization.get_safe_globals() == []
    np.testing.assert_allclose(allowed(ember.tensor(x)).detach().numpy(), expected, rtol=1e-6)
    # the parameters train
    loss = allowed(ember.tensor(x)).sum()
    loss.backward()
    assert allowed[0].weight.grad is not None


def test_torch_saved_objects_and_add_safe_globals(tmp_path):
    path = tmp_path / "objects.pt"
    torch.save({"args": argparse.Namespace(lr=0.1, layers=[1, 2]), "w": torch.ones(2)}, path)
    torch_says, ember_says = _refusals(path)
    assert ember_says == torch_says
    assert "GLOBAL argparse.Namespace" in ember_says
    ember.serialization.add_safe_globals([argparse.Namespace])
    torch.serialization.add_safe_globals([argparse.Namespace])
    try:
        ours, theirs = ember.load(path), torch.load(path)
    finally:
        torch.serialization.clear_safe_globals()
    assert vars(ours["args"]) == vars(theirs["args"]) == {"lr": 0.1, "layers": [1, 2]}
    assert ours["w"].tolist() == [1.0, 1.0]
    # the (object, "module.qualname") form names a global the file spells differently
    ember.serialization.clear_safe_globals()
    ember.serialization.add_safe_globals([(argparse.Namespace, "argparse.Namespace")])
    assert vars(ember.load(path)["args"])["lr"] == 0.1
    with pytest.raises(ValueError, match="tuple of length 2"):
        ember.serialization.add_safe_globals([(argparse.Namespace,)])


def test_ember_saved_objects_load_in_torch_and_in_ember(tmp_path):
    path = tmp_path / "objects.pt"
    obj = {"args": argparse.Namespace(lr=0.1), "config": Config(0.5, ember.arange(3.0)),
           "steps": ember.tensor([1, 2]), "dtype": ember.float16, "device": ember.device("cpu"),
           "shape": ember.zeros(2, 3).shape}
    ember.save(obj, path)
    torch_says, ember_says = _refusals(path)
    assert ember_says == torch_says
    theirs = torch.load(path, weights_only=False)
    assert isinstance(theirs["config"].scale, torch.Tensor)
    assert theirs["config"].scale.tolist() == [0.0, 1.0, 2.0]
    assert theirs["steps"].dtype == torch.int64 and theirs["dtype"] is torch.float16
    assert theirs["device"] == torch.device("cpu") and theirs["shape"] == torch.Size([2, 3])
    assert vars(theirs["args"]) == {"lr": 0.1}
    ours = ember.load(path, weights_only=False)
    assert ours["config"] == Config(0.5, ours["config"].scale)
    assert isinstance(ours["config"].scale, ember.Tensor)
    assert ours["config"].scale.tolist() == [0.0, 1.0, 2.0]
    assert ours["dtype"] is ember.float16 and ours["device"] == ember.device("cpu")
    assert ours["shape"] == (2, 3) and type(ours["shape"]) is ember.Size
    with ember.serialization.safe_globals([argparse.Namespace, Config]):
        allowed = ember.load(path)
    assert allowed["config"].scale.tolist() == [0.0, 1.0, 2.0]
    # plain data still goes to ember's safe format, which holds no pickle
    ember.save({"w": ember.ones(2)}, path)
    assert path.read_bytes()[:2] != b"PK"


def test_a_whole_ember_module_round_trips(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    model[0].weight.requires_grad_(False)
    path = tmp_path / "model.pt"
    ember.save({"model": model, "params": list(model.parameters()), "epoch": 3}, path)
    with pytest.raises(CheckpointError, match="GLOBAL ember.nn.containers.Sequential"):
        ember.load(path)
    back = ember.load(path, weights_only=False)
    x = ember.ones(4, 3)
    np.testing.assert_array_equal(back["model"](x).detach().numpy(),
                                  model(x).detach().numpy())
    assert not back["model"][0].weight.requires_grad and back["model"][0].bias.requires_grad
    assert isinstance(back["model"][0].weight, nn.Parameter)
    assert back["epoch"] == 3
    # one object saved twice loads as one object, as in the saved program
    assert back["params"][1] is back["model"][0].bias


def test_weights_only_and_mmap_are_checked(tmp_path):
    path = tmp_path / "w.pt"
    ember.save({"w": ember.ones(2)}, path)
    with pytest.raises(TypeError, match="weights_only must be True, False or None"):
        ember.load(path, weights_only="yes")
    with pytest.raises(TypeError, match="mmap must be True, False or None"):
        ember.load(path, mmap=1)
    with open(path, "rb") as f, pytest.raises(ValueError, match="must be a file path") as info:
        ember.load(f, mmap=True)
    assert isinstance(info.value, EmberError)
    with pytest.raises(TypeError, match="cannot be pickled"):
        ember.save({"f": lambda: 0}, path)


def _mapped(t) -> bool:
    a = t._data
    while a is not None:
        if isinstance(a, np.memmap):
            return True
        a = getattr(a, "base", None)
    return False


@pytest.mark.parametrize("writer", ["ember", "safetensors", "torch", "ember-pickle"])
def test_mmap_maps_the_file_copy_on_write(tmp_path, writer):
    path = tmp_path / "m.pt"
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    if writer == "ember":
        ember.save({"a": ember.tensor(values)}, path)
    elif writer == "safetensors":
        safetensors = pytest.importorskip("safetensors.numpy")
        safetensors.save_file({"a": values}, str(path))
    elif writer == "torch":
        torch.save({"a": torch.tensor(values)}, path)
    else:
        ember.save({"a": ember.tensor(values), "args": argparse.Namespace()}, path)
    weights_only = writer != "ember-pickle"
    t = ember.load(path, mmap=True, weights_only=weights_only)["a"]
    assert _mapped(t) and t.tolist() == values.tolist()
    assert not _mapped(ember.load(path, weights_only=weights_only)["a"])
    t.add_(1.0)                           # copy-on-write: the file keeps its values
    assert ember.load(path, weights_only=weights_only)["a"].tolist() == values.tolist()
    if writer in ("torch", "ember-pickle"):
        np.testing.assert_array_equal(
            torch.load(path, mmap=True, weights_only=weights_only)["a"].numpy(), values)


def test_ember_zip_is_aligned_and_loads_in_torch_with_mmap(tmp_path):
    import zipfile
    path = tmp_path / "z.pt"
    ember.save({"a": ember.ones(5, dtype=ember.float64), "o": argparse.Namespace(k=1)}, path)
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if "/data/" in info.filename:
                with open(path, "rb") as f:
                    f.seek(info.header_offset + 26)
                    n, m = np.frombuffer(f.read(4), dtype="<u2")
                assert (info.header_offset + 30 + n + m) % 64 == 0
    out = torch.load(path, mmap=True, weights_only=False)
    assert out["a"].dtype == torch.float64 and out["a"].tolist() == [1.0] * 5
    buffer = io.BytesIO()
    ember.save({"o": argparse.Namespace(k=2)}, buffer)
    buffer.seek(0)
    assert ember.load(buffer, weights_only=False)["o"].k == 2


def test_a_safe_global_never_opens_other_names(tmp_path):
    """With globals marked safe, a name the file asks for is still refused unless it is one
    of them: a private torch path is not even imported to compare."""
    import sys
    import zipfile
    ember.serialization.add_safe_globals([argparse.Namespace])
    path = tmp_path / "forged.pt"
    # other tests in this process (pytest-xdist workers run many) may have imported them
    before = {m for m in ("ember.testing.__main__", "ember.array_api._host") if m in sys.modules}
    for module, name in (("torch.testing.__main__", "main"), ("torch.array_api._host", "x"),
                         ("argparse", "ArgumentParser"), ("os", "system")):
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("archive/data.pkl", f"\x80\x02c{module}\n{name}\n)R.".encode("latin-1"))
        with pytest.raises(ember.io.WeightsOnlyError, match=f"GLOBAL {module}.{name} was not"):
            ember.load(path)
        for imported in ("ember.testing.__main__", "ember.array_api._host"):
            assert imported in before or imported not in sys.modules
