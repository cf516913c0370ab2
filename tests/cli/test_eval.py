"""The evaluator on assumed facts: no hardware needed."""
from __future__ import annotations

import pytest
from ember.tools import compat_eval
from ember.tools.compat_eval import Facts, MatrixError, Rule, compat_findings, load_matrix
from ember.tools.findings import Finding, exit_code

MATRIX, _ = load_matrix()


def facts(*assumed, plugins=()):
    f = Facts()
    f.assume(assumed)
    f.plugins = list(plugins)
    return f


def by_reference(findings):
    return {f.reference: f for f in findings}


def test_old_driver_for_cuda12_is_a_problem_with_minimum_and_source():
    _, findings = compat_findings(facts("cuda=12.4", "driver=470.57"), MATRIX)
    finding = by_reference(findings)["cuda12-driver-too-old"]
    assert finding.severity == "problem"
    assert "525.60.13" in finding.message and "470.57" in finding.message
    assert "docs.nvidia.com/cuda/cuda-toolkit-release-notes" in finding.source
    assert "driver 470.57 (assumed)" in finding.seen
    assert exit_code(findings) == 2


@pytest.mark.parametrize("cuda, driver, fails", [
    ("12.0", "525.60.13", False), ("12.9", "535.104.05", False), ("12.4", "525.60.12", True),
    ("13.0", "575.57.08", True), ("13.0", "580.65.06", False), ("13.1", "590.44.01", False),
])
def test_driver_floors(cuda, driver, fails):
    _, findings = compat_findings(facts(f"cuda={cuda}", f"driver={driver}"), MATRIX)
    refs = {f.reference for f in findings}
    assert bool(refs & {"cuda12-driver-too-old", "cuda13-driver-too-old"}) == fails


def test_cuda13_on_a_pascal_gpu():
    _, findings = compat_findings(facts("cuda=13.0", "driver=580.65", "gpu-arch=6.1"), MATRIX)
    assert by_reference(findings)["cuda13-gpu-arch-dropped"].severity == "problem"


def test_a_missing_fact_leaves_the_rule_unknown_not_failed():
    results, findings = compat_findings(facts("cuda=12.4"), MATRIX)
    statuses = {r.rule.id: r.status for r in results}
    assert statuses["cuda12-driver-too-old"] == "unknown"
    assert not findings
    assert {r.rule.id: r.missing for r in results}["cuda12-driver-too-old"] == ("driver",)


def test_rules_whose_when_does_not_hold_are_not_applicable():
    results, _ = compat_findings(facts("python=3.12", "numpy=2.1.3"), MATRIX)
    ids = {r.rule.id for r in results}
    assert "numpy21-python-unsupported" in ids and "numpy20-python-unsupported" not in ids
    assert all(r.status == "pass" for r in results)


@pytest.mark.parametrize("python, numpy, reference, command", [
    ("3.10.14", "2.3.0", "numpy23-python-too-old", "'numpy>=2.0,<2.3'"),
    ("3.10.14", "2.4.1", "numpy232-python-too-old", "'numpy>=2.0,<2.3'"),
    ("3.14.0", "2.3.1", "numpy23-python-too-new", "-U numpy"),
    ("3.14.0", "2.2.6", "numpy21-python-unsupported", "-U numpy"),
])
def test_numpy_and_python_mismatch_fix_points_the_right_way(python, numpy, reference, command):
    # below a NumPy line's Python window `pip install -U numpy` finds nothing newer for that
    # Python: the fix is the last NumPy that supports it
    _, findings = compat_findings(facts(f"python={python}", f"numpy={numpy}"), MATRIX)
    found = by_reference(findings)
    assert list(found) == [reference]
    assert found[reference].commands and found[reference].commands[-1].endswith(command)
    assert ("-U numpy" in found[reference].commands[-1]) == (command == "-U numpy")


