"""ember.load on truncated, corrupted and hostile files: always a CheckpointError, never code.

Files are built here from the documented layout (docs/checkpoint-format.md), independently
of ember.save, then broken one way at a time; a seeded fuzz loop mutates a real checkpoint.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import struct
import tracemalloc

import ember
import numpy as np
import pytest
from ember.errors import CheckpointError

CODES = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64", np.dtype(np.uint8): "U8"}


def layout(entries: dict, data: bytes, metadata: dict | None) -> bytes:
    header = dict(entries)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def checkpoint(structure, arrays: dict, *, version="1", digest=None, entries=None,
               text=None) -> bytes:
    """A checkpoint as the docs describe it; `entries` and `text` override the tensor
    entries and the structure's JSON text."""
    structure_text = json.dumps(structure) if text is None else text
    h = hashlib.sha256(structure_text.encode())
    own, data = {}, b""
    for name in sorted(arrays):
        a = arrays[name]
        code = CODES[a.dtype]
        h.update(json.dumps([name, code, list(a.shape)]).encode())
        h.update(a.tobytes())
        own[name] = {"dtype": code, "shape": list(a.shape),
                     "data_offsets": [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
    metadata = {"format": "ember", "ember_format_version": version,
                "ember_structure": structure_text,
                "ember_sha256": h.hexdigest() if digest is None else digest}
    return layout(own if entries is None else entries, data, metadata)


def raw(header: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header


W = np.arange(6, dtype=np.float32).reshape(2, 3)
TENSOR = {"$tensor": "w", "device": "cpu", "requires_grad": False, "parameter": False}
GOOD = checkpoint({"$dict": [["w", TENSOR], ["epoch", 3]]}, {"w": W})


def _entry(code="F32", shape=(2, 3), offsets=(0, 24)):
    return {"w": {"dtype": code, "shape": list(shape), "data_offsets": list(offsets)}}


def _load(tmp_path, content: bytes):
    path = tmp_path / "ckpt"
    path.write_bytes(content)
    return ember.load(path)


def test_the_documented_layout_loads(tmp_path):
    back = _load(tmp_path, GOOD)
    assert back["epoch"] == 3 and back["w"].tolist() == W.tolist()


HOSTILE = {
    "empty": (b"", "too short"),
    "five bytes": (b"\x01\x02\x03\x04\x05", "too short"),
    "header length 2**63": (struct.pack("<Q", 2**63) + GOOD[8:], "header claims"),
    "header past the end": (struct.pack("<Q", len(GOOD)) + GOOD[8:], "header claims"),
    "truncated data": (GOOD[:-5], "data section"),
    "trailing bytes": (GOOD + b"\0" * 8, "trailing"),
    "not JSON": (raw(b"{abc"), "must be a JSON string"),
    "not UTF-8": (raw(b"{\xff\xfe}"), "not valid UTF-8"),
    "JSON array": (raw(b"[1]"), "not a JSON object"),
    "duplicate key": (raw(b'{"a": {}, "a": {}}'.replace(b"{}", json.dumps(
        _entry(shape=(0,), offsets=(0, 0))["w"]).encode())), "duplicate key 'a'"),
    "entry not an object": (raw(b'{"a": 1}'), "expected '{' for tensor 'a'"),
    "newer version": (checkpoint(TENSOR, {"w": W}, version="2"), "format version '2'"),
    "no checksum": (layout(_entry(), W.tobytes(), {"format": "ember",
                                                   "ember_format_version": "1",
                                                   "ember_structure": "null"}), "lacks"),
    "unknown dtype": (checkpoint(TENSOR, {"w": W}, entries=_entry(code="F8_E4M3")),
                      "ember has no dtype for, 'F8_E4M3'"),
    "made-up dtype": (checkpoint(TENSOR, {"w": W}, entries=_entry(code="F31")),
                      "an unknown dtype, 'F31'"),
    "shape overflows": (checkpoint(TENSOR, {"w": W}, entries=_entry(shape=(2**61, 2**61, 8))),
                        "needs"),
    "huge dim, zero elements": (checkpoint(TENSOR, {"w": W},
                                           entries=_entry(shape=(0, 2**70), offsets=(0, 0))),
                                "a size of 2\\*\\*62 or more"),
    "negative dim": (checkpoint(TENSOR, {"w": W}, entries=_entry(shape=(-2, -3))),
                     "holds '-2', not a non-negative integer"),
    "65 dims": (checkpoint(TENSOR, {"w": W}, entries=_entry(shape=(1,) * 65)),
                "more than 64 items"),
    "shape of strings": (checkpoint(TENSOR, {"w": W}, entries=_entry(shape=("2", "3"))),
                         "short list of non-negative integers"),
    "offsets past the end": (checkpoint(TENSOR, {"w": W}, entries=_entry(offsets=(0, 10**12))),
                             "data_offsets"),
    "offsets reversed": (checkpoint(TENSOR, {"w": W}, entries=_entry(offsets=(24, 0))),
                         "data_offsets"),
    "gap": (checkpoint(TENSOR, {"w": W}, entries={
        "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "v": {"dtype": "F32", "shape": [3], "data_offsets": [12, 24]}}), "contiguous"),
    "overlap": (checkpoint(TENSOR, {"w": W}, entries={
        "w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
        "v": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}), "contiguous"),
    "extra entry key": (checkpoint(TENSOR, {"w": W}, entries={
        "w": {**_entry()["w"], "exec": "rm -rf /"}}), "expected exactly"),
    "bad checksum": (checkpoint(TENSOR, {"w": W}, digest="0" * 64), "checksum"),
    "data changed": (GOOD[:-1] + bytes([GOOD[-1] ^ 1]), "checksum"),
    "structure not JSON": (checkpoint(None, {}, text="{x:1"), "structure is not valid JSON"),
    "structure 100k deep": (checkpoint(None, {}, text="[" * 100_000 + "]" * 100_000),
                            "structure nests too deeply"),
    "structure 500 deep": (checkpoint(json.loads("[" * 500 + "]" * 500), {}), "nests deeper"),
    "unknown tag": (checkpoint({"$eval": "__import__('os')"}, {}), "unexpected structure"),
    "two tags": (checkpoint({"$tuple": [], "$float": "nan"}, {}), "unexpected structure"),
    "missing tensor": (checkpoint({**TENSOR, "$tensor": "nope"}, {"w": W}), "bad tensor node"),
    "bad float": (checkpoint({"$float": "1e999"}, {}), r"bad \$float"),
    "bad dtype name": (checkpoint({"$dtype": "object"}, {}), r"bad \$dtype"),
    "dict entry not a pair": (checkpoint({"$dict": [["a", 1, 2]]}, {}), "pair"),
    "dict key a list": (checkpoint({"$dict": [[[1], 1]]}, {}), "unsupported type"),
    "tensor node extra key": (checkpoint({**TENSOR, "code": "x"}, {"w": W}), "bad tensor node"),
    "int requires grad": (checkpoint({**TENSOR, "requires_grad": True},
                                     {"w": np.arange(3, dtype=np.int64)}), "requires_grad"),
    "huge integer": (checkpoint(None, {}, text="9" * 5000), "structure is not valid JSON"),
    "pickle": (pickle.dumps({"w": [1, 2, 3]}), "ember never unpickles"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_hostile_file_is_refused(tmp_path, case):
    content, match = HOSTILE[case]
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=match) as info:
            _load(tmp_path, content)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value).startswith("ember.load: ")
    assert isinstance(info.value, ValueError)
    # nothing the header claims is allocated: far less than any claimed size
    assert peak < 20_000_000


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_pickle_payload_never_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError):
        _load(tmp_path, pickle.dumps(_Boom()))
    assert not (tmp_path / "pwned").exists()


def test_paths_that_are_not_checkpoints(tmp_path):
    with pytest.raises(CheckpointError, match="no file at"):
        ember.load(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="not a regular file"):
        ember.load(tmp_path)
    with pytest.raises(TypeError, match="expected a file path"):
        ember.load(b"ckpt")


def _mutations(original: bytes, rng: np.random.Generator, count: int):
    n_header = 8 + struct.unpack("<Q", original[:8])[0]
    for i in range(count):
        data = bytearray(original)
        kind = i % 5
        if kind == 0:                                  # flip bytes in the header
            for _ in range(rng.integers(1, 4)):
                data[rng.integers(0, n_header)] ^= int(rng.integers(1, 256))
        elif kind == 1:                                # flip bytes anywhere
            for _ in range(rng.integers(1, 4)):
                data[rng.integers(0, len(data))] ^= int(rng.integers(1, 256))
        elif kind == 2:                                # truncate
            del data[rng.integers(0, len(data)):]
        elif kind == 3:                                # insert junk into the header
            at = int(rng.integers(0, n_header))
            data[at:at] = rng.integers(0, 256, int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
        else:                                          # lie about the header length
            delta = int(rng.integers(-64, 65)) or 1
            data[:8] = struct.pack("<Q", max(0, n_header - 8 + delta))
        yield bytes(data)


def test_fuzzed_checkpoints_fail_cleanly_or_load_identically(tmp_path):
    from safetensors import safe_open
    source = tmp_path / "source"
    ember.save({"model": {"conv.weight": ember.randn(4, 1, 3, 3), "fc.bias": ember.zeros(10),
                          "steps": ember.arange(5)},
                "optimizer": {"state": {0: {"step": 3}}, "param_groups": [{"lr": 0.1}]},
                "epoch": 4, "seed": 0, "tag": "fuzz"}, source)
    original = source.read_bytes()
    with safe_open(source, framework="numpy") as f:
        digest = f.metadata()["ember_sha256"]
    outcomes = {"refused": 0, "identical": 0}
    target, again = tmp_path / "mutated", tmp_path / "again"
    for content in _mutations(original, np.random.default_rng(1234), 400):
        target.write_bytes(content)
        try:
            loaded = ember.load(target)
        except CheckpointError as exc:
            assert str(exc).startswith("ember.load: ")
            outcomes["refused"] += 1
            continue
        # loaded without complaint: then it must be the very same content
        ember.save(loaded, again)
        with safe_open(again, framework="numpy") as f:
            assert f.metadata()["ember_sha256"] == digest
        outcomes["identical"] += 1
    assert outcomes["refused"] > 300
