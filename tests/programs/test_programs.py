"""Programs of the corpus (benchmarks/programs) run unchanged on ember and their loss curves
agree with PyTorch's, through the harness of benchmarks/programs.py (a subprocess per run).

A fast subset: each pair of runs takes a few seconds, most of it importing PyTorch; the
whole corpus is `python benchmarks/programs.py`."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
FAST = ("regression", "micrograd_test_engine", "zero_to_hero_mlp", "word_language_model_lstm",
        "mingpt_sort", "gcn")


def _harness():
    spec = importlib.util.spec_from_file_location("programs_harness",
                                                  ROOT / "benchmarks" / "programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness():
    return _harness()


@pytest.mark.parametrize("name", FAST)
def test_program_runs_unchanged_and_agrees(name, harness, tmp_path):
    (path,) = harness.programs([name])
    result = harness.run_one(path, timeout=240, workdir=tmp_path)
    assert not result["torch"].get("error"), result["torch"]
    assert not result["ember"].get("error"), (result["ember"]["error"],
                                               result["ember"].get("where"))
    assert not result["ember"].get("diverged"), result["ember"]["diverged"]
    assert result["torch"]["losses"], "the program computed no loss"
    assert result["agreement"] is not None and result["agreement"] <= harness.TARGET, result


def test_every_program_names_its_source_and_licence(harness):
    for path in harness.programs():
        fields = harness.header(path)
        assert fields.get("source", "").startswith("https://github.com/"), path.name
        assert "reimplementation" in path.read_text()[:1500], path.name
        assert fields.get("licence") and fields.get("compare") in ("losses", "none"), path.name
