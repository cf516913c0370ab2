"""Why the CuPy backend can or cannot run here: facts gathered safely, then a pure decision.

`gather()` collects the facts (installed CuPy packages, driver files, and a child process
that imports CuPy and queries the driver under a timeout); `decide()` turns facts into a
Probe naming the first failing step and its fix.  Keeping `decide` a pure function of the
facts lets every branch be tested on a machine without a GPU.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from ember._cachefile import cache_dir, read_json, write_json
from ember.backend import Probe

from .compat import FLAVOURS, MIN_DRIVER, WHEEL_GUIDE, Flavour

# A cold driver on a many-GPU machine takes seconds to initialise; a hung one never answers.
# EMBER_PROBE_TIMEOUT (seconds) shortens the wait: `ember doctor --timeout` sets it.
QUERY_TIMEOUT_S = 60.0
TIMEOUT_VARIABLE = "EMBER_PROBE_TIMEOUT"


def query_timeout() -> float:
    """The seconds the driver query may take: EMBER_PROBE_TIMEOUT, else QUERY_TIMEOUT_S."""
    try:
        value = float(os.environ.get(TIMEOUT_VARIABLE, ""))
    except ValueError:
        return QUERY_TIMEOUT_S
    return value if value > 0 else QUERY_TIMEOUT_S
_QUERY_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_query.py")

# The distributions that install the `cupy` module (not cupy-xarray and such helpers).
_CUPY_DIST = re.compile(r"^cupy(-cuda\d+x?|-rocm-\d+-\d+)?$")
_NVIDIA_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_VISIBLE = {"cuda": ("CUDA_VISIBLE_DEVICES",),
            "rocm": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")}


@dataclass(frozen=True)
class Facts:
    """Everything the decision rests on; each field is something observed, not inferred."""

    distribution: str = "ember-cuda12"     # the plugin asking (see compat.FLAVOURS)
    cupy_dists: tuple = ()                 # ((name, version), ...) installing `cupy`
    import_error: str = ""                 # "" when `import cupy` worked
    query_error: str = ""                  # the child process timed out or crashed
    cupy_version: str = ""
    is_hip: bool = False                   # cupy.cuda.runtime.is_hip
    runtime_version: int = 0               # cudaRuntimeGetVersion / hipRuntimeGetVersion
    driver_version: int = 0                # cudaDriverGetVersion: 0 when no libcuda loads
    driver_release: str = ""               # NVIDIA's "535.104.05" from /proc/driver/nvidia
    driver_files: bool = False             # /proc/driver/nvidia (NVIDIA) or /dev/kfd (AMD)
    device_count: int = 0
    device_error: str = ""                 # what getDeviceCount raised
    visible_devices: str | None = None     # e.g. "CUDA_VISIBLE_DEVICES=''" when set
    devices: tuple = ()                    # ({name, memory, arch, gcn_arch}, ...)
    toolkit: dict = field(default_factory=dict)   # _query.toolkit(): CUDA root, libraries
    plugins: tuple = ()                    # installed first-party CuPy plugin distributions

    @property
    def flavour(self) -> Flavour:
        return FLAVOURS[self.distribution]


def runtime_text(version: int, hip: bool) -> str:
    """'12.9' from CUDA's 12090; '7.0' from HIP's 70051831 (major*10^7 + minor*10^5 + patch)."""
    if version <= 0:
        return ""
    if hip:
        return f"{version // 10_000_000}.{version // 100_000 % 100}"
    return f"{version // 1000}.{version % 1000 // 10}"


def decide(f: Facts) -> Probe:
    """The first failing step, in plain words, with the fix; or available."""
    fl = f.flavour
    details = _details(f)

    def no(reason: str, fix: str, reference: str) -> Probe:
        return Probe(False, reason, fix, reference, details)

    if len(f.cupy_dists) > 1:
        # each wheel writes the same `cupy` folder: removing one deletes files of the
        # other, so all of them go (with the plugins that would bring them back) first
        names = " ".join(dict.fromkeys([*f.plugins, *(n for n, _ in f.cupy_dists)]))
        seen = ", ".join(f"{n} {v}" for n, v in f.cupy_dists)
        return no(f"more than one CuPy package is installed ({seen}); each installs the same "
                  "`cupy` module over the others, so which one runs is an accident",
                  f"pip uninstall -y {names} && pip install {fl.distribution}",
                  "cupy-multiple-packages")
    if f.import_error:
        if not f.cupy_dists:
            return no(f"CuPy is not installed ({fl.distribution} runs on {fl.wheel})",
                      f"pip install {fl.wheel}   (the CuPy wheels: {WHEEL_GUIDE})",
                      "cupy-not-installed")
        name, version = f.cupy_dists[0]
        return no(f"CuPy ({name} {version}) is installed but `import cupy` fails: "
                  f"{_last_line(f.import_error)}",
                  f"pip install --force-reinstall {name}   (if the error names a missing "
                  f"library, `ember compat explain '<the error>'` says which)",
                  "cupy-import-failed")
    if f.query_error:
        tool = "nvidia-smi" if fl.kind == "cuda" else "rocminfo"
        return no(f"the GPU query did not complete: {f.query_error}",
                  f"check that `{tool}` answers; a hung or crashed query usually means the "
                  "driver needs a reload or the machine a reboot (a driver only slow to wake "
                  f"answers with more time: {TIMEOUT_VARIABLE}=60, or `ember doctor "
                  "--timeout 60`)",
                  f"{fl.kind}-query-failed")
    built_for = "rocm" if f.is_hip else "cuda"
    if built_for != fl.kind:
        have = f.cupy_dists[0][0] if f.cupy_dists else f"CuPy {f.cupy_version}"
        serves = {"cuda": "NVIDIA GPUs (CUDA)", "rocm": "AMD GPUs (ROCm)"}
        other = "ember-rocm" if built_for == "rocm" else "ember-cuda12"
        return no(f"the installed CuPy ({have}) is built for {serves[built_for]}, but "
                  f"{fl.distribution} serves {serves[fl.kind]}",
                  f"for this GPU use the matching plugin: pip uninstall -y {fl.distribution} "
                  f"&& pip install {other}; or replace CuPy: pip uninstall -y {have} && "
                  f"pip install {fl.wheel}",
                  f"{fl.kind}-cupy-build-mismatch")
    if fl.kind == "cuda":
        return _decide_cuda(f, no)
    return _decide_rocm(f, no)


def _decide_cuda(f: Facts, no) -> Probe:
    runtime = runtime_text(f.runtime_version, False)
    insufficient = bool(re.search(r"InsufficientDriver|INSUFFICIENT_DRIVER|driver version is "
                                  r"insufficient", f.device_error))
    if f.driver_version == 0 and (f.device_error or f.device_count == 0):
        if not f.driver_files:
            return no("no NVIDIA driver was found (/proc/driver/nvidia does not exist; CuPy "
                      "reports this as cudaErrorInsufficientDriver)",
                      f"on a machine with an NVIDIA GPU install its driver (>= "
                      f"{MIN_DRIVER.get(f.runtime_version // 1000, '525.60.13')} for CUDA "
                      f"{runtime or '12'}); in a container start it with --gpus all "
                      "(NVIDIA Container Toolkit); without an NVIDIA GPU use the CPU, or "
                      "OpenCL: pip install 'ember-opencl[pocl]'",
                      "cuda-no-driver")
        return no("the NVIDIA kernel driver is loaded (/proc/driver/nvidia exists) but its "
                  "user-space library libcuda.so could not be loaded",
                  "install the driver's user-space package matching the kernel module "
                  f"{f.driver_release or ''} (e.g. libnvidia-compute); in a container use "
                  "the NVIDIA Container Toolkit (docker run --gpus all)",
                  "cuda-libcuda-missing")
    major = f.runtime_version // 1000
    if f.driver_version and (insufficient or f.driver_version // 1000 < major):
        supports = runtime_text(f.driver_version, False)
        release = f"driver {f.driver_release}, " if f.driver_release else ""
        floor = MIN_DRIVER.get(major, "")
        fix = (f"upgrade the NVIDIA driver to {floor} or newer" if floor else
               "upgrade the NVIDIA driver")
        older = [fl for fl in FLAVOURS.values()
                 if fl.kind == "cuda" and fl.major == f.driver_version // 1000]
        if older and older[0].distribution != f.distribution:
            fix += (f"; or use the CUDA {older[0].major} build: pip uninstall -y "
                    f"{f.distribution} {f.flavour.wheel} && pip install "
                    f"{older[0].distribution}")
        return no(f"the NVIDIA driver is too old: it supports CUDA up to {supports} "
                  f"({release}seen by cudaDriverGetVersion) but this CuPy "
                  f"({_cupy_name(f)}) uses the CUDA {runtime} runtime, which needs driver "
                  f">= {floor or 'the one shipped with it'}",
                  fix, "cuda-driver-too-old")
    if f.device_count == 0 and (not f.device_error or "NoDevice" in f.device_error
                                or "NO_DEVICE" in f.device_error):
        hidden = f"; {f.visible_devices} hides the GPUs" if f.visible_devices else ""
        return no(f"no NVIDIA GPU is visible to this process (driver "
                  f"{f.driver_release or runtime_text(f.driver_version, False)} found)"
                  f"{hidden}",
                  "check `nvidia-smi`; unset CUDA_VISIBLE_DEVICES or list the GPUs to use; in "
                  "a container start it with --gpus all",
                  "cuda-no-device")
    if f.device_error:
        return no(f"CuPy could not list the NVIDIA GPUs: {_last_line(f.device_error)}",
                  f"`ember compat explain '{_last_line(f.device_error)}'` decodes known CUDA "
                  "errors; check that `nvidia-smi` lists the GPU",
                  "cuda-device-query-failed")
    nvrtc = f.toolkit.get("libraries", {}).get("nvrtc", {})
    fl = f.flavour
    if nvrtc and not nvrtc.get("available"):
        # CuPy compiles every elementwise kernel with NVRTC: without it nothing runs
        return no(f"CuPy finds the GPU but not NVRTC, the CUDA compiler every kernel needs: "
                  f"{_last_line(nvrtc.get('error', ''))}",
                  f"pip install '{fl.wheel}[ctk]'   (the CUDA {fl.major} libraries from pip), "
                  f"or a CUDA {fl.major} toolkit with CUDA_PATH pointing at it",
                  "cuda-nvrtc-missing")
    return Probe(True, details=_details(f))


def _decide_rocm(f: Facts, no) -> Probe:
    if f.device_count == 0 and not f.driver_files:
        return no("no AMD GPU driver was found (/dev/kfd does not exist)",
                  "on a machine with an AMD GPU install ROCm 7.0's amdgpu driver "
                  "(https://rocm.docs.amd.com); in a container pass --device=/dev/kfd "
                  "--device=/dev/dri; without an AMD GPU use the CPU, or OpenCL: "
                  "pip install 'ember-opencl[pocl]'",
                  "rocm-no-driver")
    if f.device_count == 0:
        hidden = f"; {f.visible_devices} hides the GPUs" if f.visible_devices else ""
        seen = f" ({_last_line(f.device_error)})" if f.device_error else ""
        return no(f"no AMD GPU is usable by this process{seen}{hidden}",
                  "check `rocminfo`; add yourself to the render and video groups (sudo "
                  "usermod -aG render,video $USER, then log in again); in a container pass "
                  "--device=/dev/kfd --device=/dev/dri",
                  "rocm-no-device")
    return Probe(True, details=_details(f))


def _cupy_name(f: Facts) -> str:
    if f.cupy_dists:
        return " ".join(f.cupy_dists[0])
    return f"cupy {f.cupy_version}".strip()


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else text


def _details(f: Facts) -> dict:
    """Versions named like compat-matrix components, so `ember doctor` can check them."""
    d: dict = {}
    if f.cupy_version:
        d["cupy"] = f.cupy_version
    if f.cupy_dists:
        d["cupy-package"] = _cupy_name(f)
    runtime = runtime_text(f.runtime_version, f.is_hip)
    if runtime:
        d["rocm" if f.is_hip else "cuda"] = runtime
    if f.driver_release:
        d["driver"] = f.driver_release
    if f.driver_version and not f.is_hip:
        d["driver-cuda"] = runtime_text(f.driver_version, False)
    if f.toolkit and not f.is_hip:
        d["toolkit"] = _toolkit(f)
    if f.devices:
        d["devices"] = len(f.devices)
        first = f.devices[0]
        if f.is_hip:
            d["gfx"] = first.get("gcn_arch", "")      # not a version: no matrix component
        else:
            d["gpu-arch"] = first.get("arch", "")     # compute capability, e.g. "9.0"
    return d


def _toolkit(f: Facts) -> dict:
    """cupy.show_config's facts for the report: runtimes linked and local, libraries."""
    t = f.toolkit
    local = t.get("local_runtime_version")
    out = {"cuda_root": t.get("cuda_root") or "", "nvcc": t.get("nvcc") or "",
           "runtime": runtime_text(f.runtime_version or t.get("build_version") or 0, False),
           "local_runtime": runtime_text(local, False) if isinstance(local, int) else "",
           "libraries": {}}
    for name, lib in t.get("libraries", {}).items():
        entry = {"available": bool(lib.get("available"))}
        for key in ("version", "path", "error"):
            if lib.get(key) not in (None, ""):
                entry[key] = str(lib[key])
        out["libraries"][name] = entry
    return out


