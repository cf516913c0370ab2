"""ember's cache of built OpenCL programs (backends/opencl/binaries.py): a new process (a
new Runtime here) loads what an earlier one built; a corrupt or refused entry is rebuilt,
never raised; the folder stays under its size bound; concurrent writers leave whole
entries."""
from __future__ import annotations

import os
import subprocess
import sys

import ember
import numpy as np
import pytest

SOURCE = """
__kernel void twice_plus(__global float *x, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] = 2.0f * x[i] + %s;
}
"""


@pytest.fixture
def fresh_runtime(opencl_device):
    """A new Runtime for opencl:0, as a new process would have."""
    from ember.backends.opencl.runtime import Runtime
    backend = ember.device(opencl_device).concrete().backend
    return lambda: Runtime(0, backend._devices()[0][1])


def run_twice_plus(rt, token: str):
    from ember import dtypes as D
    kernel = rt.kernel(("binaries-test", token), lambda: SOURCE % token, "twice_plus")
    x = rt.from_host(np.arange(5, dtype=np.float32), D.float32)
    rt.launch(kernel, 5, x.buffer, np.int32(5))
    np.testing.assert_array_equal(rt.to_host(x), 2 * np.arange(5, dtype=np.float32)
                                  + float(token.rstrip("f")))


def entries(tmp_path):
    from ember.backends.opencl import binaries
    folder = tmp_path / binaries.FOLDER
    return sorted(folder.glob("*" + binaries.SUFFIX)) if folder.exists() else []


def test_round_trip_new_runtime_loads_the_binary(fresh_runtime, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_OPENCL_STORE_ALL", "1")      # as under `ember warmup`
    first = fresh_runtime()
    run_twice_plus(first, "3.0f")
    assert (first.builds, first.cached_builds) == (1, 0)
    assert len(entries(tmp_path)) == 1
    second = fresh_runtime()
    run_twice_plus(second, "3.0f")
    assert (second.builds, second.cached_builds) == (1, 1)
    other = fresh_runtime()                 # another source is another entry
    run_twice_plus(other, "4.0f")
    assert other.cached_builds == 0 and len(entries(tmp_path)) == 2


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "refused", "fifo"])
def test_bad_entry_is_rebuilt(fresh_runtime, tmp_path, monkeypatch, damage):
    from ember.backends.opencl import binaries
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_OPENCL_STORE_ALL", "1")
    run_twice_plus(fresh_runtime(), "5.0f")
    (path,) = entries(tmp_path)
    data = path.read_bytes()
    if damage == "flip":
        data = data[:-40] + bytes(b ^ 0xFF for b in data[-40:])
    elif damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "foreign":
        data = b"not ours at all"
    elif damage == "refused":     # a whole, checksummed entry the driver cannot load
        data = binaries._pack(b"\x00garbage binary\xff" * 64)
    path.unlink()
    if damage == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(data)
    assert binaries._unpack(data) is None or damage in ("refused", "fifo")
    rt = fresh_runtime()
    run_twice_plus(rt, "5.0f")             # right answer, no error
    assert rt.cached_builds == 0
    if damage != "fifo":                   # rewritten whole: the next runtime loads it
        again = fresh_runtime()
        run_twice_plus(again, "5.0f")
        assert again.cached_builds == 1


def test_size_bound_evicts_oldest(tmp_path, monkeypatch):
    from ember.backends.opencl import binaries
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_OPENCL_BINARY_CACHE_MB", str(10_000 / (1 << 20)))  # 10 kB
    payload = os.urandom(3000)
    for i in range(6):
        binaries.write(f"k{i}", payload)
        path = tmp_path / binaries.FOLDER / f"k{i}.bin"
        os.utime(path, ns=(i * 10**9, i * 10**9))     # distinct ages, k0 oldest
    assert binaries.read("k3") == payload           # a hit makes k3 the newest
    binaries.write("k6", payload)
    kept = {p.stem for p in entries(tmp_path)}
    assert sum(p.stat().st_size for p in entries(tmp_path)) <= 10_000
    assert kept == {"k3", "k5", "k6"}
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")    # off: nothing read or written
    binaries.write("k7", payload)
    assert binaries.read("k6") is None


