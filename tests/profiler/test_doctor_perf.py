"""`ember doctor perf` on prepared slow programs: it names the cause with its measured
share and a fix; on a well-tuned program it finds nothing.  (The figures of the fixes
applied are in the branch's note: each script takes --fixed.)"""
from __future__ import annotations

import gc
import json
from pathlib import Path

import ember
import pytest
from ember.tools import cli
from ember.tools.perf import profile_script

SCRIPTS = Path(__file__).parent / "scripts"

# In a pytest-xdist worker another test may already have loaded OpenCL: the scripts'
# set_num_threads then also warns that PoCL keeps its thread count (BLAS's, which these
# checks measure, still changes)
pytestmark = pytest.mark.filterwarnings("ignore:ember.set_num_threads.*keeps its:UserWarning")


@pytest.fixture(autouse=True)
def _threads_back():
    from ember import settings
    before = dict(settings._state)
    n = settings.get_num_threads()
    yield
    ember.set_num_threads(n)
    settings._state.update(before)


@pytest.mark.parametrize("script, check, fix", [
    ("dataloader_bound.py", "dataloader", "num_workers="),
    ("small_ops.py", "host-bound", "ember.compile"),
    ("oversubscribed.py", "threads", "ember.set_num_threads("),
    ("autocast_cpu.py", "autocast-cpu", "float32"),
])
def test_names_the_cause(script, check, fix, monkeypatch):
    monkeypatch.setenv("STEPS", "8")
    steps = 1 if script == "oversubscribed.py" else 3       # its steps are slow on purpose
    # a worker that ran thousands of tests holds a large heap: a full garbage collection
    # inside a measured step (100+ ms) is no cause of the script's and shrank the autocast
    # share to 14.8% in one CI run (92% otherwise); the heap so far is set aside first
    gc.collect()
    gc.freeze()
    try:
        report = profile_script(str(SCRIPTS / script), steps=steps, warmup=1)
    finally:
        gc.unfreeze()
    assert report.findings, str(report)
    # host-bound's share is the step's time outside kernels: when the other xdist worker
    # starves this process of CPU (a 2-core machine), that share swells (one CI run: 6.5 ms
    # of "dispatch" per op, 81%) and can outrank the real cause; the cause must then come
    # right after it (its own share shrinks with it: 17% in that run, 86% on a quiet machine)
    ranked = [f for f in report.findings if f.check != "host-bound" or check == "host-bound"]
    top = ranked[0] if ranked else report.findings[0]
    assert top.check == check and fix in top.fix, str(report)
    assert 0.15 < top.share <= 1.0 and "%" in top.measured and top.expected_gain


def test_well_tuned_reports_nothing(monkeypatch, capsys):
    monkeypatch.setenv("STEPS", "6")
    code = cli.main(["doctor", "perf", "--json", "--steps", "2", "--warmup", "1",
                     str(SCRIPTS / "tuned.py")])
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{"):])
    assert code == 0 and report["findings"] == [], report["findings"]
    assert report["schema"] == "ember-doctor-perf/1" and report["top_ops"]


def test_unknown_topic_missing_or_failing_program(capsys, tmp_path):
    assert cli.main(["doctor", "perfume"]) == 2
    assert "unknown topic" in capsys.readouterr().err
    assert cli.main(["doctor", "perf", "no_such_program.py"]) == 2
    bad = tmp_path / "bad.py"
    bad.write_text("import ember\nember.ones(2) @ ember.ones(3)\n")
    assert cli.main(["doctor", "perf", str(bad)]) == 2
    assert "bad.py raised ShapeError" in capsys.readouterr().err
    from ember import dispatch
    assert dispatch._profile is None              # the profile stopped with the program


def test_diagnose_a_function_in_code():
    from ember import nn
    from ember.profiler import diagnose
    layers = [nn.Linear(2, 2) for _ in range(10)]
    x = ember.randn(1, 2)

    def step():                      # a training step of tiny ops: dispatch dominates
        h = x
        for layer in layers:
            h = layer(h).tanh() * 0.5 + h
        h.square().mean().backward()

    report = diagnose(step, steps=3, warmup=1)
    assert [f.check for f in report.findings] == ["host-bound"], str(report)
    assert report.summary["ops_per_step"] >= 20 and report.steps == 3
    json.dumps(report.to_dict())                      # --json's data
    with pytest.raises(ember.EmberError, match="expected a finished"):
        diagnose(42)


@pytest.mark.parametrize("slow", ["fetch", "collate"])
def test_dataloader_finding_splits_fetching_from_collation(slow):
    """The DataLoader row knows how much of the loading was collate_fn: the fix says what
    to change in the loader besides workers (a batched dataset, or cheaper collation)."""
    import time

    from ember.profiler import diagnose
    from ember.utils.data import DataLoader, Dataset, default_collate

    class Data(Dataset):
        def __len__(self):
            return 10_000

        def __getitem__(self, i):
            if slow == "fetch":
                time.sleep(0.002)
            return ember.ones(4)

    def collate(batch):
        if slow == "collate":
            time.sleep(0.02)
        return default_collate(batch)

    it = iter(DataLoader(Data(), batch_size=8, collate_fn=collate))
    model = ember.nn.Linear(4, 1)

    def step():
        model(next(it)).sum().backward()

    report = diagnose(step, steps=3, warmup=1)
    found = [f for f in report.findings if f.check == "dataloader"]
    assert found, str(report)
    f = found[0]
    assert "collate_fn took" in f.measured and f.figures["collate_ms_per_step"] >= 0
    if slow == "collate":
        assert f.figures["collate_ms_per_step"] > 10 and "collation is most" in f.fix
    else:
        assert f.figures["collate_ms_per_step"] < 8 and "__getitems__" in f.fix
