"""Collectors: facts about this machine (versions, drivers, plugins, devices); nothing printed."""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys

from . import guard, install
from .compat_eval import Facts, Matrix

# The only environment variables a report carries (values scrubbed of the home folder).
ENV_ALLOW = ("CUDA_VISIBLE_DEVICES", "CUDA_PATH", "CUDA_HOME", "CUPY_ACCELERATORS",
             "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
             "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "POCL_DEVICES", "PYOPENCL_CTX",
             "PYOPENCL_COMPILER_OUTPUT", "LD_LIBRARY_PATH")
ENV_ALLOW_PREFIXES = ("EMBER_",)
# Components that are not distributions: they come from the interpreter, drivers, backends.
HOST_COMPONENTS = ("python", "ember", "driver", "gpu-arch", "cuda", "rocm", "opencl", "cupy")
NVIDIA_PROC = "/proc/driver/nvidia/version"
AMD_KFD = "/dev/kfd"
ROCM_INFO = "/opt/rocm/.info/version"


def scrub(text: str, home: str | None = None) -> str:
    """Text with the user's home folder written as '~', except inside the Python prefix."""
    home = home if home is not None else os.path.expanduser("~")
    if not text or not home or home in ("/", "~") or home not in text:
        return text
    keep = sorted({p for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p}, key=len,
                  reverse=True)
    marks = {}
    for i, prefix in enumerate(keep):
        mark = f"\0{i}\0"
        marks[mark] = prefix
        text = text.replace(prefix, mark)
    text = re.sub(re.escape(home.rstrip("/")) + r"(?=/|\b|$)", "~", text)
    for mark, prefix in marks.items():
        text = text.replace(mark, prefix)
    return text


def scrub_all(value, home: str | None = None):
    """scrub() applied to every string inside dicts and lists."""
    if isinstance(value, str):
        return scrub(value, home)
    if isinstance(value, dict):
        return {k: scrub_all(v, home) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_all(v, home) for v in value]
    return value


def environment(env=None) -> dict:
    """The allow-listed environment variables that are set."""
    env = os.environ if env is None else env
    return {k: scrub(v) for k, v in sorted(env.items())
            if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}


def _run(argv: list[str], timeout: float = 10.0) -> str:
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout if done.returncode == 0 else ""


def nvidia_driver(proc_path: str = NVIDIA_PROC, smi: str | None = "") -> dict:
    """The NVIDIA kernel driver's version (and GPU compute capability when nvidia-smi runs)."""
    found = {"found": False, "version": None, "gpu_arch": None, "origin": ""}
    if os.path.exists(proc_path):
        with open(proc_path, encoding="utf-8", errors="replace") as fh:
            match = re.search(r"Kernel Module.*?\s(\d+\.\d+(?:\.\d+)?)\s", fh.read())
        found.update(found=True, origin=proc_path, version=match and match.group(1))
    smi = shutil.which("nvidia-smi") if smi == "" else smi
    if smi:
        out = _run([smi, "--query-gpu=driver_version,compute_cap", "--format=csv,noheader"])
        rows = [[c.strip() for c in line.split(",")] for line in out.splitlines() if "," in line]
        if rows:
            found.update(found=True, version=found["version"] or rows[0][0],
                         origin=found["origin"] or "nvidia-smi")
            # the oldest GPU decides which CUDA releases can still run everywhere
            arches = [r[1] for r in rows if re.fullmatch(r"\d+\.\d+", r[1])]
            found["gpu_arch"] = min(arches, key=lambda a: tuple(map(int, a.split("."))),
                                    default=None)
    if not found["found"]:
        found["reason"] = (f"no NVIDIA driver was found ({os.path.dirname(proc_path)} is "
                           "absent" + ("; nvidia-smi reported no GPU)" if smi
                                       else " and nvidia-smi is not on PATH)"))
    return found


def amd_driver(kfd: str = AMD_KFD, rocm_info: str = ROCM_INFO) -> dict:
    """Whether the AMD GPU compute driver is present, and the installed ROCm's version."""
    found = {"found": os.path.exists(kfd), "version": None, "origin": ""}
    if os.path.exists(rocm_info):
        with open(rocm_info, encoding="utf-8", errors="replace") as fh:
            match = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", fh.read())
        found.update(version=match and match.group(1), origin=rocm_info)
    if not found["found"]:
        found["reason"] = f"no AMD GPU driver was found ({kfd} is absent)"
    return found


def drivers() -> dict:
    return {"nvidia": nvidia_driver(), "amd": amd_driver()}