WRITER = """
import os, sys
sys.path[:0] = [{path!r}]
os.environ["EMBER_CACHE_DIR"] = {cache!r}
from ember.backends.opencl import binaries
me = int(sys.argv[1])
payload = bytes([me]) * 200_000
bad = 0
for i in range(60):
    binaries.write("shared", payload)
    got = binaries.read("shared")
    if got is not None and got not in (bytes([1]) * 200_000, bytes([2]) * 200_000):
        bad += 1
print(bad)
"""


def test_two_processes_writing_one_entry(tmp_path):
    import ember.backends.opencl.binaries as binaries
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        binaries.__file__))))
    code = WRITER.format(path=root, cache=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code, str(n)], stdout=subprocess.PIPE,
                              text=True) for n in (1, 2)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0] and outs == ["0", "0"]
    (path,) = entries(tmp_path)                  # one whole entry, no temporary left over
    assert binaries._unpack(path.read_bytes()) in (bytes([1]) * 200_000,
                                                   bytes([2]) * 200_000)
    assert [p.name for p in (tmp_path / binaries.FOLDER).iterdir()] == ["shared.bin"]


TWO_KERNELS = """
__kernel void first(__global float *x) { x[get_global_id(0)] += 1.0f; }
__kernel void second(__global float *x) { x[get_global_id(0)] *= 3.0f; }
"""


def test_warmup_builds_ahead_and_stores_every_program(opencl_device, tmp_path, monkeypatch,
                                                      capsys):
    # the op families themselves are too slow to build in a test (each elementwise program
    # holds ~20 layout variants): one family of a two-kernel program stands in for them
    from ember import dtypes as D
    from ember.tools import warmup
    from ember.tools.cli import main
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EMBER_OPENCL_STORE_ALL", raising=False)
    rt = ember.device(opencl_device).concrete().backend.runtime(0)
    rt.kernel(("binaries-test", "two"), lambda: TWO_KERNELS, "first")
    assert entries(tmp_path) == []           # a run alone stores nothing (binaries.storing)

    def family(device):
        # the kernels have no bounds check: as many items as a whole work-group
        x = rt.from_host(np.ones(rt.local_size, dtype=np.float32), D.float32)
        rt.launch(rt.kernel(("binaries-test", "two", "warm"), lambda: TWO_KERNELS + " ",
                            "first"), rt.local_size, x.buffer)
        return rt.to_host(x)
    monkeypatch.setattr(warmup, "_families", lambda: {"scan": ("two kernels", family)})
    # the device probe (ember.zeros) builds a program too (float32's bundle in a new
    # process, bundles.py): it must already run with storing on, or that program goes
    # unstored. Built here first (not stored), so the probe does not compile the bundle's
    # hundred kernels for its binary in this test (its setting is checked below)
    ember.zeros(1, device=opencl_device).numpy()
    probed, real_zeros = [], ember.zeros

    def zeros(*args, **kwargs):
        probed.append(os.environ.get("EMBER_OPENCL_STORE_ALL"))
        return real_zeros(*args, **kwargs)
    monkeypatch.setattr(ember, "zeros", zeros)
    assert main(["warmup", "--device", opencl_device, "--only", "scan", "--no-demo"]) == 0
    assert probed[:1] == ["1"]
    out = capsys.readouterr().out
    assert f"warmed up {opencl_device}" in out and "programs" in out
    # warmup stores every program it builds: the stand-in's, and the probe's where this
    # process had not built that one yet
    from ember.backends.opencl import binaries, codegen
    source = TWO_KERNELS + " "
    key = binaries.entry_key(binaries.device_identity(rt.device),
                             codegen.prelude(source) + source)
    assert key + binaries.SUFFIX in {p.name for p in entries(tmp_path)}
    assert len(entries(tmp_path)) <= 2
    assert "EMBER_OPENCL_STORE_ALL" not in os.environ  # a run's own setting again after


@pytest.mark.parametrize("argv, expected", [
    (["--only", "scan,nonsense"], "unknown family 'nonsense'"),
    (["--device", "cpu"], "cannot use device 'cpu'"),
])
def test_warmup_refuses_bad_arguments(argv, expected, capsys):
    from ember.tools.cli import main
    assert main(["warmup", *argv]) == 2
    err = capsys.readouterr().err
    assert expected in err and "expected" in err
