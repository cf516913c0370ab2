"""Run as a child process by the probe: imports CuPy, asks the driver, prints facts as JSON.

A separate process because the driver query is the step that can hang or crash (a wedged
GPU, a broken driver install); the parent waits with a timeout and survives either.
It imports nothing from ember, so it also works when ember itself is half broken.
"""
import json
import os
import sys

# run by file path: this folder is sys.path[0]; keep its modules from shadowing anything
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(
    os.path.abspath(__file__))]


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


def _attempt(call):
    """(value, '') or (None, the error) of call()."""
    try:
        return call(), ""
    except BaseException as exc:  # noqa: BLE001  (each answer is a fact, errors too)
        return None, _error(exc)


def _nccl_version():
    from cupy_backends.cuda.libs import nccl
    return nccl.get_version()


def _cufft_version():
    from cupy.cuda import cufft
    return cufft.getVersion()


def _cudnn_path():
    # CuPy 14 no longer wraps cuDNN: report whether the system has one, for the record
    import ctypes.util
    found = ctypes.util.find_library("cudnn")
    if not found:
        raise OSError("libcudnn not found (CuPy 14 does not use cuDNN)")
    return found


def toolkit(cupy) -> dict:
    """What cupy.show_config reports, read with CuPy's own loaders: the CUDA root, the
    runtime CuPy links against and the one installed locally, and per library whether
    it loads (CuPy 14 loads them through cuda-pathfinder)."""
    cuda = cupy.cuda
    facts: dict = {}
    for key, call in (("cuda_root", cuda.get_cuda_path),
                      ("nvcc", lambda: cupy._environment.get_nvcc_path()),
                      ("build_version", cuda.driver.get_build_version),
                      ("local_runtime_version", cuda.get_local_runtime_version)):
        facts[key], error = _attempt(call)
        if error:
            facts[key + "_error"] = error
    try:
        from cuda import pathfinder
    except ImportError:
        pathfinder = None
    calls = {"nvrtc": (lambda: cuda.nvrtc.getVersion(), "nvrtc"),
             "cublas": (None, "cublas"),
             "curand": (lambda: cuda.curand.getVersion(), "curand"),
             "cusolver": (lambda: cuda.cusolver._getVersion(), "cusolver"),
             "cufft": (_cufft_version, "cufft"),
             "nccl": (_nccl_version, None),
             "cudnn": (_cudnn_path, None)}
    libraries = {}
    for name, (call, libname) in calls.items():
        entry: dict = {}
        if call is not None:
            value, error = _attempt(call)
            entry = {"available": not error, "version": value if not error else None}
            if error:
                entry["error"] = error
        if pathfinder is not None and libname is not None:
            loaded, error = _attempt(lambda n=libname: pathfinder.load_nvidia_dynamic_lib(n))
            entry["path"] = getattr(loaded, "abs_path", None) if loaded else None
            if call is None:
                entry["available"] = not error
                if error:
                    entry["error"] = error
        libraries[name] = entry
    facts["libraries"] = libraries
    return facts


def query() -> dict:
    facts: dict = {}
    try:
        import cupy
    except BaseException as exc:  # noqa: BLE001  (ImportError, OSError for a missing libcuda...)
        facts["import_error"] = _error(exc)
        return facts
    facts["cupy_version"] = cupy.__version__
    runtime = cupy.cuda.runtime
    facts["is_hip"] = bool(runtime.is_hip)
    if not runtime.is_hip:
        try:
            facts["toolkit"] = toolkit(cupy)
        except BaseException as exc:  # noqa: BLE001  (facts for the report, never fatal)
            facts["toolkit"] = {"error": _error(exc)}
    for key, call in (("runtime_version", runtime.runtimeGetVersion),
                      ("driver_version", runtime.driverGetVersion)):
        try:
            facts[key] = int(call())
        except Exception as exc:  # noqa: BLE001  (each answer is a fact, errors too)
            facts[key + "_error"] = _error(exc)
    try:
        count = int(runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001  (the error text is what the probe decodes)
        facts["device_error"] = _error(exc)
        return facts
    facts["device_count"] = count
    devices = []
    for i in range(count):
        try:
            props = runtime.getDeviceProperties(i)
        except Exception as exc:  # noqa: BLE001  (reported as a fact)
            facts["device_error"] = f"device {i}: {_error(exc)}"
            break
        name = props.get("name", b"")
        arch = props.get("gcnArchName", b"") if runtime.is_hip else b""
        devices.append({
            "name": name.decode(errors="replace") if isinstance(name, bytes) else str(name),
            "memory": int(props.get("totalGlobalMem", 0)),
            "arch": f"{props.get('major', 0)}.{props.get('minor', 0)}",
            "gcn_arch": arch.decode(errors="replace") if isinstance(arch, bytes) else str(arch),
        })
    facts["devices"] = devices
    return facts


if __name__ == "__main__":
    print(json.dumps(query()))