# -- gathering the facts (the real machine) ------------------------------------------------

def installed_cupy() -> tuple:
    """((name, version), ...) of the installed distributions that provide `cupy`."""
    found = {}
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if _CUPY_DIST.match(name):
            found.setdefault(name, dist.version or "")
    return tuple(sorted(found.items()))


def _driver_files(kind: str) -> tuple[bool, str]:
    if kind == "rocm":
        return os.path.exists("/dev/kfd"), ""
    present = os.path.isdir("/proc/driver/nvidia")
    release = ""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8", errors="replace") as fh:
            m = _NVIDIA_VERSION.search(fh.read())
            release = m.group(1) if m else ""
    except OSError:
        pass
    return present, release


def _visible(kind: str) -> str | None:
    for var in _VISIBLE[kind]:
        value = os.environ.get(var)
        if value is not None:
            return f"{var}={value!r}"
    return None


# One child per process for the same inputs: each CuPy flavour's backend (cuda12, cuda13,
# rocm) and the doctor's plugin checks asked again, ~2 s of CPU each (importing CuPy) —
# half of `ember doctor`'s 8 s on a machine without a GPU.  The child's answer depends on
# what _inputs() lists; the same inputs (and timeout) in this process get the same facts,
# a change runs a new child.
_QUERY_ENV = ("CUDA", "CUPY", "HIP", "ROCM", "ROCR", "NVIDIA", "NCCL", "LD_LIBRARY_PATH",
              "PATH")
