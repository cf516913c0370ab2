"""Broken caches never break OpenCL (issue 20): ember's tuning file, PoCL's and PyOpenCL's."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import ember
import pytest

HOSTILE = {
    "deep JSON": "[" * 100_000 + "]" * 100_000,
    "a list as the choice": '{"KEY": {"matmul": {"choice": ["tiled"], "times": {}}}}',
    "a time of 10**400": '{"KEY": {"matmul": {"choice": "tiled", "times": {"tiled": 1'
                         + "0" * 400 + "}}}}",
    "times a list": '{"KEY": {"matmul": {"choice": "tiled", "times": [1]}}}',
    "not UTF-8": b"\xff\xfe{",
    "2 MB of spaces": " " * (2 << 20) + "{}",
}


@pytest.fixture
def device(opencl_device):
    backend = ember.device(opencl_device).concrete().backend
    return backend._devices()[0][1]


@pytest.mark.parametrize("case", [*HOSTILE, "/dev/zero", "a FIFO", "a folder"])
def test_a_bad_tuning_file_only_means_timing_again(device, tmp_path, monkeypatch, case):
    from ember.backends.opencl import linalg, tuning
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    path = tmp_path / tuning.FILE
    if case == "/dev/zero":
        os.symlink("/dev/zero", path)
    elif case == "a FIFO":
        os.mkfifo(path)                       # reading it would wait for a writer forever
    elif case == "a folder":
        path.mkdir()
    else:
        content = HOSTILE[case]
        if isinstance(content, str):
            content = content.replace("KEY", tuning.device_key(device).replace('"', '\\"'))
            content = content.encode()
        path.write_bytes(content)
    # nothing raises; an entry whose times are unusable keeps its choice without them
    assert tuning.load(device, "matmul", linalg.VARIANTS) in (None, ("tiled", {}))
    tuning.store(device, "matmul", "tiled", {"tiled": 0.5})
    if case != "a folder":                    # replaced whole by a good file
        assert tuning.load(device, "matmul", linalg.VARIANTS) == ("tiled", {"tiled": 0.5})


def test_an_opencl_matmul_with_a_hostile_tuning_file(opencl_device, tmp_path, monkeypatch):
    from ember.backends.opencl import tuning
    from ember.backends.opencl.runtime import Runtime
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_OPENCL_TUNE_AFTER", "0")       # timed at the first product
    (tmp_path / tuning.FILE).write_text(HOSTILE["deep JSON"])
    backend = ember.device(opencl_device).concrete().backend
    rt = Runtime(0, backend._devices()[0][1])        # as a new process would have it
    from ember import dtypes as D
    from ember.backends.opencl import linalg
    a = rt.from_host(ember.ones(96, 96).numpy(), D.float32)   # large enough to be tuned
    assert rt.to_host(linalg.matmul(a, a)).sum() == 96**3
    assert rt.choices["matmul_source"] == "timed"


_FIRST_OP = textwrap.dedent("""
    import ember
    print((ember.ones(4, 4, device="opencl:0") @ ember.ones(4, 4, device="opencl:0"))
          .sum().item())
