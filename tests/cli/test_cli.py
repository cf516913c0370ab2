"""The `ember` CLI end to end on this machine: doctor, devices, ops, compat check/explain."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import jsonschema
import pytest
from ember import compat_matrix
from ember.tools import install
from ember.tools.cli import main
from ember.tools.compat_eval import load_matrix

MATRIX, _ = load_matrix()
NO_NVIDIA = not os.path.exists("/proc/driver/nvidia") and not any(
    os.access(os.path.join(p, "nvidia-smi"), os.X_OK)
    for p in os.environ.get("PATH", "").split(os.pathsep) if p)


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_fits_80_columns(text):
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert not wide, f"{len(wide)} line(s) wider than 80 columns, e.g. {wide[0]!r}"


def validate_report(report):
    schema = compat_matrix.schema(compat_matrix.REPORT_SCHEMA)
    jsonschema.Draft202012Validator(schema).validate(report)


def doctor_json(capsys, *argv):
    code, out, _ = run_cli(capsys, "doctor", "--json", *argv)
    report = json.loads(out)
    validate_report(report)
    assert report["exit_code"] == code
    return code, report


def rows_by_type(report):
    return {row["type"]: row for row in report["backends"]}


def test_doctor_on_this_machine(capsys):
    code, report = doctor_json(capsys)
    rows = rows_by_type(report)
    assert list(rows)[:4] == ["cpu", "opencl", "cuda", "rocm"]
    assert rows["cpu"]["status"] == "ok" and rows["cpu"]["devices"]
    assert {"device": "cpu", "status": "ok"}.items() <= report["smoke"][0].items()
    for kind, row in rows.items():
        if row["status"] == "not installed":
            # the published command, as it runs for how this ember was installed
            assert row["fix"] == install.here().localize(MATRIX.install_hint(kind))
        if row["status"] == "ok":
            assert {r["device"] for r in report["smoke"]} >= {d["device"] for d in row["devices"]}
    if rows["cuda"]["status"] == "not installed":
        assert rows["cuda"]["fix"] == install.here().localize("pip install ember-cuda12")
    finding = {f["reference"]: f for f in report["findings"]}
    if NO_NVIDIA:
        assert not report["drivers"]["nvidia"]["found"]
        assert "no NVIDIA driver was found" in report["drivers"]["nvidia"]["reason"]
        cuda = finding.get("cuda-not-installed") or next(
            f for f in report["findings"] if f["message"].startswith("cuda: unavailable"))
        assert "no NVIDIA driver was found" in cuda["seen"]
    severities = {f["severity"] for f in report["findings"]}
    assert code == (2 if "problem" in severities else 1 if "warning" in severities else 0)


def test_doctor_text_is_readable_at_80_columns(capsys):
    code, out, _ = run_cli(capsys, "doctor", "--no-smoke")
    assert_fits_80_columns(out)
    flat = " ".join(out.split())
    assert "Backends" in out and "cpu ok" in flat
    # cuda: not installed (the pip command), unavailable (the reason), or ok
    assert (install.here().localize("pip install ember-cuda12") in flat or "cuda ok" in flat
            or "cuda unavailable" in flat)
    if NO_NVIDIA:
        assert "no NVIDIA driver was found" in flat
    assert out.rstrip().splitlines()[-1].startswith(f"exit {code}:")


def test_doctor_device_filter_and_unknown_device(capsys):
    code, report = doctor_json(capsys, "--device", "cpu")
    assert [row["type"] for row in report["backends"]] == ["cpu"]
    assert [run["device"] for run in report["smoke"]] == ["cpu"]
    code, _, err = run_cli(capsys, "doctor", "--device", "tpu:0")
    assert code == 2 and "unknown device type" in err


def test_doctor_report_keeps_private_things_out(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("EMBER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    _, report = doctor_json(capsys, "--no-smoke")
    text = json.dumps(report)
    assert "hunter2" not in text and "SECRET_TOKEN" not in text
    assert report["environment"]["EMBER_CACHE"] == "~/cache"
    assert report["environment"]["CUDA_VISIBLE_DEVICES"] == "1"
    assert str(tmp_path) not in text
    assert report["python"]["prefix"] == sys.prefix


def test_plugins_broken_incompatible_and_unavailable(capsys, fake_plugins, monkeypatch):
    monkeypatch.setenv("HOME", str(fake_plugins.parent))
    code, report = doctor_json(capsys, "--no-smoke")
    assert code == 2
    plugins = {p["name"]: p for p in report["plugins"]}
    assert plugins["oldapi"]["status"] == "incompatible"
    assert plugins["oldapi"]["requires_ember"] == ">=0.2,<0.3"
    assert "acme_incompat" not in sys.modules
    assert plugins["broken"]["status"] == "failed"
    assert "libacme.so.1" in plugins["broken"]["error"]
    assert str(fake_plugins) not in json.dumps(report)          # tracebacks are scrubbed
    gadget = rows_by_type(report)["gadget"]
    assert gadget["status"] == "unavailable" and gadget["reason"] == "no gadget driver was found"
    assert report["components"]["gadget-firmware"] == {"version": "3.1",
                                                       "origin": "gadget backend"}
    found = {f["reference"]: f for f in report["findings"]}
    assert found["plugin-api-incompatible"]["severity"] == "problem"
    assert "acme-incompatible" in found["plugin-api-incompatible"]["message"]
    assert "libacme.so.1" in found["plugin-failed"]["detail"]
    assert found["gadget-no-driver"]["fix"] == "apt install gadget-driver"
    assert found["gadget-firmware-too-old"]["source"].startswith("acme manual p. 3")
    assert found["gadget-fan"]["severity"] == "warning"
    assert "sensor offline" in found["plugin-check-failed"]["message"]


def test_plugins_in_text_output_and_compat_check(capsys, fake_plugins):
    code, out, _ = run_cli(capsys, "doctor", "--no-smoke")
    assert code == 2
    assert_fits_80_columns(out)
    assert "incompatible" in out and "libacme.so.1" in out and "gadget" in out
    code, out, _ = run_cli(capsys, "compat", "check")
    assert code == 2 and "plugin-api-incompatible" in out
    assert_fits_80_columns(out)


def test_doctor_in_a_subprocess_reports_an_incompatible_plugin(fake_plugins):
    done = subprocess.run([sys.executable, "-m", "ember.tools.cli", "doctor", "--json",
                           "--device", "cpu"], capture_output=True, text=True, timeout=300,
                          check=False)
    report = json.loads(done.stdout)
    validate_report(report)
    assert done.returncode == report["exit_code"] == 2
    assert {p["name"]: p["status"] for p in report["plugins"]}["oldapi"] == "incompatible"
    assert report["smoke"][0]["status"] == "ok"


def test_compat_check_assumed_old_driver(capsys):
    code, out, _ = run_cli(capsys, "compat", "check", "--assume", "cuda=12.4",
                           "driver=470.57")
    assert code == 2
    assert_fits_80_columns(out)
    flat = " ".join(out.split())
    assert "cuda12-driver-too-old" in flat and "found driver 470.57" in flat
    assert ">= 525.60.13" in flat
    assert "docs.nvidia.com/cuda/cuda-toolkit-release-notes" in flat


def test_compat_check_good_assumed_machine(capsys):
    code, out, _ = run_cli(capsys, "compat", "check", "--no-detect", "--assume",
                           "python=3.12", "numpy=2.1", "cuda=12.4", "driver=535.104",
                           "gpu-arch=8.0")
    assert code == 0 and "0 failed" in out
    code, _, err = run_cli(capsys, "compat", "check", "--assume", "cuda")
    assert code == 2 and "NAME=VERSION" in err


def test_compat_check_from_another_machines_report(capsys, tmp_path):
    _, report = doctor_json(capsys, "--no-smoke", "--device", "cpu")
    report["components"]["cuda"] = {"version": "13.0", "origin": "cuda backend"}
    report["components"]["driver"] = {"version": "575.57.08", "origin": "nvidia-smi"}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    code, out, _ = run_cli(capsys, "compat", "check", "--from", str(path))
    flat = " ".join(out.split())
    assert code == 2 and "cuda13-driver-too-old" in flat and "(nvidia-smi)" in flat
    code, _, err = run_cli(capsys, "compat", "check", "--from", str(tmp_path / "none.json"))
    assert code == 2 and "none.json" in err


@pytest.mark.parametrize("error", MATRIX.errors, ids=lambda e: e.id)
def test_compat_explain_known_errors(capsys, error):
    code, out, _ = run_cli(capsys, "compat", "explain", error.example)
    assert code == 0 and error.id in out
    assert " ".join(error.meaning.split()[:6]) in " ".join(out.split())
    assert_fits_80_columns(out)


def test_compat_explain_unknown_and_stdin(capsys, monkeypatch):
    code, out, _ = run_cli(capsys, "compat", "explain", "all", "is", "well")
    assert code == 1 and "No known error matched" in out
    monkeypatch.setattr(sys, "stdin", io.StringIO("clGetPlatformIDs failed: -1001\n"))
    code, out, _ = run_cli(capsys, "compat", "explain", "-")
    assert code == 0 and "opencl-no-platform" in out
    code, _, err = run_cli(capsys, "compat")
    assert code == 2 and "check" in err


def test_devices(capsys):
    code, out, _ = run_cli(capsys, "devices")
    assert code == 0
    assert_fits_80_columns(out)
    assert out.splitlines()[0].split()[:3] == ["device", "name", "kind"]
    assert any(line.startswith("cpu ") for line in out.splitlines())
    code, out, _ = run_cli(capsys, "devices", "--json")
    assert rows_by_type(json.loads(out))["cpu"]["status"] == "ok"


def test_ops_coverage(capsys):
    from ember import ops
    code, out, _ = run_cli(capsys, "ops", "--device", "cpu")
    assert code == 0
    assert_fits_80_columns(out)
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    for name, op in ops.OPS.items():
        assert lines[name][0] == op.kind and lines[name][1] in ("yes", "-")
    assert f"/{len(ops.OPS)} primitives" in out
    code, out, err = run_cli(capsys, "ops", "--device", "gadget")
    assert code == 2 and "not available" in err
