"""OpenCL discovery: platforms and devices in a stable order, and the probe's plain words."""
from __future__ import annotations

import os
import sys
import warnings

from ember.backend import DeviceInfo, Probe
from ember.errors import DeviceUnavailableError, EmberWarning

POCL_FIX = ("pip install pocl-binary-distribution   (a CPU OpenCL device; or "
            "pip install 'ember-opencl[pocl]'), or install your GPU vendor's OpenCL driver")
_TEST_KERNEL = "__kernel void ember_probe(__global float* x) { x[get_global_id(0)] *= 2.0f; }"


def import_pyopencl():
    """pyopencl, or (None, Probe saying why not)."""
    from .caches import prepare
    prepare()              # before PoCL and PyOpenCL read where their caches are
    try:
        import pyopencl
    except ImportError as exc:
        if getattr(exc, "name", "") == "pyopencl":
            return None, Probe(False, "pyopencl is not installed",
                               "pip install 'ember-opencl[pocl]'   (or: pip install pyopencl)",
                               "opencl-no-pyopencl")
        return None, Probe(False, f"pyopencl is installed but failed to import: {exc}",
                           "pip install -U pyopencl   (a wheel built for this NumPy)",
                           "opencl-pyopencl-broken", {"error": str(exc)})
    except Exception as exc:  # noqa: BLE001  (e.g. an ABI mismatch raised as anything)
        return None, Probe(False, f"pyopencl failed to import: {type(exc).__name__}: {exc}",
                           "pip install -U pyopencl", "opencl-pyopencl-broken",
                           {"error": str(exc)})
    return pyopencl, None


# --- fork() ---------------------------------------------------------------------------------
# OpenCL does not survive fork(): the driver's threads stay in the parent, so a child forked
# after OpenCL started (platforms listed, a context made) hangs at its first OpenCL call,
# old context or new (PoCL: a copy never completes).  The child is told so instead, as
# PyTorch tells a forked child that CUDA cannot be re-initialized.

FORKED = False                 # True in a child forked after OpenCL started in its parent
_AT_FORK: list = []            # what runs in such a child (runtimes drop their handles)
_started = False


def started(at_fork=None) -> None:
    """OpenCL is in use in this process from now on; `at_fork()` runs in a forked child."""
    global _started
    if at_fork is not None:
        _AT_FORK.append(at_fork)
    if not _started and hasattr(os, "register_at_fork"):
        _started = True
        os.register_at_fork(after_in_child=_after_fork)


def _after_fork() -> None:
    global FORKED
    FORKED = True
    for hook in _AT_FORK:
        hook()


def forked_error(index) -> DeviceUnavailableError:
    return DeviceUnavailableError(
        f"opencl:{index or 0}: this process was forked from one that had started OpenCL, and "
        "OpenCL does not survive fork() (its driver stays in the parent: any OpenCL call here "
        "would hang); start the processes that use OpenCL with the 'spawn' start method "
        "(ember.multiprocessing.get_context('spawn'), or set_start_method('spawn')), or "
        "start them before the parent first uses OpenCL")


def discover(cl):
    """(platforms, [(platform, device)]) in a stable order: platforms sorted by name, vendor
    and version (the ICD loader's order is not guaranteed), devices in platform order."""
    if FORKED:
        raise forked_error(None)
    started()
    platforms = sorted(cl.get_platforms(), key=lambda p: (p.name, p.vendor, p.version))
    found = []
    for platform in platforms:
        try:
            devices = platform.get_devices()
        except cl.Error:          # DEVICE_NOT_FOUND is raised, not an empty list
            devices = []
        found.extend((platform, d) for d in devices)
    return platforms, found


