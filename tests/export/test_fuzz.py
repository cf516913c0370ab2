"""A seeded corpus of broken and hostile program files: every one gives a clear ember error
(or, where the change is harmless, a program that still verifies), never another exception,
with bounded memory."""
from __future__ import annotations

import copy
import io
import json
import os
import tempfile
import tracemalloc
import zipfile
import zlib

import ember
import ember.export.program as program_module
import ember.nn as nn
import numpy as np
import pytest
from ember.errors import EmberError

LIMIT = 8 << 20                     # the largest value a fuzzed graph may claim here
PEAK = 64 << 20                     # what loading the whole corpus may allocate at once


def _program_bytes() -> bytes:
    ember.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(2 * 2 * 2, 3), nn.Softmax(1)).eval()
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype("f4"))
    program = ember.export(model, (x,), dynamic_shapes={"input": {0: "batch"}})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.ember")
        program.save(path)
        with open(path, "rb") as fh:
            return fh.read()


def _members(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


HOSTILE = [None, True, -1, 0, 2**40, 2**70, -2**63, 1e308, float("nan"), "x" * 50, "float128",
           [], {}, [[[[[]]]]], {"$ref": 10**6}, {"$ref": -1}, {"$dtype": "float128"},
           {"$slice": [0, 2**62, 0]}, {"$expr": {"coef": 1, "powers": {"zz": 1}, "offset": 0}},
           {"$expr": {"coef": 2**61, "powers": {"batch": 1}, "offset": 0}},
           {"$list": [1, 2]}, {"$float": "inf"}, {"$dict": [[1, 2]]}, {"$nope": 1},
           [2**31, 2**31, 2**31], [100000, 100000], [-3, 4], ["batch"], "unfold", "linear",
           ["kernel", "full", [], {"shape": [60000, 60000], "value": 0, "dtype":
                                    {"$dtype": "float32"}}, [[60000, 60000], "float32"], False]]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from _paths(v, prefix + (k,))


def _replace(doc, path, value):
    if not path:
        return value
    out = copy.deepcopy(doc)
    target = out
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return out


def corpus(seed: int = 0) -> list:
    """[(label, file bytes)]: truncations, byte flips, bad JSON, schema-level mutations of the
    graph, broken weights and examples."""
    rng = np.random.default_rng(zlib.crc32(b"export-fuzz") + seed)
    good = _program_bytes()
    members = _members(good)
    doc = json.loads(members["program.json"])
    cases = [("good", good)]
    for _ in range(40):
        cut = int(rng.integers(0, len(good)))
        cases.append((f"truncated at {cut}", good[:cut]))
    for k in range(40):
        data = bytearray(good)
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(0, len(data)))] ^= int(rng.integers(1, 256))
        cases.append((f"flipped {k}", bytes(data)))
    text = members["program.json"]
    for _ in range(15):
        cut = int(rng.integers(1, len(text)))
        cases.append((f"json cut at {cut}", _zip({**members, "program.json": text[:cut]})))
    cases.append(("deep json", _zip({**members, "program.json": b"[" * 200_000})))
    cases.append(("wide json", _zip({**members, "program.json": b"[" + b"[]," * 300_000
                                     + b"[]]"})))
    cases.append(("nan json", _zip({**members, "program.json": text.replace(b"1e-05", b"NaN")})))
    paths = [p for p in _paths(doc) if p]
    for _ in range(200):
        path = paths[int(rng.integers(0, len(paths)))]
        value = HOSTILE[int(rng.integers(0, len(HOSTILE)))]
        mutated = json.dumps(_replace(doc, path, value)).encode()
        cases.append((f"{'/'.join(map(str, path))} = {str(value)[:30]}",
                      _zip({**members, "program.json": mutated})))
    weights = members["weights.safetensors"]
    for _ in range(20):
        data = bytearray(weights)
        at = int(rng.integers(8, min(len(data), 400)))      # in the header
        data[at:at + 1] = bytes([int(rng.integers(32, 127))])
        cases.append((f"weights header {at}", _zip({**members, "weights.safetensors":
                                                    bytes(data)})))
    huge = weights.replace(b'"shape":[2,1,3,3]', b'"shape":[2000000000,1,3,3]')
    cases.append(("weights huge shape", _zip({**members, "weights.safetensors": huge})))
    cases.append(("weights length", _zip({**members, "weights.safetensors":
                                          (2**63).to_bytes(8, "little") + weights[8:]})))
    cases.append(("no weights", _zip({"program.json": text})))
    cases.append(("examples swapped", _zip({**members, "examples.safetensors": weights})))
    cases.append(("extra member", _zip({**members, "run.py": b"print('hi')"})))
    cases.append(("not a zip", b"\x80\x04\x95" + good))
    return cases


def _judge(data: bytes, tmp_path, label: str) -> str:
    path = tmp_path / "case.ember"
    path.write_bytes(data)
    try:
        program = ember.export.load(path)
        program.verify()
    except EmberError as exc:
        assert str(exc), label
        return "refused"
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"{label}: {type(exc).__name__}: {exc}")
    return "loaded"


def test_corpus_gives_only_ember_errors_with_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(program_module, "MAX_VALUE_BYTES", LIMIT)
    cases = corpus()
    assert len(cases) > 300
    outcomes = {}
    tracemalloc.start()
    try:
        for label, data in cases:
            outcomes[label] = _judge(data, tmp_path, label)
            _, peak = tracemalloc.get_traced_memory()
            assert peak < PEAK, f"{label}: {peak} bytes at once"
            tracemalloc.reset_peak()
    finally:
        tracemalloc.stop()
    assert outcomes["good"] == "loaded"
    refused = sum(v == "refused" for v in outcomes.values())
    assert refused > 0.8 * len(cases)       # most mutations break the file


def test_specific_refusals_name_the_problem(tmp_path, monkeypatch):
    monkeypatch.setattr(program_module, "MAX_VALUE_BYTES", LIMIT)
    members = _members(_program_bytes())
    doc = json.loads(members["program.json"])

    def load(d, **more):
        path = tmp_path / "p.ember"
        path.write_bytes(_zip({**members, "program.json": json.dumps(d).encode(), **more}))
        with pytest.raises(ember.export.ExportFormatError) as info:
            ember.export.load(path)
        return str(info.value)

    bad = copy.deepcopy(doc)
    bad["ops"]["secret_op"] = "x"
    assert "does not declare" in load(bad)
    bad = copy.deepcopy(doc)
    bad["version"] = 99
    assert "format version 99" in load(bad)
    bad = copy.deepcopy(doc)
    bad["ops"]["reshape"] = "x, *, shape: tuple[float]"
    assert "had signature" in load(bad)
    bad = copy.deepcopy(doc)
    node = next(n for n in bad["nodes"] if n[1] == "reshape")
    node[3]["shape"] = [2, "eight"]
    assert "attribute shape" in load(bad)
    bad = copy.deepcopy(doc)
    node = next(n for n in bad["nodes"] if n[1] == "conv2d")
    node[3]["padding"] = [100000, 100000]
    assert "records shape" in load(bad) or "bytes" in load(bad)
    bad = copy.deepcopy(doc)
    bad["nodes"].append(["kernel", "full", {"$list": []}, {"shape": [4096, 4096], "value": 0,
                                                    "dtype": {"$dtype": "float32"}},
                         [[4096, 4096], "float32"], False])
    bad["ops"]["full"] = "*, shape: tuple[int], value: scalar, dtype: dtype"
    assert "more than the" in load(bad)
