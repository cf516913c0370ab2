"""The CuPy probe's decision for every failing step (injected facts), the real fact gathering
on this machine, the plugins' compat data, and the backend's lazy construction."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from ember.backends import array_api
from ember.backends.cupy import CuPyBackend, probe
from ember.backends.cupy.compat import FLAVOURS, compat_data
from ember.backends.cupy.probe import Facts, decide
from ember.errors import EmberError

NO_DRIVER = ("CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
             "insufficient for CUDA runtime version")
ONE_CUPY = (("cupy-cuda12x", "14.2.0"),)
H200 = ({"name": "NVIDIA H200", "memory": 150_000_000_000, "arch": "9.0", "gcn_arch": ""},)


def cuda_facts(**kw) -> Facts:
    """A CUDA 12.9 CuPy that imported; the test sets the step that fails."""
    base = {"distribution": "ember-cuda12", "cupy_dists": ONE_CUPY, "cupy_version": "14.2.0",
            "runtime_version": 12090}
    base.update(kw)
    return Facts(**base)


def rocm_facts(**kw) -> Facts:
    base = {"distribution": "ember-rocm", "cupy_dists": (("cupy-rocm-7-0", "14.2.0"),),
            "cupy_version": "14.2.0", "is_hip": True, "runtime_version": 70051831}
    base.update(kw)
    return Facts(**base)


# (id, facts, reference, words the reason must hold, words the fix must hold)
CASES = [
    ("not-installed", Facts(import_error="ModuleNotFoundError: No module named 'cupy'"),
     "cupy-not-installed", ["CuPy is not installed"],
     ["pip install cupy-cuda12x", "cupy-cuda13x", "cupy-rocm-7-0"]),
    ("not-installed-rocm", Facts(distribution="ember-rocm", import_error="ModuleNotFoundError"),
     "cupy-not-installed", ["CuPy is not installed", "ember-rocm"],
     ["pip install cupy-rocm-7-0"]),
    ("two-cupys", cuda_facts(cupy_dists=(("cupy-cuda12x", "14.2.0"), ("cupy-cuda13x", "14.1.0"))),
     "cupy-multiple-packages", ["more than one CuPy", "cupy-cuda12x 14.2.0", "cupy-cuda13x 14.1.0"],
     ["pip uninstall -y cupy-cuda12x cupy-cuda13x", "pip install ember-cuda12"]),
    ("two-cupys-beats-import-error",
     cuda_facts(cupy_dists=(("cupy", "14.0.0"), ("cupy-cuda12x", "14.2.0")),
                import_error="ImportError: cannot import name 'core'"),
     "cupy-multiple-packages", ["cupy 14.0.0"], ["pip uninstall -y cupy cupy-cuda12x"]),
    ("import-fails", cuda_facts(import_error="ImportError: libnvrtc.so.12: cannot open shared "
                                            "object file: No such file or directory"),
     "cupy-import-failed", ["cupy-cuda12x 14.2.0", "libnvrtc.so.12"],
     ["pip install --force-reinstall cupy-cuda12x"]),
    ("query-hung", cuda_facts(query_error="importing CuPy ... took more than 60 s"),
     "cuda-query-failed", ["did not complete", "60 s"], ["nvidia-smi"]),
    ("rocm-cupy-under-cuda-plugin",
     cuda_facts(is_hip=True, cupy_dists=(("cupy-rocm-7-0", "14.2.0"),)),
     "cuda-cupy-build-mismatch", ["cupy-rocm-7-0", "AMD GPUs", "ember-cuda12"],
     ["pip install ember-rocm", "pip install cupy-cuda12x"]),
    ("cuda-cupy-under-rocm-plugin", rocm_facts(is_hip=False, cupy_dists=ONE_CUPY),
     "rocm-cupy-build-mismatch", ["cupy-cuda12x", "NVIDIA GPUs", "ember-rocm"],
     ["pip install ember-cuda12", "pip install cupy-rocm-7-0"]),
    ("no-driver", cuda_facts(device_error=NO_DRIVER),
     "cuda-no-driver", ["no NVIDIA driver was found", "/proc/driver/nvidia",
                        "cudaErrorInsufficientDriver"], ["525.60.13", "--gpus all"]),
    ("kernel-module-without-libcuda", cuda_facts(device_error=NO_DRIVER, driver_files=True,
                                                  driver_release="550.54.14"),
     "cuda-libcuda-missing", ["libcuda.so"], ["550.54.14"]),
    ("driver-too-old", Facts(distribution="ember-cuda13", cupy_dists=(("cupy-cuda13x", "14.2.0"),),
                             cupy_version="14.2.0", runtime_version=13000, driver_version=12020,
                             driver_release="535.104.05", driver_files=True,
                             device_error=NO_DRIVER),
     "cuda-driver-too-old", ["too old", "12.2", "13.0", "535.104.05", "cupy-cuda13x 14.2.0"],
     ["580", "pip install ember-cuda12"]),
    ("driver-older-major-no-error-text", cuda_facts(runtime_version=12090, driver_version=11080,
                                                    driver_files=True, device_error="boom"),
     "cuda-driver-too-old", ["11.8", "12.9", ">= 525.60.13"], ["525.60.13"]),
    ("no-device", cuda_facts(driver_version=12040, driver_files=True, driver_release="550.54.14",
                             device_error="CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable "
                                          "device is detected",
                             visible_devices="CUDA_VISIBLE_DEVICES=''"),
     "cuda-no-device", ["no NVIDIA GPU is visible", "550.54.14", "CUDA_VISIBLE_DEVICES=''"],
     ["nvidia-smi", "CUDA_VISIBLE_DEVICES"]),
    ("zero-devices", cuda_facts(driver_version=12040, driver_files=True, device_count=0),
     "cuda-no-device", ["no NVIDIA GPU is visible", "12.4"], ["nvidia-smi"]),
    ("unknown-device-error",
     cuda_facts(driver_version=12040, driver_files=True,
                device_error="CUDARuntimeError: cudaErrorDevicesUnavailable: CUDA-capable "
                             "device(s) is/are busy"),
     "cuda-device-query-failed", ["cudaErrorDevicesUnavailable"], ["ember compat explain"]),
    ("rocm-no-driver", rocm_facts(device_error="hipErrorNoDevice"),
     "rocm-no-driver", ["no AMD GPU driver", "/dev/kfd"], ["--device=/dev/kfd"]),
    ("rocm-no-device", rocm_facts(driver_files=True, device_error="hipErrorNoDevice: no ROCm"),
     "rocm-no-device", ["no AMD GPU is usable", "hipErrorNoDevice"], ["render,video"]),
]


@pytest.mark.parametrize("facts, reference, reason_words, fix_words",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_decide_names_the_first_failing_step(facts, reference, reason_words, fix_words):
    result = decide(facts)
    assert not result.available
    assert result.reference == reference
    for word in reason_words:
        assert word in result.reason
    for word in fix_words:
        assert word in result.fix


def test_decide_available_reports_versions_as_matrix_components():
    result = decide(cuda_facts(driver_version=12080, driver_files=True,
                               driver_release="570.86.15", device_count=1, devices=H200))
    assert result.available and not result.reason
    assert result.details["cuda"] == "12.9"
    assert result.details["driver"] == "570.86.15"
    assert result.details["gpu-arch"] == "9.0"
    assert result.details["cupy"] == "14.2.0"


def test_decide_rocm_available():
    mi300 = ({"name": "AMD Instinct MI300X", "memory": 1, "arch": "9.4", "gcn_arch": "gfx942"},)
    result = decide(rocm_facts(driver_files=True, device_count=1, devices=mi300))
    assert result.available
    assert result.details["rocm"] == "7.0" and result.details["gfx"] == "gfx942"
    assert "cuda" not in result.details and "gpu-arch" not in result.details


NO_NVRTC = {"cuda_root": "/usr/local/cuda", "local_runtime_version": 13000,
            "build_version": 12090, "libraries": {
                "nvrtc": {"available": False, "error": 'DynamicLibNotFoundError: Failure '
                          'finding "libnvrtc.so.13 or libnvrtc.so.12": No such file'},
                "cublas": {"available": True, "path": "/x/libcublas.so.12"}}}


def test_decide_without_nvrtc_says_kernels_cannot_compile():
    # the GPU answers, but every CuPy kernel is compiled by NVRTC: it cannot run
    result = decide(cuda_facts(driver_version=12080, driver_files=True, device_count=1,
                               devices=H200, toolkit=NO_NVRTC))
    assert not result.available and result.reference == "cuda-nvrtc-missing"
    assert "libnvrtc.so.12" in result.reason and "cupy-cuda12x[ctk]" in result.fix
    toolkit = result.details["toolkit"]
    assert (toolkit["runtime"], toolkit["local_runtime"]) == ("12.9", "13.0")
    assert toolkit["libraries"]["nvrtc"]["available"] is False
    assert toolkit["libraries"]["cublas"] == {"available": True, "path": "/x/libcublas.so.12"}


def test_two_cupys_are_removed_with_the_plugins_that_bring_them():
    facts = cuda_facts(cupy_dists=(("cupy-cuda12x", "14.2.0"), ("cupy-cuda13x", "14.1.0")),
                       plugins=("ember-cuda12", "ember-cuda13"))
    result = decide(facts)
    assert result.fix == ("pip uninstall -y ember-cuda12 ember-cuda13 cupy-cuda12x "
                          "cupy-cuda13x && pip install ember-cuda12")


def test_query_timeout_comes_from_ember_probe_timeout(monkeypatch):
    monkeypatch.setenv("EMBER_PROBE_TIMEOUT", "2.5")
    assert probe.query_timeout() == 2.5
    for bad in ("soon", "0", "-1"):
        monkeypatch.setenv("EMBER_PROBE_TIMEOUT", bad)
        assert probe.query_timeout() == probe.QUERY_TIMEOUT_S


@pytest.mark.parametrize("version, hip, text", [(12090, False, "12.9"), (13000, False, "13.0"),
                                                (12040, False, "12.4"), (70051831, True, "7.0"),
                                                (60243000, True, "6.2"), (0, False, "")])
def test_runtime_text(version, hip, text):
    assert probe.runtime_text(version, hip) == text


# -- the real machine --------------------------------------------------------------------

def expected_reference() -> str | None:
    """What this machine should say, from observations independent of the probe's code."""
    if importlib.util.find_spec("cupy") is None:
        return "cupy-not-installed"
    if not os.path.isdir("/proc/driver/nvidia"):
        return "cuda-no-driver"
    return None      # a machine with an NVIDIA driver: the GPU tests say more


