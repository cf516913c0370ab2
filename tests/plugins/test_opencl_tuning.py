"""The matmul structure chosen by timing is saved per device and read back by a new process
(a new Runtime here); bad cache files only cost a new timing."""
from __future__ import annotations

import json

import ember
import numpy as np
import pytest


@pytest.fixture
def fresh_runtime(opencl_device, monkeypatch):
    """A new Runtime for opencl:0, as a new process would have, timing at its first product
    (the default waits for TUNE_AFTER multiply-adds: see the last tests)."""
    from ember.backends.opencl.runtime import Runtime
    monkeypatch.setenv("EMBER_OPENCL_TUNE_AFTER", "0")
    backend = ember.device(opencl_device).concrete().backend
    return lambda: Runtime(0, backend._devices()[0][1])


def product(rt):
    from ember import dtypes as D
    from ember.backends.opencl import linalg
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((96, 96), dtype=np.float32) for _ in range(2))
    out = linalg.matmul(rt.from_host(a, D.float32), rt.from_host(b, D.float32))
    np.testing.assert_allclose(rt.to_host(out), a @ b, rtol=1e-4, atol=1e-4)


def test_choice_is_timed_once_then_read_back(fresh_runtime, tmp_path, monkeypatch):
    from ember.backends.opencl import tuning
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    first = fresh_runtime()
    product(first)
    assert first.choices["matmul_source"] == "timed"
    saved = json.loads((tmp_path / tuning.FILE).read_text())
    entry = saved[tuning.device_key(first.device)]["matmul"]
    assert entry["choice"] == first.choices["matmul"]
    assert set(entry["times"]) == set(first.choices["matmul_times"])

    second = fresh_runtime()
    product(second)
    assert second.choices["matmul_source"] == "cache"
    assert second.choices["matmul"] == first.choices["matmul"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"x": 1}', None])
def test_bad_cache_files_mean_timing_again(fresh_runtime, tmp_path, monkeypatch, content):
    from ember.backends.opencl import tuning
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    rt = fresh_runtime()
    path = tmp_path / tuning.FILE
    if content is None:          # an entry for this device naming a structure that isn't one
        content = json.dumps({tuning.device_key(rt.device): {
            "matmul": {"choice": "__import__('os')", "times": {}}}})
    path.write_text(content)
    product(rt)
    assert rt.choices["matmul_source"] == "timed"
    repaired = json.loads(path.read_text())       # rewritten whole, with this device's entry
    assert repaired[tuning.device_key(rt.device)]["matmul"]["choice"] == rt.choices["matmul"]


def test_cache_can_be_turned_off(fresh_runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    rt = fresh_runtime()
    product(rt)
    assert rt.choices["matmul_source"] == "timed"
    assert list(tmp_path.iterdir()) == []


def test_unwritable_cache_is_skipped(fresh_runtime, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(blocker / "ember"))   # under a file: no mkdir
    rt = fresh_runtime()
    product(rt)
    assert rt.choices["matmul_source"] == "timed"


def test_a_cold_device_runs_the_default_until_its_products_pay_for_the_timing(
        fresh_runtime, tmp_path, monkeypatch):
    """No saved choice: the default structure runs untimed (no candidate built, nothing
    saved) until the products add up to EMBER_OPENCL_TUNE_AFTER multiply-adds."""
    from ember.backends.opencl import linalg, tuning
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_OPENCL_TUNE_AFTER", str(2 * 96 ** 3))
    rt = fresh_runtime()                # (the variable is read at the first product)
    product(rt)
    assert rt.choices["matmul_source"] == "default"
    assert "matmul" not in rt.choices
    default = linalg.DEFAULT_CPU if rt.is_cpu else linalg.DEFAULT_GPU
    # only the default's program was built (besides what the training bundle builds with
    # it, bundles.py: the naive and the default packed product are members)
    from ember.backends.opencl import bundles
    in_bundle = {key for key, _ in bundles.BUNDLES["training"]}
    built = [key for key in rt._programs if str(key[0]).startswith("matmul")
             and key not in in_bundle]
    shape = tuple(int(n) for n in default[len("packed"):].split("x")) if \
        default.startswith("packed") else None
    want = ("matmul-packed",) + shape if shape else ("matmul-tiled", "float32")
    assert built == ([] if want in in_bundle else [want])
    assert not (tmp_path / tuning.FILE).exists()
    product(rt)                        # 2 * 96^3 reached: timed now, and saved
    assert rt.choices["matmul_source"] == "timed"
    assert (tmp_path / tuning.FILE).exists()


def test_tiled_is_not_timed_on_a_cpu_device(fresh_runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    rt = fresh_runtime()
    if not rt.is_cpu:
        pytest.skip("the rule is for CPU devices")
    product(rt)
    assert "tiled" not in rt.choices["matmul_times"]