def probe() -> Probe:
    if FORKED:
        return Probe(False, str(forked_error(None)), "use the 'spawn' start method",
                     "opencl-forked")
    cl, failed = import_pyopencl()
    if failed is not None:
        return failed
    details = {"pyopencl": cl.VERSION_TEXT}
    try:
        platforms, found = discover(cl)
    except Exception as exc:  # noqa: BLE001  (clGetPlatformIDs: no ICD loader or driver)
        return Probe(False, "no OpenCL platform was found (no ICD loader, or no OpenCL "
                     f"driver registered with it): {exc}", POCL_FIX, "opencl-no-platform",
                     details)
    if not platforms:
        return Probe(False, "no OpenCL platform was found (the ICD loader lists none)",
                     POCL_FIX, "opencl-no-platform", details)
    details["platforms"] = [f"{p.name} ({p.version})" for p in platforms]
    if not found:
        names = ", ".join(details["platforms"])
        return Probe(False, f"OpenCL platform(s) {names} found, but they have no devices",
                     "check that the device's driver is loaded and the device is visible "
                     "to this process; for a CPU device: pip install pocl-binary-distribution",
                     "opencl-no-device", details)
    logs = []
    for index, (platform, device) in enumerate(found):
        try:
            context = cl.Context([device])
            cl.Program(context, _TEST_KERNEL).build()
        except Exception as exc:  # noqa: BLE001  (a probe reports, never raises)
            logs.append(f"opencl:{index} {device.name.strip()} ({platform.name}): {exc}")
    details["devices"] = [f"opencl:{i} {d.name.strip()}" for i, (_, d) in enumerate(found)]
    if len(logs) == len(found):
        return Probe(False, "the OpenCL compiler failed to build a test kernel on every "
                     "device; compiler log:\n" + "\n".join(logs),
                     "update the OpenCL driver (for PoCL: pip install -U "
                     "pocl-binary-distribution)", "opencl-build-failed", details)
    if logs:
        details["build_failures"] = logs
    return Probe(True, details=details)


def has_fp64(device) -> bool:
    try:   # CL_DEVICE_DOUBLE_FP_CONFIG: 0, or an error on some drivers, without fp64
        return bool(device.double_fp_config)
    except Exception:  # noqa: BLE001  (the query itself fails on some drivers)
        return False


def kind_of(cl, device) -> str:
    if device.type & cl.device_type.GPU:
        return "gpu"
    if device.type & cl.device_type.CPU:
        return "cpu"
    return "accelerator"


def infos(cl, found) -> list[DeviceInfo]:
    out = []
    for index, (platform, device) in enumerate(found):
        out.append(DeviceInfo(
            index, device.name.strip(), kind_of(cl, device),
            platform=f"{platform.name.strip()} ({platform.vendor.strip()})",
            version=device.version.strip(), memory=int(device.global_mem_size),
            fp64=has_fp64(device), fp16="cl_khr_fp16" in device.extensions))
    return out


# PoCL's CPU device takes its worker-thread count from these when the platform loads
# (POCL_MAX_PTHREAD_COUNT up to PoCL 3, POCL_CPU_MAX_CU_COUNT from PoCL 4 on)
POCL_THREAD_VARS = ("POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT")


def set_pocl_threads(n: int) -> None:
    """ember.set_num_threads(n) for PoCL's CPU devices: set PoCL's variables, which it
    reads once per process, when the OpenCL platform loads.  If it has loaded already
    (pyopencl imported), a PoCL CPU device running another count keeps it: warn."""
    for var in POCL_THREAD_VARS:
        os.environ[var] = str(n)
    cl = sys.modules.get("pyopencl")
    if cl is None:
        return                  # PoCL has not loaded: it will read the count when it does
    try:
        found = discover(cl)[1]
    except Exception:  # noqa: BLE001  (no platform: nothing runs threads here)
        return
    for index, (platform, device) in enumerate(found):
        if "Portable Computing Language" not in platform.name or \
                not device.type & cl.device_type.CPU:
            continue
        have = int(device.max_compute_units)
        if have != n:
            warnings.warn(
                f"ember.set_num_threads({n}): opencl:{index} ({device.name.strip()}, PoCL) "
                f"keeps its {have} threads: PoCL reads its thread count once per process, "
                "when OpenCL first loads. Call ember.set_num_threads before the first "
                "OpenCL op, or set POCL_MAX_PTHREAD_COUNT (PoCL 3) / POCL_CPU_MAX_CU_COUNT "
                "(PoCL 4+) before Python starts; processes started from now on use "
                f"{n}.", EmberWarning, stacklevel=6)
