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