def test_gather_on_this_machine_matches_what_is_here():
    facts = probe.gather("ember-cuda12")
    assert bool(facts.import_error) == (importlib.util.find_spec("cupy") is None)
    assert facts.driver_files == os.path.isdir("/proc/driver/nvidia")
    expected = expected_reference()
    if expected is None:
        pytest.skip("this machine has an NVIDIA driver; tests/plugins/test_cupy_gpu.py covers it")
    assert decide(facts).reference == expected


def test_query_times_out_instead_of_hanging(monkeypatch):
    # a real child process given less time than Python needs to start (and no facts kept
    # on disk by an earlier process to answer instead)
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    facts = probe.query(timeout=0.001)
    assert "took more than" in facts["query_error"]
    assert decide(cuda_facts(**facts)).reference == "cuda-query-failed"


def _count_query_children(monkeypatch) -> list:
    """The list each CuPy query child's command line is appended to as it starts."""
    children = []
    real = subprocess.run

    def counted(args, *a, **k):
        if probe._QUERY_SCRIPT in args:
            children.append(args)
        return real(args, *a, **k)
    monkeypatch.setattr(probe.subprocess, "run", counted)
    return children


def test_one_query_child_per_process_until_its_inputs_change(monkeypatch):
    """Each CuPy flavour's backend and the doctor's NCCL check ask the same question: one
    child answers them all (each child imports CuPy, ~2 s); a changed variable CuPy reads
    asks again."""
    children = _count_query_children(monkeypatch)
    monkeypatch.setattr(probe, "_QUERIES", {})
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")          # this process's memo alone
    first = probe.query(timeout=120)
    assert probe.query(timeout=120) == first and len(children) == 1
    probe.gather("ember-cuda12", timeout=120)
    probe.gather("ember-cuda13", timeout=120)
    assert len(children) == 1      # the memo, or no child at all where no CuPy is installed
    monkeypatch.setenv("CUPY_CACHE_DIR", "/nonexistent-ember-test")
    probe.query(timeout=120)
    assert len(children) == 2


