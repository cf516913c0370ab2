"""Collectors on fabricated files, the smoke subprocess, and diagnosis of fabricated reports."""
from __future__ import annotations

import io
import sys

import pytest
from ember.tools import collect, diagnose, render, smoke
from ember.tools.compat_eval import load_matrix
from ember.tools.findings import Finding

MATRIX, _ = load_matrix()
PROC_580 = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release "
            "Build  (dvs-builder@U16-I3-B03-4-3)  Tue Jul 22 02:24:05 UTC 2025\n"
            "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
PROC_535 = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 "
            "UTC 2023\n")


@pytest.mark.parametrize("text, version", [(PROC_580, "580.65.06"), (PROC_535, "535.104.05")])
def test_nvidia_driver_from_proc(tmp_path, text, version):
    proc = tmp_path / "version"
    proc.write_text(text)
    found = collect.nvidia_driver(str(proc), smi=None)
    assert found == {"found": True, "version": version, "gpu_arch": None, "origin": str(proc)}


def test_nvidia_driver_from_nvidia_smi_takes_the_oldest_gpu(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\nprintf '550.54.14, 8.6\\n550.54.14, 7.0\\n'\n")
    smi.chmod(0o755)
    found = collect.nvidia_driver(str(tmp_path / "absent"), smi=str(smi))
    assert (found["version"], found["gpu_arch"], found["origin"]) == ("550.54.14", "7.0",
                                                                      "nvidia-smi")


def test_no_nvidia_driver_says_so(tmp_path):
    found = collect.nvidia_driver(str(tmp_path / "nvidia" / "version"), smi=None)
    assert not found["found"] and found["version"] is None
    assert found["reason"].startswith("no NVIDIA driver was found")
    assert "nvidia-smi is not on PATH" in found["reason"]


def test_amd_driver_and_rocm_version(tmp_path):
    kfd, info = tmp_path / "kfd", tmp_path / "version"
    assert "no AMD GPU driver" in collect.amd_driver(str(kfd), str(info))["reason"]
    kfd.write_text("")
    info.write_text("7.0.1-38\n")
    assert collect.amd_driver(str(kfd), str(info)) == {"found": True, "version": "7.0.1",
                                                       "origin": str(info)}


def test_components_use_the_drivers_and_wheel_names(monkeypatch):
    versions = {"cupy-cuda13x": "14.1.0", "numpy": "2.3.4"}
    monkeypatch.setattr(collect, "distribution_version", versions.get)
    drivers = {"nvidia": {"found": True, "version": "575.57.08", "gpu_arch": "8.9",
                          "origin": "nvidia-smi"}, "amd": {"found": False, "version": None}}
    facts = collect.components(MATRIX, drivers)
    assert facts.components["cuda"] == "13" and facts.origins["cuda"] == "cupy-cuda13x wheel name"
    assert facts.components["cupy"] == "14.1.0"
    assert facts.components["driver"] == "575.57.08" and facts.components["gpu-arch"] == "8.9"
    assert "rocm" not in facts.components and "pyopencl" not in facts.components


def test_scrub_hides_home_but_keeps_the_python_prefix(monkeypatch):
    monkeypatch.setattr(sys, "prefix", "/home/alice/venv")
    text = 'File "/home/alice/venv/lib/x.py"; File "/home/alice/src/y.py"; /home/alicex'
    assert collect.scrub(text, "/home/alice") == (
        'File "/home/alice/venv/lib/x.py"; File "~/src/y.py"; /home/alicex')
    assert collect.scrub_all({"a": ["/home/alice/k"], "n": 3}, "/home/alice") == {
        "a": ["~/k"], "n": 3}


def test_environment_allow_list():
    env = {"EMBER_DEVICE": "cpu", "OCL_ICD_VENDORS": "/etc/OpenCL/vendors", "HOME": "/h",
           "AWS_SECRET_ACCESS_KEY": "s", "PATH": "/bin", "CUDA_VISIBLE_DEVICES": ""}
    assert collect.environment(env) == {"CUDA_VISIBLE_DEVICES": "", "EMBER_DEVICE": "cpu",
                                        "OCL_ICD_VENDORS": "/etc/OpenCL/vendors"}


def test_smoke_runs_in_a_subprocess():
    assert smoke.smoke("cpu")["status"] == "ok"
    failed = smoke.smoke("nosuchdevice:0")
    assert failed["status"] == "error" and failed["detail"]
    assert smoke.smoke("cpu", timeout=0.01)["status"] == "timeout"


def row(kind, status, **extra):
    base = {"type": kind, "status": status, "plugin": "", "distribution": "", "reason": "",
            "fix": "", "reference": "", "details": {}, "devices": [], "detail": ""}
    return {**base, **extra}


NO_DRIVERS = {"nvidia": {"found": False, "version": None, "origin": "",
                         "reason": "no NVIDIA driver was found (/proc/driver/nvidia is absent)"},
              "amd": {"found": False, "version": None, "origin": "",
                      "reason": "no AMD GPU driver was found (/dev/kfd is absent)"}}
WITH_NVIDIA = {**NO_DRIVERS, "nvidia": {"found": True, "version": "550.54.14",
                                        "origin": "nvidia-smi"}}


@pytest.mark.parametrize("backend, drivers, reference, severity", [
    (row("cpu", "ok", devices=[{"device": "cpu"}]), NO_DRIVERS, "cpu-ok", "ok"),
    (row("cpu", "unavailable", reason="NumPy broke"), NO_DRIVERS, "cpu-unavailable", "problem"),
    (row("cuda", "not installed", fix="pip install ember-cuda12"), NO_DRIVERS,
     "cuda-not-installed", "ok"),
    (row("cuda", "not installed", fix="pip install ember-cuda12"), WITH_NVIDIA,
     "cuda-not-installed", "warning"),
    (row("cuda", "unavailable", reason="no NVIDIA driver was found",
         reference="cuda-no-driver"), NO_DRIVERS, "cuda-no-driver", "warning"),
    (row("opencl", "failed", plugin="opencl", distribution="ember-opencl",
         reason="ImportError: x", detail="Traceback ..."), NO_DRIVERS, "plugin-failed",
     "problem"),
    (row("rocm", "incompatible", distribution="ember-rocm"), NO_DRIVERS,
     "plugin-api-incompatible", "problem"),
    (row("rocm", "disabled", plugin="rocm"), NO_DRIVERS, "plugin-disabled", "ok"),
])
def test_backend_findings(backend, drivers, reference, severity):
    finding = diagnose.backend_finding(backend, drivers)
    assert (finding.reference, finding.severity) == (reference, severity)
    if backend["status"] == "not installed":
        assert finding.message == "cuda: not installed: pip install ember-cuda12"
        assert finding.seen == ("NVIDIA driver 550.54.14 found" if drivers is WITH_NVIDIA
                                else NO_DRIVERS["nvidia"]["reason"])


def test_smoke_findings():
    runs = [{"device": "cpu", "status": "ok", "seconds": 0.2, "detail": "differs by 0"},
            {"device": "cuda:0", "status": "mismatch", "seconds": 1.0, "detail": "by 3.5"},
            {"device": "opencl:1", "status": "timeout", "seconds": 120, "detail": "hangs"}]
    found = diagnose.smoke_findings({"smoke": runs})
    assert [(f.reference, f.severity) for f in found] == [
        ("smoke-ok", "ok"), ("smoke-mismatch", "problem"), ("smoke-timeout", "problem")]


def test_rendered_findings_fit_80_columns():
    long = [Finding("x-problem", "problem", "word " * 40, seen="/a/very/long/path/" * 10,
                    fix="pip install " + "x" * 120, source="https://example.org/" + "p" * 90,
                    detail="Traceback:\n  File " + "q" * 150)]
    out = io.StringIO()
    with render.console(out) as console:
        render.findings_block(console, long)
        render.summary(console, long)
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) <= 80 and lines[-1].startswith("exit 2: 1 problem(s)")
    assert all(line == line.rstrip() for line in lines)


def test_rendered_commands_stay_one_command_at_80_columns():
    command = ("/opt/envs/project/bin/python -m pip uninstall -y ember-cuda12 ember-cuda13 "
               "cupy-cuda12x cupy-cuda13x")
    out = io.StringIO()
    with render.console(out) as console:
        render.findings_block(console, [Finding("x-conflict", "problem", "m",
                                                commands=[command, "pip install x"])])
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) <= 80
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("$ /opt"))
    shell = " ".join(line.strip().rstrip("\\").strip() for line in lines[start:start + 2])
    assert shell == "$ " + command and lines[start].endswith("\\")
    assert lines[start + 2].strip() == "$ pip install x"