def test_cupy_wheel_fixes_the_cuda_major_of_assumed_facts():
    # `--assume cupy-cuda12x=14.2.0 driver=470.82.01`: CUDA 12 follows from the wheel
    f = facts("cupy-cuda12x=14.2.0", "driver=470.82.01")
    assert f.components["cuda"] == "12" and f.origins["cuda"] == "cupy-cuda12x wheel name"
    assert f.components["cupy"] == "14.2.0"
    _, findings = compat_findings(f, MATRIX)
    assert by_reference(findings)["cuda12-driver-too-old"].severity == "problem"
    assert exit_code(findings) == 2
    exact = facts("cupy-cuda12x=14.2.0", "cuda=12.9", "driver=575.57")
    assert exact.components["cuda"] == "12.9"


def test_cupy142_supports_numpy_2_4():
    results, findings = compat_findings(facts("cupy=14.2.0", "driver=580.65", "numpy=2.4.1"),
                                        MATRIX)
    assert {r.rule.id: r.status for r in results}["cupy142-numpy-untested"] == "pass"
    assert not findings
    _, findings = compat_findings(facts("cupy=14.1.0", "driver=580.65", "numpy=2.4.1"), MATRIX)
    assert [f.reference for f in findings] == ["cupy14-numpy-untested"]


def test_blackwell_needs_cuda_12_8_and_a_570_driver():
    _, findings = compat_findings(facts("cuda=12.8", "driver=525.60.13", "gpu-arch=12.0"),
                                  MATRIX)
    assert set(by_reference(findings)) == {"blackwell-driver-too-old"}
    _, findings = compat_findings(facts("cuda=12.6", "driver=575.57", "gpu-arch=10.0"), MATRIX)
    assert set(by_reference(findings)) == {"blackwell-needs-cuda-12-8"}
    _, findings = compat_findings(facts("cuda=12.8", "driver=570.86", "gpu-arch=12.0"), MATRIX)
    assert not findings


def test_rocm_wheel_needs_rocm_7_0():
    _, findings = compat_findings(facts("cupy-rocm-7-0=14.2.0", "rocm=7.1.0"), MATRIX)
    assert "cupy-rocm-7-0-rocm-mismatch" in by_reference(findings)
    _, findings = compat_findings(facts("cupy-rocm-7-0=14.2.0", "rocm=7.0.2"), MATRIX)
    assert "cupy-rocm-7-0-rocm-mismatch" not in by_reference(findings)


def test_cupy_wheel_against_the_cuda_it_finds():
    _, findings = compat_findings(facts("cupy-cuda12x=14.0.1", "cuda=11.8"), MATRIX)
    assert "cupy-cuda12x-cuda-mismatch" in by_reference(findings)


def test_unreadable_version_is_unknown():
    results, findings = compat_findings(facts("cuda=12.4", "driver=none"), MATRIX)
    assert {r.rule.id: r.status for r in results}["cuda12-driver-too-old"] == "unknown"
    assert not findings


def test_plugin_outside_its_range_is_incompatible():
    plugin = {"name": "cuda", "distribution": "acme-cuda", "version": "0.2.0",
              "requires_ember": ">=0.2,<0.3"}
    _, findings = compat_findings(facts("ember=0.1.0", plugins=[plugin]), MATRIX)
    finding = by_reference(findings)["plugin-api-incompatible"]
    assert finding.severity == "problem" and "acme-cuda" in finding.message
    assert "plugin API 1" in finding.message and ">=0.2,<0.3" in finding.seen
    # a plugin made for a newer ember: upgrade ember, or take an older plugin (not -U it)
    assert "upgrade ember" in finding.fix and "pip install -U acme-cuda" not in finding.fix
    assert finding.commands[-1].endswith("install 'acme-cuda<0.2.0'")
    old = dict(plugin, requires_ember="<0.1")
    _, findings = compat_findings(facts("ember=0.1.0", plugins=[old]), MATRIX)
    assert by_reference(findings)["plugin-api-incompatible"].commands[-1].endswith(
        "install -U acme-cuda")
    ok = dict(plugin, requires_ember=">=0.1,<0.2")
    _, findings = compat_findings(facts("ember=0.1.0", plugins=[ok]), MATRIX)
    assert not findings


