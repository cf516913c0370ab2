"""ember.load of PyTorch zip checkpoints and safetensors files; ember.save read by safetensors;
file objects; hostile PyTorch files refused by name, without running anything."""
from __future__ import annotations

import io
import os
import pickle
import struct
import zipfile
from collections import OrderedDict

import ember
import numpy as np
import pytest
from ember.errors import CheckpointError

torch = pytest.importorskip("torch")


def _models():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                                 torch.nn.ReLU(), torch.nn.Linear(8, 3))
    with torch.no_grad():                      # running stats that are not the defaults
        theirs(torch.randn(16, 4))
    theirs.eval()
    ours = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.BatchNorm1d(8), ember.nn.ReLU(),
                               ember.nn.Linear(8, 3)).eval()
    return theirs, ours


def test_a_torch_state_dict_loads_into_the_ember_model(tmp_path):
    theirs, ours = _models()
    torch.save(theirs.state_dict(), tmp_path / "model.pt")
    state = ember.load(tmp_path / "model.pt", weights_only=True)
    assert isinstance(state, OrderedDict) and list(state) == list(theirs.state_dict())
    assert state["1.num_batches_tracked"].dtype == ember.int64
    ours.load_state_dict(state)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    expected = theirs(torch.from_numpy(x)).detach().numpy()
    got = ours(ember.tensor(x)).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_torch_values_views_and_containers(tmp_path):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    obj = {"view": base[1:3, ::2], "t": base.t(), "same": base, "again": base,
           "param": torch.nn.Parameter(torch.ones(2)), "half": torch.ones(3).half(),
           "bf16": torch.ones(2, dtype=torch.bfloat16), "bool": torch.tensor([True, False]),
           "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5), "dtype": torch.int16,
           "size": torch.Size([2, 3]), "set": {1, 2}, "bytes": b"\x00\xff", "tuple": (1, None),
           "epoch": 7, "nested": [{"lr": 0.1}]}
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    back = ember.load(buffer, map_location="cpu")
    for key in ("view", "t", "same", "half", "bool", "empty", "scalar"):
        assert back[key].tolist() == obj[key].tolist(), key
    assert back["same"] is back["again"]               # one object in the pickle, one tensor
    assert isinstance(back["param"], ember.nn.Parameter) and back["param"].requires_grad
    assert back["bf16"].dtype == ember.bfloat16 and back["dtype"] is ember.int16
    assert back["size"] == (2, 3) and back["set"] == {1, 2} and back["bytes"] == b"\x00\xff"
    assert back["tuple"] == (1, None) and back["nested"] == [{"lr": 0.1}]