""")


def _first_op(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "default", "-c", _FIRST_OP],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


@pytest.fixture(scope="module")
def filled_caches(tmp_path_factory):
    """PoCL and PyOpenCL caches filled by a real first op, in a folder of this test."""
    root = tmp_path_factory.mktemp("caches")
    done = _first_op({"POCL_CACHE_DIR": str(root / "pocl"), "XDG_CACHE_HOME": str(root)})
    if done.returncode != 0 or done.stdout.strip() != "64.0":
        pytest.skip(f"OpenCL did not run here: {done.stderr[-500:]}")
    return root


def test_unwritable_cache_folders_fall_back_with_a_warning(filled_caches, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = _first_op({"XDG_CACHE_HOME": str(blocker / "cache"), "HOME": str(blocker),
                      "POCL_CACHE_DIR": ""})
    assert done.returncode == 0 and done.stdout.strip() == "64.0", done.stderr
    assert "PoCL's kernel cache" in done.stderr and "cannot be written" in done.stderr
    assert "PyOpenCL's cache is off" in done.stderr


def test_a_corrupted_pyopencl_cache_is_bypassed_and_diagnosed(filled_caches, tmp_path,
                                                               monkeypatch):
    xdg = tmp_path / "xdg"
    shutil.copytree(filled_caches / "pytools", xdg / "pytools")
    (database,) = (xdg / "pytools").glob("pdict-*.sqlite")
    database.write_bytes(b"x" * 100 + database.read_bytes()[100:])
    done = _first_op({"XDG_CACHE_HOME": str(xdg),
                      "POCL_CACHE_DIR": str(filled_caches / "pocl")})
    assert done.returncode == 0 and done.stdout.strip() == "64.0", done.stderr
    assert f"rm -f {database}" in done.stderr
    from ember.backends.opencl import caches
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("POCL_CACHE_DIR", str(filled_caches / "pocl"))
    found = {f["reference"]: f for f in caches.check()}
    assert found["opencl-pyopencl-cache-corrupt"]["fix"] == f"rm -f {database}*"
    assert found["opencl-pocl-cache"]["severity"] == "ok"


def test_truncated_pocl_kernels_are_diagnosed(filled_caches, tmp_path, monkeypatch):
    from ember.backends.opencl import caches
    pocl = tmp_path / "pocl"
    shutil.copytree(filled_caches / "pocl", pocl)
    kernels = sorted(p for p in pocl.rglob("*") if p.suffix in (".so", ".bc"))
    assert {p.suffix for p in kernels} == {".so", ".bc"}
    monkeypatch.setenv("POCL_CACHE_DIR", str(pocl))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert [f["severity"] for f in caches.check()] == ["ok"]
    broken = [next(p for p in kernels if p.suffix == s) for s in (".so", ".bc")]
    for p in broken:                     # cut in half, magic bytes intact
        p.write_bytes(p.read_bytes()[:p.stat().st_size // 2])
    (finding,) = caches.check()
    assert finding["reference"] == "opencl-pocl-cache-corrupt"
    assert finding["fix"].startswith(f"rm -rf {pocl}") and "2 truncated" in finding["message"]


def test_a_large_pocl_cache_is_checked_newest_first_within_a_budget(filled_caches, tmp_path,
                                                                  monkeypatch):
    # a years-old cache (73,000 files, 1.8 GB here) took the check 22 s, past the doctor's
    # 5-s limit: the newest programs are checked first and the finding says how many
    from ember.backends.opencl import caches
    pocl = tmp_path / "pocl"
    shutil.copytree(filled_caches / "pocl", pocl)
    programs = sorted({p.parents[len(p.relative_to(pocl).parts) - 3]
                       for p in pocl.rglob("*") if p.suffix in (".so", ".bc")})
    assert len(programs) >= 2
    old, new = programs[0], programs[1]
    os.utime(old, (1_000_000, 1_000_000))
    os.utime(new, (2_000_000_000, 2_000_000_000))
    monkeypatch.setenv("POCL_CACHE_DIR", str(pocl))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(caches, "MAX_SCANNED", 1)        # room for one program's kernels
    kernel = next(p for p in old.rglob("*") if p.suffix in (".so", ".bc"))
    kernel.write_bytes(kernel.read_bytes()[:kernel.stat().st_size // 2])
    (finding,) = caches.check()                          # the old program is not reached
    assert finding["severity"] == "ok", finding
    assert f"of the newest 1 of {len(programs)} programs" in finding["seen"]
    kernel = next(p for p in new.rglob("*") if p.suffix in (".so", ".bc"))
    kernel.write_bytes(kernel.read_bytes()[:kernel.stat().st_size // 2])
    (finding,) = caches.check()                          # the newest is checked first
    assert finding["reference"] == "opencl-pocl-cache-corrupt" and str(kernel) in finding["seen"]


def test_the_doctor_reports_cache_findings_as_json(filled_caches, tmp_path):
    pocl = tmp_path / "pocl"
    shutil.copytree(filled_caches / "pocl", pocl)
    bitcode = next(pocl.rglob("program.bc"))
    bitcode.write_bytes(bitcode.read_bytes()[:64])    # PoCL aborts on this one
    done = subprocess.run([sys.executable, "-m", "ember.tools.cli", "doctor", "--json",
                           "--no-smoke", "--device", "opencl"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "POCL_CACHE_DIR": str(pocl),
                                            "XDG_CACHE_HOME": str(filled_caches)})
    assert done.returncode == 2, done.stderr
    found = {f["reference"]: f for f in json.loads(done.stdout)["findings"]}
    assert str(bitcode) in found["opencl-pocl-cache-corrupt"]["seen"]


def test_the_cli_keeps_pocl_s_kernel_cache_on_outside_the_doctor(opencl_device, tmp_path):
    # every CLI command used to import the doctor's module to build its parser, and that
    # import alone turned PoCL's kernel cache off: `ember demo` on OpenCL compiled every
    # kernel again in each run (a 15 s first epoch instead of 1.7 s)
    code = textwrap.dedent("""
        import os, sys
        from ember.tools import cli, doctor
        cli.build_parser()                  # imports every subcommand's module
        import ember
        print((ember.ones(64, device="opencl:0") * 2).sum().item(),
              os.environ.get("POCL_KERNEL_CACHE"))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "POCL_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["128.0", "None"]
    assert any(p.is_file() for p in tmp_path.rglob("*")), "PoCL cached nothing"