def distribution_version(name: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def components(matrix: Matrix, host_drivers: dict) -> Facts:
    """Versions of Python, ember, every distribution the matrix names, drivers."""
    import ember
    facts = Facts()
    facts.set("python", platform.python_version(), "running interpreter")
    facts.set("ember", ember.__version__, "ember.__version__")
    for name in sorted(matrix.components() - set(HOST_COMPONENTS)):
        facts.set(name, distribution_version(name), "installed distribution")
    facts.derive()       # the CUDA major of a cupy-cudaNNx wheel; a probe may say more
    nvidia, amd = host_drivers["nvidia"], host_drivers["amd"]
    facts.set("driver", nvidia.get("version"), nvidia.get("origin", ""))
    facts.set("gpu-arch", nvidia.get("gpu_arch"), "nvidia-smi")
    facts.set("rocm", amd.get("version"), amd.get("origin", ""))
    return facts


def plugin_rows(records, loads=None) -> list[dict]:
    """What the plugin host knows about each entry point, with what loading it took and
    printed (`loads` from loading.load_plugins); a plugin the doctor found hanging or
    crashing is 'hung', and its error says so."""
    rows = []
    for r in records:
        load = (loads or {}).get(r.name, {})
        trouble = load.get("trouble", "")
        row = {"name": r.name, "value": r.value, "distribution": r.distribution,
               "version": r.version, "requires_ember": r.requires_ember, "status": r.status,
               "error": scrub(r.error), "device_types": list(r.device_types),
               "seconds": load.get("seconds", 0.0),
               "output": scrub_all(load.get("output") or {"stdout": "", "stderr": ""})}
        if trouble:
            row.update(status="hung", error=trouble_text(trouble, load.get("timeout")))
        rows.append(row)
    return rows


def trouble_text(trouble: str, timeout=None) -> str:
    if trouble == "hung":
        limit = f" within {timeout:g} s" if timeout else ""
        return (f"its import (or the construction of its backends) did not finish{limit}; "
                "it was not loaded")
    return f"its import {trouble}; it was not loaded" if trouble.startswith("crashed") \
        else trouble


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return str(value)


def _device_rows(kind: str, backend) -> list[dict]:
    rows = []
    for info in backend.devices():
        name = kind if info.index is None else f"{kind}:{info.index}"
        try:
            dtypes = sorted(str(d) for d in backend.capabilities(info.index).dtypes)
        except Exception:  # noqa: BLE001  (a backend bug must not hide its other devices)
            dtypes = []
        rows.append({"device": name, "name": info.name, "kind": info.kind,
                     "platform": info.platform, "version": info.version,
                     "memory": info.memory, "fp64": bool(info.fp64), "fp16": bool(info.fp16),
                     "dtypes": dtypes})
    return rows


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _claims(rec, kind: str, first_party: set) -> bool:
    return rec.distribution in first_party or kind in rec.device_types or rec.name == kind


def _probe_and_devices(kind: str, backend):
    """(probe, devices, error): run in a guarded thread, so each step's failure is data."""
    try:
        probe = backend.probe()
    except Exception as exc:  # noqa: BLE001  (probes must not raise; if one does, say so)
        return None, [], f"the probe raised {type(exc).__name__}: {exc}"
    if not probe.available:
        return probe, [], ""
    try:
        return probe, _device_rows(kind, backend), ""
    except Exception as exc:  # noqa: BLE001  (third-party code: report, do not crash)
        return probe, [], f"devices() raised {type(exc).__name__}: {exc}"


def backend_row(kind: str, backend, records, matrix: Matrix, loads=None,
                timeout: float = guard.DEFAULT_TIMEOUT, capture=None) -> dict:
    """One device type: its status and the first failing step of why it is not usable.
    The probe runs under `timeout`; what it prints is captured into the row."""
    row = {"type": kind, "status": "", "plugin": "", "distribution": "", "reason": "",
           "fix": "", "reference": "", "details": {}, "devices": [], "detail": "",
           "seconds": 0.0, "output": guard.empty_output()}
    if backend is None:
        first_party = {p["distribution"] for p in matrix.plugins_for(kind)}
        troubled = [r for r in records if (loads or {}).get(r.name, {}).get("trouble")
                    and _claims(r, kind, first_party)]
        broken = [r for r in records
                  if r.status in ("failed", "incompatible", "invalid", "disabled")
                  and _claims(r, kind, first_party)]
        if troubled:
            rec = troubled[0]
            load = loads[rec.name]
            row.update(status="hung", plugin=rec.name, distribution=rec.distribution,
                       reason=trouble_text(load["trouble"], timeout),
                       fix=install.here().uninstall(rec.distribution or rec.name),
                       reference="plugin-hung")
        elif broken:
            rec = broken[0]
            row.update(status=rec.status, plugin=rec.name, distribution=rec.distribution,
                       reason=_last_line(rec.error), fix=install.here().localize_text(rec.fix),
                       detail=scrub(rec.error))
        else:
            row.update(status="not installed",
                       fix=install.here().localize(matrix.install_hint(kind)),
                       reason=f"no installed plugin provides '{kind}' devices")
        return row
    rec = next((r for r in records if kind in r.device_types), None)
    if rec is not None:
        row.update(plugin=rec.name, distribution=rec.distribution)
    # a second of grace: a probe that waits on a child (CuPy's) reports its own timeout
    outcome = guard.call(_probe_and_devices, kind, backend, timeout=timeout + 1.0)
    row["seconds"] = outcome.seconds
    if capture is not None:
        row["output"] = scrub_all(capture.take())
    if not outcome.finished:
        row.update(status="unavailable", reference=f"{kind}-probe-timeout",
                   reason=f"the backend's probe did not answer within {timeout:g} s (a "
                          "driver that hangs, or one slow to wake: `ember doctor --timeout "
                          "60` waits longer)")
        return row
    probe, devices, error = outcome.result if outcome.error is None else (
        None, [], f"the probe failed: {type(outcome.error).__name__}: {outcome.error}")
    if probe is None:
        row.update(status="unavailable", reason=error, reference=f"{kind}-probe-raised")
        return row
    row.update(reason=scrub(probe.reason), fix=scrub(install.here().localize_text(probe.fix)),
               reference=probe.reference,
               details=scrub_all(_plain(dict(probe.details))))
    if not probe.available:
        row["status"] = "unavailable"
        return row
    if error:
        row.update(status="unavailable", reason=error, reference=f"{kind}-devices-raised")
        return row
    row["devices"] = scrub_all(devices)
    row["status"] = "ok" if row["devices"] else "unavailable"
    if not row["devices"]:
        row.update(reason="the backend is available but lists no device",
                   reference=f"{kind}-no-device")
    return row


def backend_rows(matrix: Matrix, only: str | None = None, loads=None,
                 timeout: float = guard.DEFAULT_TIMEOUT, capture=None) -> list[dict]:
    """Every known device type (first-party ones from the matrix, whether installed or not,
    and every type a loaded plugin provides).  Plugins are loaded first unless `loads`
    says they were (loading.load_plugins)."""
    from ember import plugins
    kinds = device_types(matrix, load=loads is None)
    loaded = plugins.loaded_backends()
    records = plugins.records()
    return [backend_row(kind, loaded.get(kind), records, matrix, loads, timeout, capture)
            for kind in kinds if only is None or kind == only]


def device_types(matrix: Matrix, load: bool = True) -> list[str]:
    """cpu, the first-party types, then any type a loaded plugin provides (loading them all
    first unless `load` is false: the CLI loads them itself, under deadlines)."""
    from ember import plugins
    if load:
        plugins.load_all()
    loaded = plugins.loaded_backends()
    return list(dict.fromkeys(["cpu", *matrix.device_types(),
                               *(getattr(b, "name", k) for k, b in loaded.items())]))


def backend_facts(facts: Facts, rows: list[dict], matrix: Matrix) -> None:
    """Versions the backends report (probe details named like matrix components, OpenCL
    platform versions) join the facts; they are more exact than what metadata says."""
    names = matrix.components() | set(HOST_COMPONENTS)
    for row in rows:
        for key, value in row["details"].items():
            if key in names and isinstance(value, (str, int, float)):
                facts.set(key, value, f"{row['type']} backend")
        opencl = [m.group(1) for d in row["devices"]
                  for m in [re.search(r"OpenCL (\d+\.\d+)", d["version"] or "")] if m]
        if row["type"] == "opencl" and opencl:
            facts.set("opencl", max(opencl, key=lambda v: tuple(map(int, v.split(".")))),
                      "opencl devices")


def machine() -> dict:
    """Interpreter and OS, with no user path beyond the Python prefix."""
    return {"python": {"version": platform.python_version(),
                       "implementation": platform.python_implementation(),
                       "prefix": sys.prefix},
            "platform": {"system": platform.system(), "release": platform.release(),
                         "machine": platform.machine()}}