_QUERIES: dict = {}
_QUERIES_LOCK = threading.Lock()


def query(timeout: float | None = None) -> dict:
    """Run _query.py in a child process; its facts, or {'query_error': why}.  Asked again
    in the same process with the same inputs (see _inputs), the same facts; asked by
    another process within DISK_TTL_S with the same inputs, the facts a child found then
    (the cache folder's `cupy-query.json`)."""
    timeout = query_timeout() if timeout is None else timeout
    inputs = _inputs()
    key = (timeout, inputs)
    with _QUERIES_LOCK:      # a second asker waits for the first's child, never two children
        if key not in _QUERIES:
            facts = _disk_read(inputs)
            if facts is None:
                facts = _query(timeout)
                if not facts.get("query_error") and not facts.get("import_error"):
                    _disk_write(inputs, facts)
            _QUERIES[key] = facts
        return dict(_QUERIES[key])


# -- the same facts across processes ----------------------------------------------------------
# Every process that lists devices (`ember devices`, `ember doctor`, a script's first
# `device("auto")`) would import CuPy in a child again: ~2 s of CPU each.  A child's facts
# are kept for DISK_TTL_S under _inputs(), everything they can depend on: the interpreter, the
# query script, the CuPy and NVIDIA/ROCm library distributions (names, versions) and the
# files of `cupy` itself (a reinstall rewrites them), the driver's files and device nodes,
# the dynamic linker's cache (installing libcuda runs ldconfig) and the environment CuPy
# and the driver read.  Failed queries (a timeout, a crash, CuPy that does not import) are
# never kept: the next process asks again.  EMBER_CACHE_DIR=off keeps nothing.
DISK_FILE = "cupy-query.json"
DISK_TTL_S = 3600.0
_DISK_MAX_BYTES = 1 << 20
_DISK_MAX_ENTRIES = 16
_LIBRARY_DIST = re.compile(r"^(cupy.*|nvidia-.*|hip-.*|rocm-.*|amd-.*)$")


