"""ember.profiler: torch.profiler's API on ember (tests against real torch where it runs)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ember
import jsonschema
import pytest
from ember import dispatch, nn
from ember.errors import EmberValueError, NotInEmberError
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

HERE = Path(__file__).parent
# The Trace Event format (Chrome's "Trace Event Format" document; what Perfetto and
# chrome://tracing read): the JSON object form, the phases ember writes
TRACE_SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "traceEvents": {"type": "array", "items": {
            "type": "object",
            "required": ["ph", "name", "pid", "tid"],
            "properties": {
                "name": {"type": "string"}, "cat": {"type": "string"},
                "ph": {"enum": ["B", "E", "X", "i", "I", "C", "M", "b", "e", "n", "s", "t",
                                "f", "P", "N", "O", "D"]},
                "ts": {"type": "number", "minimum": 0},
                "dur": {"type": "number", "minimum": 0},
                "pid": {"type": ["integer", "string"]}, "tid": {"type": ["integer", "string"]},
                "s": {"enum": ["g", "p", "t"]}, "args": {"type": "object"}},
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}},
                 "then": {"required": ["ts", "dur"]}},
                {"if": {"properties": {"ph": {"enum": ["i", "I", "B", "E"]}}},
                 "then": {"required": ["ts"]}},
                {"if": {"properties": {"ph": {"const": "M"}}},
                 "then": {"properties": {"name": {"enum": [
                     "process_name", "process_labels", "process_sort_index", "thread_name",
                     "thread_sort_index"]}}, "required": ["args"]}}]}}},
}


def _opencl() -> bool:
    return ember.plugins.device_count("opencl") > 0


def _check_trace(path, device):
    data = json.loads(Path(path).read_text())
    jsonschema.validate(data, TRACE_SCHEMA)
    rows = [e for e in data["traceEvents"] if e["ph"] == "X"]
    ops = [e for e in rows if e["cat"] == "cpu_op" and e["args"].get("device") == device]
    # OpenCL runs linear as matmul and add, relu fused: the op names differ by device
    assert {"linear", "relu"} <= {e["name"] for e in ops} or "matmul" in {
        e["name"] for e in ops}
    assert any("Input Dims" in e["args"] for e in ops)
    auto = [e for e in rows if e["name"].startswith("autograd::engine::evaluate_function: ")]
    assert any(e["args"]["forward op"] in ("linear", "matmul") for e in auto)
    assert any(e["name"].startswith("enumerate(DataLoader)#") for e in rows)
    assert {e["name"] for e in rows if e["name"].startswith("ProfilerStep#")} == {
        "ProfilerStep#2", "ProfilerStep#3"}          # schedule(wait=1, warmup=1, active=2)
    assert any(e["name"] == "train_step" for e in rows)
    assert any(e["ph"] == "i" and e["name"] == "[memory]" for e in data["traceEvents"])
    return data, rows


@pytest.mark.parametrize("device", ["cpu", "opencl:0"])
def test_torch_program_runs_unchanged_under_the_alias(tmp_path, device):
    if device != "cpu" and not _opencl():
        pytest.skip("no OpenCL device")
    trace = tmp_path / "trace.json"
    out = subprocess.run([sys.executable, "-m", "ember.torch_alias",
                          str(HERE / "torch_program.py"), str(trace), device],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert "Self CPU time total" in out.stdout and "Input Shapes" in out.stdout
    data, rows = _check_trace(trace, device)
    if device != "cpu":
        kernels = [e for e in rows if e["cat"] == "kernel"]
        assert kernels and all(e["args"]["device"] == device for e in kernels)
        assert all(e["args"]["end"] >= e["args"]["start"] >= e["args"]["queued"]
                   for e in kernels)
        names = {e["args"]["name"] for e in data["traceEvents"] if e["ph"] == "M"}
        assert device in names                      # the device's own row in the trace
        assert "Self Device time total" in out.stdout


@pytest.mark.filterwarnings("ignore::UserWarning")     # torch warns about warmup=0
def test_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    for kw in [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=2),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3)]:
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(24)] == [theirs(i).name for i in range(24)], kw
    with pytest.raises(EmberValueError, match="active must be >= 1"):
        schedule(wait=0, warmup=0, active=0)


def test_ops_autograd_and_averages_in_process():
    x = ember.randn(4, 3, requires_grad=True)
    lin = nn.Linear(3, 2)
    with profile(record_shapes=True) as prof:
        with record_function("fwd"):
            y = lin(x).relu().sum()
        y.backward()
    ka = prof.key_averages()
    keys = {e.key: e for e in ka}
    assert keys["linear"].count == 1 and keys["fwd"].cpu_time_total >= \
        keys["linear"].cpu_time_total
    node = next(e for e in prof.events() if e.name.endswith("LinearBackward0"))
    # its backward ops (linear's rule is lazy: the engine computes them after apply)
    assert node.args["forward op"] == "linear"
    assert {"matmul"} <= {c.name for c in node.cpu_children}
    shaped = prof.key_averages(group_by_input_shape=True)
    assert [4, 3] in next(e for e in shaped if e.key == "linear").input_shapes
    table = ka.table(sort_by="self_cpu_time_total", row_limit=3)
    assert table.count("\n") == 3 + 3 + 2           # header, 3 rows, rule, total
    with pytest.raises(EmberValueError, match="sort_by='cpu_tim' is not a column"):
        ka.table(sort_by="cpu_tim")


def test_rows_grouped_by_stack_show_their_source_location():
    def model_step(x):
        return (x * 2).sum()

    with profile(with_stack=True) as prof:
        model_step(ember.randn(3))
    grouped = prof.key_averages(group_by_stack_n=2)
    row = next(e for e in grouped if e.key == "mul")
    assert row.stack and any("model_step" in f for f in row.stack), row.stack
    lines = grouped.table(max_src_column_width=30).splitlines()
    header = next(line for line in lines if "Name" in line)
    assert header.rstrip().endswith("Source Location")
    at = header.index("Source Location")
    mul = next(i for i, line in enumerate(lines) if line.startswith("mul "))
    frames = [lines[mul][at:].rstrip()] + [line[at:].rstrip() for line in
                                          lines[mul + 1:mul + len(row.stack)]]
    assert len(frames) == len(row.stack) and all(len(f) <= 30 for f in frames)
    assert frames[0] == (row.stack[0] if len(row.stack[0]) <= 30 else
                         row.stack[0][:27] + "...")
    assert "Source Location" not in prof.key_averages().table()   # not grouped by stack


def test_off_leaves_nothing_installed():
    from ember.autograd.node import Node
    from ember.utils.data import dataloader
    before = (Node.__dict__["apply"], dataloader._SingleProcessIter.__dict__["__next__"])
    with profile():
        assert dispatch._profile is not None
        assert Node.__dict__["apply"] is not before[0]
    assert dispatch._profile is None
    assert (Node.__dict__["apply"], dataloader._SingleProcessIter.__dict__["__next__"]) == \
        before
    with record_function("nothing records"):             # no profile: a no-op
        ember.ones(2) + 1


def test_refusals():
    with pytest.raises(NotInEmberError, match="with_flops"):
        profile(with_flops=True)
    with profile() as prof:
        ember.ones(2) + 1
    with pytest.raises(EmberValueError, match="record_shapes=True"):
        prof.key_averages(group_by_input_shape=True)
    with profile():
        with pytest.raises(ember.EmberError, match="do not nest"):
            profile().start()


def test_tensorboard_handler_writes_a_trace(tmp_path):
    from ember.profiler import tensorboard_trace_handler
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), "w")) as prof:
        for _ in range(3):
            ember.ones(3).exp()
            prof.step()
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json")
                                   for f in files)
    jsonschema.validate(json.loads((tmp_path / files[0]).read_text()), TRACE_SCHEMA)
    assert ProfilerAction.RECORD_AND_SAVE.value == 3 and ProfilerActivity.CPU.value == 0


def test_compiled_step_is_one_row_with_its_kernels_under_it():
    lin = nn.Linear(8, 8)
    step = ember.compile(lambda x: lin(x).relu().sum())
    x = ember.randn(4, 8)
    for _ in range(3):
        step(x)
    replay = next(iter(step._entries.values())).replay
    kernels = {var: replay.__globals__[var] for var, _, _ in replay.steps}
    with profile() as prof:
        out = step(x)
    row = next(e for e in prof.events() if e.kind == "compiled")
    assert row.name.startswith("CompiledFunction: ")
    assert [c.name for c in row.cpu_children] == ["linear", "relu", "sum"]
    assert all(c.kernel == "ember.compile replay" for c in row.cpu_children)
    # afterwards the replay calls its kernels directly again, with the same result
    assert {var: replay.__globals__[var] for var in kernels} == kernels
    assert float(step(x)) == float(out)


def test_acc_events_and_the_legacy_module_name():
    from ember import torch_alias
    with profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=2),
                 acc_events=True) as prof:
        for _ in range(3):
            ember.ones(3).exp()
            prof.step()
    assert prof.key_averages().table().count("\n") > 0
    assert next(e for e in prof.key_averages() if e.key == "exp").count == 2   # both cycles
    assert torch_alias.resolve("torch.autograd.profiler") is ember.profiler
