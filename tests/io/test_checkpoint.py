"""ember.save / ember.load: round trips on every device, map_location, atomic writes."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from collections import OrderedDict

import ember
import numpy as np
import pytest
from ember.errors import CheckpointError, DeviceUnavailableError, EmberError

DEVICES = [str(d) for d in ember.devices()]


def _supported(device, dtype):
    d = ember.device(device)
    return d.type == "cpu" or dtype.name in d.backend.capabilities(d.index).dtypes


def _tensors(device):
    rng = np.random.default_rng(0)
    out = OrderedDict()
    for dtype in (ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
                  ember.float16, ember.bfloat16, ember.float32, ember.float64):
        if _supported(device, dtype):
            host = (rng.standard_normal((3, 4)) * 100).astype(dtype.np)
            out[dtype.name] = ember.tensor(host, device=device)
    if _supported(device, ember.float32):
        out["scalar"] = ember.tensor(np.float32(-2.5), device=device)
        out["empty"] = ember.zeros(0, 5, device=device)
        out["transposed"] = ember.arange(12, dtype=ember.float32, device=device).reshape(3, 4).T
    return out


def _checkpoint(device):
    tensors = _tensors(device)
    return {
        "model": tensors,
        "optimizer": {"state": {0: {"step": 7, "momentum_buffer": tensors["float32"]}},
                      "param_groups": [{"lr": 0.01, "momentum": 0.9, "nesterov": False,
                                        "weight_decay": 0.0, "params": [0]}]},
        "epoch": 12, "seed": 2**70 + 1, "loss": float("nan"), "best": -math.inf,
        "name": "digits-cnn \u2713", "note": None, "flags": (True, False, 3.25),
        "history": [0.5, 0.25, [1, "x"]], 3: "int key", 1.5: "float key", None: "none key",
        "array": np.arange(6, dtype=np.int16).reshape(2, 3), "dtype": ember.bfloat16,
    }


def assert_same(a, b, path="obj"):
    """Equal types and values, tensors bit for bit (dtype, shape, device, bytes)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, ember.Tensor):
        assert (a.dtype, tuple(a.shape), a.device) == (b.dtype, tuple(b.shape), b.device), path
        assert a.requires_grad == b.requires_grad, path
        ha, hb = a.detach().cpu().numpy(), b.detach().cpu().numpy()
        assert np.ascontiguousarray(ha).tobytes() == np.ascontiguousarray(hb).tobytes(), path
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), path
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b, path


@pytest.mark.parametrize("device", DEVICES)
def test_round_trip_is_identical(tmp_path, device):
    obj = _checkpoint(device)
    ember.save(obj, tmp_path / "ckpt")
    back = ember.load(tmp_path / "ckpt")
    assert_same(obj, back)
    assert back["model"]["float32"] is back["optimizer"]["state"][0]["momentum_buffer"]


@pytest.mark.parametrize("device", DEVICES)
def test_map_location_moves_every_tensor(tmp_path, device):
    expected = _tensors(device)
    ember.save(OrderedDict((k, t.cpu()) for k, t in expected.items()), tmp_path / "ckpt")
    back = ember.load(tmp_path / "ckpt", map_location=device)
    assert_same(expected, back)
    assert_same(back, ember.load(tmp_path / "ckpt", map_location=ember.device(device)))


def test_map_location_dict_and_callable(tmp_path):
    ember.save({"w": ember.ones(2)}, tmp_path / "ckpt")
    seen = []

    def place(tensor, saved):
        seen.append((saved, tensor.device))
        return tensor * 2

    assert ember.load(tmp_path / "ckpt", map_location=place)["w"].tolist() == [2.0, 2.0]
    assert seen == [("cpu", ember.device("cpu"))]
    assert ember.load(tmp_path / "ckpt", map_location=lambda t, s: None)["w"].tolist() == [1, 1]
    assert ember.load(tmp_path / "ckpt", map_location={"cuda:0": "cpu"})["w"].tolist() == [1, 1]
    with pytest.raises(TypeError, match="must return a Tensor or None"):
        ember.load(tmp_path / "ckpt", map_location=lambda t, s: "cpu")


def test_autograd_flags_and_parameters_survive(tmp_path):
    from ember.nn.parameter import Parameter
    w = Parameter(ember.randn(2, 3))
    frozen = Parameter(ember.randn(2), requires_grad=False)
    x = ember.randn(2).requires_grad_(True)
    ember.save({"w": w, "frozen": frozen, "x": x, "w_data": w.detach()}, tmp_path / "ckpt")
    back = ember.load(tmp_path / "ckpt")
    assert isinstance(back["w"], Parameter) and back["w"].requires_grad
    assert isinstance(back["frozen"], Parameter) and not back["frozen"].requires_grad
    assert back["x"].requires_grad and not isinstance(back["x"], Parameter)
    assert not back["w_data"].requires_grad
    assert back["w"].tolist() == back["w_data"].tolist() == w.tolist()