def _cache_file() -> str | None:
    folder = cache_dir()
    return None if folder is None else os.path.join(folder, DISK_FILE)


def _stamp(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return "-"
    return f"{info.st_size}:{info.st_mtime_ns}"


def _inputs() -> str:
    """What a query child's facts depend on, as one string (the memo's and the file's key)."""
    libraries = sorted({((d.metadata["Name"] or "").lower(), d.version or "")
                        for d in importlib.metadata.distributions()
                        if _LIBRARY_DIST.match((d.metadata["Name"] or "").lower())})
    spec = importlib.util.find_spec("cupy")
    cupy_files = _stamp(spec.origin) if spec is not None and spec.origin else "-"
    try:
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith(("nvidia", "kfd", "dri")))
    except OSError:
        nodes = []
    inputs = [sys.executable, _stamp(_QUERY_SCRIPT), libraries, cupy_files,
              _driver_files("cuda"), _driver_files("rocm"), nodes,
              _stamp("/proc/driver/nvidia/version"), _stamp("/etc/ld.so.cache"),
              sorted((k, v) for k, v in os.environ.items() if k.startswith(_QUERY_ENV))]
    return json.dumps(inputs, sort_keys=True, default=str)


def _disk_entries(path: str) -> dict:
    """The file's entries, {} for anything missing, foreign or hostile (a regular file of
    at most _DISK_MAX_BYTES is read, never a FIFO or a device)."""
    data = read_json(path, _DISK_MAX_BYTES)
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items()
            if isinstance(v, dict) and isinstance(v.get("facts"), dict)
            and isinstance(v.get("time"), (int, float))}