def test_map_location_for_cuda_tensors_saved_elsewhere(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("writes a CUDA location by hand; this machine has CUDA")
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pt")
    # as a GPU machine would have written it: the storage's location is cuda:0
    with zipfile.ZipFile(tmp_path / "w.pt") as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    name = next(n for n in members if n.endswith("data.pkl"))
    members[name] = members[name].replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
    with zipfile.ZipFile(tmp_path / "gpu.pt", "w", zipfile.ZIP_STORED) as z:
        for n, data in members.items():
            z.writestr(n, data)
    with pytest.raises(CheckpointError, match="(?s)saved on 'cuda:0'.*map_location='cpu'"):
        ember.load(tmp_path / "gpu.pt")
    assert ember.load(tmp_path / "gpu.pt", map_location="cpu")["w"].tolist() == [1.0, 1.0]
    place = ember.load(tmp_path / "gpu.pt", map_location=lambda storage, loc: storage)
    assert place["w"].device == ember.device("cpu")


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


class _Local:
    pass


@pytest.mark.parametrize("payload, name", [(_Boom(), "posix.system"),
                                           (_Local(), "test_interop._Local")])
def test_a_malicious_pickle_is_refused_by_name_without_running(tmp_path, monkeypatch,
                                                                payload, name):
    """weights_only (True, or None: PyTorch 2.6's default) refuses the global by name, in
    torch's words, before importing or calling anything."""
    monkeypatch.chdir(tmp_path)
    torch.save({"w": torch.ones(1), "x": payload}, tmp_path / "bad.pt")
    for weights_only in (None, True):
        with pytest.raises(CheckpointError, match=r"Unsupported global: GLOBAL "
                           rf"[a-z_.]*{name.split('.')[-1]} was not an allowed global"):
            ember.load(tmp_path / "bad.pt", weights_only=weights_only)
    assert not (tmp_path / "pwned").exists()


def _zip_with(tmp_path, pickle_bytes: bytes, members: dict | None = None,
              compress=zipfile.ZIP_STORED):
    path = tmp_path / "forged.pt"
    with zipfile.ZipFile(path, "w", compress) as z:
        z.writestr("archive/data.pkl", pickle_bytes)
        for name, data in (members or {}).items():
            z.writestr(f"archive/{name}", data)
    return path


def _tensor_pickle(size, stride, offset=0, numel=4) -> bytes:
    """torch's pickle of one float tensor over storage '0', written opcode by opcode."""
    def ints(values):
        return b"(" + b"".join(b"K" + bytes([v]) for v in values) + b"t"
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
            b"X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000"
            b"X\x03\x00\x00\x00cpuK" + bytes([numel]) + b"tQK" + bytes([offset])
            + ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


FORGED = {
    "a well-formed forgery loads": (_tensor_pickle((2, 2), (2, 1)), None),
    "stride past the storage": (_tensor_pickle((2, 2), (3, 1)), "reaches element 4"),
    "offset past the storage": (_tensor_pickle((2, 2), (2, 1), offset=3), "reaches element"),
    "storage size mismatch": (_tensor_pickle((2, 2), (2, 1), numel=9), "should hold 9"),
    "NEWOBJ": (b"\x80\x02ccollections\nOrderedDict\n)\x81.", "opcode NEWOBJ"),
    "BUILD on a tensor": (_tensor_pickle((2, 2), (2, 1))[:-1] + b"}b.", "sets the state"),
    "no STOP": (b"\x80\x02K\x01", "not a valid pickle"),
    "list bomb": (b"\x80\x02]" + b"]a" * 400_000 + b".", "more than"),
    "memo of a missing index": (b"\x80\x02h\x05.", "not a valid pickle"),
    "builtins.eval": (b"\x80\x02c__builtin__\neval\nX\x01\x00\x00\x001\x85R.",
                      "GLOBAL eval was not an allowed global"),
    "STACK_GLOBAL to os": (b"\x80\x04X\x02\x00\x00\x00osX\x06\x00\x00\x00system\x93.",
                           "GLOBAL os.system was not an allowed global"),
}


@pytest.mark.parametrize("case", FORGED)
def test_forged_torch_files(tmp_path, case):
    data, match = FORGED[case]
    path = _zip_with(tmp_path, data, {"data/0": np.arange(4, dtype=np.float32).tobytes()})
    if match is None:
        assert ember.load(path).tolist() == [[0.0, 1.0], [2.0, 3.0]]
        return
    with pytest.raises(CheckpointError, match=match):
        ember.load(path)


def test_zips_that_are_not_torch_checkpoints(tmp_path):
    ok = pickle.dumps({"a": 1}, protocol=2)
    with pytest.raises(CheckpointError, match="compressed"):
        ember.load(_zip_with(tmp_path, ok, compress=zipfile.ZIP_DEFLATED))
    path = tmp_path / "script.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("m/constants.pkl", b"")
        z.writestr("m/code/__torch__.py", b"")
    with pytest.raises(CheckpointError, match="TorchScript"):
        ember.load(path)
    good = _zip_with(tmp_path, ok)
    raw = bytearray(good.read_bytes())
    at = raw.rfind(b"PK\x05\x06")
    raw[at + 10:at + 12] = struct.pack("<H", 60000)        # more entries than bytes allow
    (tmp_path / "many.pt").write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="claims 60000 entries"):
        ember.load(tmp_path / "many.pt")
    (tmp_path / "cut.pt").write_bytes(good.read_bytes()[:-30])
    with pytest.raises(CheckpointError, match="zip directory is broken"):
        ember.load(tmp_path / "cut.pt")
    with pytest.raises(CheckpointError, match="never unpickles"):
        ember.load(io.BytesIO(pickle.dumps([1, 2, 3])))


def test_safetensors_files_both_ways(tmp_path):
    from safetensors.numpy import load_file, save_file
    from safetensors.torch import save_file as save_torch
    save_file({"a": np.ones((2, 3), np.float32), "b": np.arange(4)}, tmp_path / "np.st")
    back = ember.load(tmp_path / "np.st")
    assert back["a"].tolist() == [[1.0] * 3] * 2 and back["b"].dtype == ember.int64
    save_torch({"w": torch.ones(2, dtype=torch.bfloat16)}, tmp_path / "torch.st")
    assert ember.load(tmp_path / "torch.st")["w"].dtype == ember.bfloat16
    save_file({"u": np.ones(2, np.uint32)}, tmp_path / "u32.st")
    with pytest.raises(CheckpointError, match="ember has no dtype for, 'U32'"):
        ember.load(tmp_path / "u32.st")
    # and ember's own files, with every dtype, are read by the library
    tensors = {d.name: ember.ones(2, 3).to(d) for d in (ember.bool, ember.uint8, ember.int8,
               ember.int16, ember.int32, ember.int64, ember.float16, ember.float32,
               ember.float64)}
    ember.save(tensors, tmp_path / "ours")
    theirs = load_file(tmp_path / "ours")
    assert set(theirs) == set(tensors)
    for name, t in tensors.items():
        assert theirs[name].dtype == t.numpy().dtype and (theirs[name] == t.numpy()).all()


def test_save_and_load_through_file_objects(tmp_path):
    obj = {"w": ember.arange(6.0).reshape(2, 3), "epoch": 2}
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    assert ember.load(buffer)["w"].tolist() == obj["w"].tolist()
    with open(tmp_path / "f", "wb") as f:
        f.write(b"junk")                    # the checkpoint starts where the file is
        ember.save(obj, f)
    with open(tmp_path / "f", "rb") as f:
        f.seek(4)
        assert ember.load(f)["epoch"] == 2
    with open(tmp_path / "f") as f, pytest.raises(TypeError, match="binary mode"):
        ember.load(f)
    r, w = os.pipe()                        # not seekable
    with os.fdopen(w, "wb") as fw:
        ember.save(obj, fw)
    with os.fdopen(r, "rb") as fr:
        assert ember.load(fr)["epoch"] == 2
