"""ember.onnx.load on malformed models (onnx_mutants.py: three valid models truncated, flipped
and broken one way at a time, external data bent out of the model's folder): every one is
an OnnxImportError naming what is wrong or a load that agrees with onnxruntime; never
another exception, never a hang, and time and memory in proportion to the file.  The
corpus runs in a child process under a memory limit, each case under an alarm."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import ember
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

SECONDS = 2.0                   # what one case may take (the bound)
SLACK = 1 << 20                 # bytes a load may allocate beyond 4x the file

_CHILD = r"""
import json, os, resource, signal, sys, time, tracemalloc
sys.path.insert(0, sys.argv[2])
import numpy as np
import ember
import onnxruntime as ort
from ember.onnx import OnnxImportError
import onnx_mutants

corpus = onnx_mutants.cases(sys.argv[1])
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
vm = int(status["VmSize"].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (768 << 20), resource.RLIM_INFINITY))


def alarm(*_):
    raise TimeoutError("the case ran past 10 s")


signal.signal(signal.SIGALRM, alarm)


def runtime(data, inputs):
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return [np.asarray(o) for o in session.run(None, dict(zip(names, inputs)))]


def load(case):
    source = case.path if case.path is not None else case.data
    if case.base_dir is None:
        return ember.onnx.load(source)
    return ember.onnx.load(source, base_dir=case.base_dir)


load(corpus[0])                     # the lazy imports, before anything is measured
tracemalloc.start()
for case in corpus:
    rec = {"name": case.name, "expect": case.expect, "size": case.size()}
    signal.alarm(10)
    start = time.perf_counter()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    got = None
    try:
        try:
            net = load(case)
        finally:
            rec["peak"] = tracemalloc.get_traced_memory()[1] - before
        try:
            out = net(*[ember.tensor(a) for a in case.inputs])
            got = [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]
            rec["outcome"] = "ran"
        except OnnxImportError as exc:
            rec["outcome"], rec["message"] = "refused when run", str(exc)
    except OnnxImportError as exc:
        rec["outcome"], rec["message"] = "refused", str(exc)
    except TimeoutError as exc:
        rec["outcome"], rec["message"] = "hang", str(exc)
    except BaseException as exc:
        rec["outcome"], rec["message"] = "other", f"{type(exc).__module__}." \
            f"{type(exc).__name__}: {str(exc)[:500]}"
    finally:
        signal.alarm(0)
        rec["seconds"] = time.perf_counter() - start
    if got is not None:
        tracemalloc.stop()
        try:
            want = runtime(case.reference or case.data or case.path, case.inputs)
        except Exception as exc:
            rec["runtime"] = f"refused: {str(exc)[:200]}"
        else:
            rec["agree"] = len(want) == len(got) and all(
                w.shape == g.shape and np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
                for w, g in zip(want, got))
        tracemalloc.start()
    print(json.dumps(rec), flush=True)
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx-hostile")
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(folder), here],
                         capture_output=True, text=True, timeout=240)
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0 and records, out.stderr[-3000:]
    return records


def test_every_case_is_an_onnx_import_error_or_a_correct_load(corpus):
    assert len(corpus) > 150
    wrong = [(r["name"], r["outcome"], r.get("message", "")[:300]) for r in corpus
             if r["outcome"] not in ("ran", "refused", "refused when run")]
    assert not wrong, wrong
    disagree = [r["name"] for r in corpus if r.get("agree") is False]
    assert not disagree, f"loaded, ran, and disagree with onnxruntime: {disagree}"
    refused = sum(r["outcome"] != "ran" for r in corpus)
    assert refused > 100                           # the corpus is mostly malformed


def test_each_refusal_names_what_is_wrong(corpus):
    named = [r for r in corpus if r["expect"] not in (None, "ok")]
    assert len(named) > 70
    wrong = [(r["name"], r["expect"], r["outcome"], r.get("message", "")[:400])
             for r in named if r["outcome"] == "ran" or r["expect"] not in r["message"]]
    assert not wrong, wrong
    # every message says what to do
    fixes = ("export", "move", "copy", "pass base_dir", "drop", "store", "cast", "convert",
             "check the inputs", "remove", "point it", "load it", "inline")
    unfixed = [(r["name"], r["message"]) for r in corpus if r["outcome"] != "ran" and
               not any(word in r["message"] for word in fixes)]
    assert not unfixed, unfixed


def test_the_valid_models_load_and_agree(corpus):
    ok = [r for r in corpus if r["expect"] == "ok"]
    assert len(ok) >= 10
    bad = [(r["name"], r["outcome"], r.get("message", "")[:300], r.get("runtime"))
           for r in ok if r["outcome"] != "ran" or r.get("agree") is not True]
    assert not bad, bad


def test_time_and_memory_follow_the_file(corpus):
    slow = [(r["name"], round(r["seconds"], 2)) for r in corpus if r["seconds"] > SECONDS]
    assert not slow, slow
    big = [(r["name"], r["size"], r["peak"]) for r in corpus
           if r["peak"] > 4 * r["size"] + SLACK]
    assert not big, big
    huge = {r["name"]: r for r in corpus}["dims 2**40 without data"]
    assert huge["outcome"] == "refused" and huge["peak"] < SLACK


def test_external_data_path_check_is_embers_own(tmp_path, monkeypatch):
    """The installed onnx's checker is not what refuses: with it disabled, ember still
    refuses a location that climbs out of the model's folder."""
    import onnx
    import onnx.external_data_helper as helper
    from onnx import TensorProto
    monkeypatch.setattr(helper, "_read_external_data_bytes",
                        lambda *a, **k: pytest.fail("ember used onnx's external-data reader"))
    (tmp_path / "m").mkdir()
    (tmp_path / "secret.bin").write_bytes(np.ones(2, np.float32).tobytes())
    w = onnx.helper.make_tensor("w", TensorProto.FLOAT, [2], [0.0, 0.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="../secret.bin")
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "w"], ["y"])], "t",
        [onnx.helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [onnx.helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    path = tmp_path / "m" / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ember.onnx.OnnxImportError,
                       match="initializer 'w' keeps its data in '../secret.bin', which "
                             "climbs out of the model's folder"):
        ember.onnx.load(str(path))
    # inside the folder it loads: the same bytes, read by ember
    (tmp_path / "m" / "secret.bin").write_bytes(np.ones(2, np.float32).tobytes())
    model.graph.initializer[0].external_data[0].value = "secret.bin"
    path.write_bytes(model.SerializeToString())
    got = ember.onnx.load(str(path))(ember.tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(got.numpy(), [2.0, 3.0])


def test_long_names_are_cut_in_messages():
    import onnx
    from onnx import TensorProto
    name = "n" * 100_000
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Relu", [name], ["y"])], "t",
        [onnx.helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [onnx.helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    with pytest.raises(ember.onnx.OnnxImportError, match="100000 characters") as info:
        ember.onnx.load(model)
    assert len(str(info.value)) < 1000