def test_readable_by_plain_safetensors(tmp_path):
    from safetensors import safe_open
    ember.save({"model": OrderedDict([("fc.weight", ember.ones(2, 2))]), "epoch": 1},
               tmp_path / "ckpt")
    with safe_open(tmp_path / "ckpt", framework="numpy") as f:
        assert list(f.keys()) == ["model.fc.weight"]
        assert f.metadata()["format"] == "ember"
        assert f.get_tensor("model.fc.weight").tolist() == [[1, 1], [1, 1]]


def test_unpicklable_values_are_refused_before_writing(tmp_path):
    target = tmp_path / "ckpt"
    with pytest.raises(TypeError, match=r"ember.save: cannot save dict.*cannot be pickled") \
            as info:
        ember.save({"model": {"layer": lambda x: x}}, target)
    assert isinstance(info.value, EmberError) and not target.exists()
    with pytest.raises(TypeError, match="cannot be pickled"):
        ember.save({"gen": (i for i in range(3))}, target)
    assert os.listdir(tmp_path) == []


def test_what_the_safe_format_cannot_hold_is_pickled_and_loads(tmp_path):
    """Tuple keys, self-references and arbitrary objects go to PyTorch's zip format; the
    plain parts load with weights_only=True, objects need weights_only=False."""
    target = tmp_path / "ckpt"
    ember.save({(1, 2): ember.ones(2)}, target)
    assert target.read_bytes()[:2] == b"PK"
    assert ember.load(target)[(1, 2)].tolist() == [1.0, 1.0]
    loop = [ember.zeros(1)]
    loop.append(loop)
    ember.save(loop, target)
    back = ember.load(target)
    assert back[1] is back and back[0].tolist() == [0.0]
    ember.save({"o": object()}, target)
    with pytest.raises(ember.io.WeightsOnlyError, match="GLOBAL object was not an allowed"):
        ember.load(target)
    assert type(ember.load(target, weights_only=False)["o"]) is object


def test_saved_device_that_is_missing_here(tmp_path, monkeypatch):
    from ember import io
    # a CPU tensor recorded as saved from an absent GPU, as another machine would write it
    encode = io._Encoder._tensor
    monkeypatch.setattr(io._Encoder, "_tensor",
                        lambda self, t, path: {**encode(self, t, path), "device": "cuda:7"})
    ember.save({"w": ember.ones(2)}, tmp_path / "ckpt")
    monkeypatch.undo()
    if any(d.startswith("cuda") for d in DEVICES):
        pytest.skip("this machine has CUDA devices")
    with pytest.raises(DeviceUnavailableError, match="map_location='cpu'"):
        ember.load(tmp_path / "ckpt")
    assert ember.load(tmp_path / "ckpt", map_location="cpu")["w"].tolist() == [1, 1]


# --- atomic writes ---------------------------------------------------------------------------

def test_failed_write_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    from ember import io
    target = tmp_path / "ckpt"
    ember.save({"epoch": 1, "w": ember.ones(1000)}, target)
    before = target.read_bytes()
    real = io.S.write

    def crash_half_way(fh, head, arrays):
        real(fh, head, arrays)
        fh.flush()
        fh.truncate(fh.tell() // 2)           # as if the disk filled up mid-write
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io.S, "write", crash_half_way)
    with pytest.raises(CheckpointError, match="No space left on device; the checkpoint needs"):
        ember.save({"epoch": 2, "w": ember.zeros(1000)}, target)
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt"]       # the temporary file was removed
    assert ember.load(target)["epoch"] == 1


_KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    import ember
    from ember import io
    real = io.S.write

    def stall(fh, head, arrays):
        real(fh, head, arrays)
        fh.flush()
        fh.truncate(fh.tell() // 3)
        print("writing", flush=True)
        time.sleep(60)

    io.S.write = stall
    ember.save({"epoch": 2, "w": ember.zeros(100000)}, sys.argv[1])
""")


def test_killed_writer_leaves_the_old_checkpoint(tmp_path):
    target = tmp_path / "ckpt"
    ember.save({"epoch": 1, "w": ember.ones(100000)}, target)
    before = target.read_bytes()
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER)
    with subprocess.Popen([sys.executable, str(script), str(target)], stdout=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stdout.readline().strip() == "writing"
        finally:
            proc.kill()
    assert target.read_bytes() == before
    assert ember.load(target)["epoch"] == 1