def test_first_party_plugin_version_against_ember():
    _, findings = compat_findings(facts("ember=1.0.0", "ember-opencl=0.1.3"), MATRIX)
    assert by_reference(findings)["ember-opencl-ember-mismatch"].severity == "problem"


def test_facts_from_a_report_round_trip():
    original = facts("cuda=12.4", "driver=470.57")
    again = Facts.from_report({"components": original.to_dict(), "plugins": []})
    assert again.components == original.components and again.origins["driver"] == "assumed"
    with pytest.raises(TypeError, match="components"):
        Facts.from_report({"something": "else"})


@pytest.mark.parametrize("bad", ["cuda", "=12", "cuda="])
def test_assume_needs_name_and_version(bad):
    with pytest.raises(ValueError, match="NAME=VERSION"):
        facts(bad)


def _rule(**changes):
    raw = {"id": "x-rule", "summary": "s", "require": {"driver": ">=1"}, "severity": "problem",
           "support": "declared", "source": "doc", "date": "2026-01-01", "fix": "f"}
    raw.update(changes)
    return raw


@pytest.mark.parametrize("changes, message", [
    ({"require": {"driver": ">=>1"}}, "not a version specifier"),
    ({"require": {}}, "require is empty"),
    ({"severity": "fatal"}, "severity"),
    ({"support": "maybe"}, "support"),
    ({"when": {"driver": ">=1"}}, "both when and require"),
    ({"colour": "red"}, "colour"),
])
def test_rule_parse_rejects(changes, message):
    with pytest.raises(MatrixError, match=message):
        Rule.parse(_rule(**changes))


def test_plugin_compat_data_extends_the_matrix_and_bad_data_is_left_out():
    good = {"rule": [_rule(id="acme-driver-too-old", when={"acme": "*"})]}
    bad = {"rule": [_rule(id="acme-broken", require={"driver": "at least 1"})]}
    matrix, notes = load_matrix([good, bad, ["not", "a", "dict"]])
    assert matrix.rule("acme-driver-too-old")
    assert not any(r.id == "acme-broken" for r in matrix.rules)
    assert [n.reference for n in notes] == ["plugin-compat-invalid"] * 2
    dup = {"rule": [_rule(id="cuda12-driver-too-old")]}
    _, notes = load_matrix([dup])
    assert "defined twice" in notes[0].message
    dangling = {"error": [{"id": "acme-oops", "patterns": ["oops"], "example": "oops",
                           "meaning": "m", "fix": "f", "source": "s", "rules": ["nope"]}]}
    _, notes = load_matrix([dangling])
    assert "do not exist" in notes[0].message


def test_unreadable_plugin_range_is_a_problem():
    plugin = {"distribution": "acme", "version": "1", "requires_ember": ">=>0.1"}
    _, findings = compat_findings(facts("ember=0.1.0", plugins=[plugin]), MATRIX)
    assert [f.reference for f in findings] == ["plugin-api-invalid"]


def test_explain_matches_known_errors_and_nothing_else():
    assert [e.id for e in compat_eval.explain(
        "clGetPlatformIDs failed: <unknown error -1001>", MATRIX)] == ["opencl-no-platform"]
    assert compat_eval.explain("everything is fine", MATRIX) == []


def test_finding_severity_and_exit_codes():
    with pytest.raises(ValueError, match="severity"):
        Finding("x", "fatal", "m")
    assert exit_code([]) == 0
    assert exit_code([Finding("a", "ok", "m"), Finding("b", "warning", "m")]) == 1
    assert exit_code([Finding("a", "problem", "m"), Finding("b", "warning", "m")]) == 2
    assert Finding.from_dict(Finding("a", "ok", "m", fix="f").to_dict()).fix == "f"
    with pytest.raises(ValueError, match="unknown keys"):
        Finding.from_dict({"reference": "a", "severity": "ok", "message": "m", "hint": "h"})