def test_a_later_process_reuses_the_facts_until_an_input_changes(monkeypatch, tmp_path):
    """A new process (an empty memo) with the same inputs reads the facts a child found
    (`ember devices`/`ember doctor` each imported CuPy in a child again: ~2 s); a changed
    input, an expired entry or a failed query asks a child; a hostile file is ignored."""
    if importlib.util.find_spec("cupy") is None:
        pytest.skip("no CuPy installed: gather() needs no child here")
    children = _count_query_children(monkeypatch)
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))

    def new_process():
        monkeypatch.setattr(probe, "_QUERIES", {})
    new_process()
    first = probe.query(timeout=120)
    assert len(children) == 1 and "query_error" not in first
    assert (tmp_path / probe.DISK_FILE).is_file()
    new_process()
    assert probe.query(timeout=120) == first and len(children) == 1     # from the file
    new_process()
    monkeypatch.setenv("CUPY_CACHE_DIR", "/nonexistent-ember-test")      # an input changed
    assert probe.query(timeout=120) == first and len(children) == 2
    monkeypatch.delenv("CUPY_CACHE_DIR")
    key = probe._inputs()
    assert probe._disk_read(key) == first
    monkeypatch.setattr(probe, "DISK_TTL_S", 0.0)                          # expired
    assert probe._disk_read(key) is None
    monkeypatch.setattr(probe, "DISK_TTL_S", 3600.0)
    # a failed query is never kept: the next process asks again
    (tmp_path / probe.DISK_FILE).unlink()
    new_process()
    assert "took more than" in probe.query(timeout=0.001)["query_error"]
    assert not (tmp_path / probe.DISK_FILE).exists()
    # a foreign or hostile file reads as no facts (the next query asks a child)
    junk = {"k": {"time": "x", "facts": 1}, key: {"time": 1e300, "facts": first}}
    for data in (b"[1, 2]", b"{" * 100_000, json.dumps(junk).encode(), b"\xff\xfe"):
        (tmp_path / probe.DISK_FILE).write_bytes(data)
        assert probe._disk_read(key) is None
    (tmp_path / probe.DISK_FILE).unlink()
    os.mkfifo(tmp_path / probe.DISK_FILE)                    # never blocks on a FIFO
    assert probe._disk_read(key) is None