def _disk_read(key: str) -> dict | None:
    path = _cache_file()
    if path is None:
        return None
    entry = _disk_entries(path).get(key)
    if entry is None or not 0 <= time.time() - entry["time"] <= DISK_TTL_S:
        return None
    return dict(entry["facts"])


def _disk_write(key: str, facts: dict) -> None:
    """Through a temporary file and a rename: a crash or two writers never leave half a
    file (the last writer's entries win, which only costs another child later)."""
    path = _cache_file()
    if path is None:
        return
    entries = _disk_entries(path)
    entries[key] = {"time": time.time(), "facts": facts}
    kept = dict(sorted(entries.items(), key=lambda kv: kv[1]["time"])[-_DISK_MAX_ENTRIES:])
    # no cache folder (a read-only home): the next process asks a child again
    write_json(path, kept, ".cupy-query-")


def _query(timeout: float) -> dict:
    try:
        done = subprocess.run([sys.executable, _QUERY_SCRIPT], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return {"query_error": f"importing CuPy and asking the driver for its GPUs took more "
                               f"than {timeout:g} s (the child process was stopped)"}
    except OSError as exc:
        return {"query_error": f"could not start {sys.executable}: {exc}"}
    lines = done.stdout.strip().splitlines()
    try:
        facts = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        facts = None
    if done.returncode != 0 or not isinstance(facts, dict):
        tail = _last_line(done.stderr or "") or "no output"
        how = (f"was killed by signal {-done.returncode}" if done.returncode < 0
               else f"exited with status {done.returncode}")
        return {"query_error": f"the CuPy query process {how}: {tail}"}
    return facts


def gather(distribution: str, timeout: float | None = None) -> Facts:
    """The facts on this machine, for the plugin `distribution`; never raises."""
    kind = FLAVOURS[distribution].kind
    dists = installed_cupy()
    present, release = _driver_files(kind)
    if not dists and importlib.util.find_spec("cupy") is None:
        # nothing to import: spare the child process
        raw = {"import_error": "ModuleNotFoundError: No module named 'cupy'"}
    else:
        raw = query(timeout)
    fields = Facts.__dataclass_fields__
    raw = {k: v for k, v in raw.items() if k in fields}
    raw["devices"] = tuple(raw.get("devices", ()))
    raw["toolkit"] = raw.get("toolkit") if isinstance(raw.get("toolkit"), dict) else {}
    mine = tuple(sorted(d for d in FLAVOURS if _installed(d)))
    return Facts(distribution=distribution, cupy_dists=dists, driver_files=present,
                 driver_release=release, visible_devices=_visible(kind), plugins=mine, **raw)


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True