def test_backend_probe_is_cached_and_never_raises():
    backend = CuPyBackend("ember-cuda12")
    first = backend.probe()
    assert backend.probe() is first
    if not first.available:
        assert backend.devices() == [] and backend.kernels == {}
        assert backend.memory_allocated() == 0
        backend.synchronize()           # nothing queued: returns


def test_constructing_the_backend_imports_no_cupy():
    code = ("import sys; from ember.backends.cupy import CuPyBackend; "
            "b = CuPyBackend('ember-rocm'); b.probe(); "
            "print(b.name, ','.join(b.aliases), 'cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    # the probe imports CuPy in its child process only
    assert out == ["rocm", "cuda", "False"]


def test_unknown_distribution_is_a_clear_error():
    with pytest.raises(EmberError, match="ember-cuda12, ember-cuda13, ember-rocm"):
        CuPyBackend("ember-cuda11")


def test_cupy_table_has_every_kernel_of_the_cpu_table():
    cupy = pytest.importorskip("cupy")
    from ember.backends.cupy import kernels
    table = kernels.table(cupy)          # attribute look-ups only: no GPU needed
    cpu = array_api.kernels(np)
    cpu.update(array_api.numpy_extras(np))
    assert set(table) == set(cpu)
    assert set(array_api.LIBRARY_SPECIFIC) <= set(table)
    assert all(callable(k) for k in table.values())


# -- compat data -------------------------------------------------------------------------

@pytest.mark.parametrize("distribution", sorted(FLAVOURS))
def test_compat_data_joins_the_builtin_matrix(distribution):
    from ember import compat_matrix
    from ember.tools.compat_eval import Matrix
    data = compat_data(distribution)
    Matrix.from_data(compat_matrix.merge(compat_matrix.load(), data))   # no clash, parses
    import jsonschema
    jsonschema.validate(json.loads(json.dumps(data)), compat_matrix.schema())
    flavour = FLAVOURS[distribution]
    required = {k: v for rule in data["rule"] for k, v in rule["require"].items()}
    assert required[flavour.kind] == flavour.runtime_range


@pytest.mark.parametrize("distribution", ["ember-cuda12", "ember-cuda13"])
def test_driver_floor_agrees_with_the_nvidia_facts(distribution):
    from ember import compat_matrix
    from ember.tools.compat_eval import Matrix
    flavour = FLAVOURS[distribution]
    nvidia = Matrix.from_data(compat_matrix.load()).rule(f"cuda{flavour.major}-driver-too-old")
    ours = next(r for r in compat_data(distribution)["rule"] if "driver" in r["require"])
    assert ours["require"]["driver"] == nvidia.require["driver"]
