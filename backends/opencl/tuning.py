"""Per-device tuning choices (which matmul structure is fastest) kept across processes.

Timing the candidates costs ~0.2-0.5 s per device (program builds included), so the winner
is saved in `opencl-tuning.json` under the cache directory: $EMBER_CACHE_DIR, else
$XDG_CACHE_HOME/ember, else ~/.cache/ember. EMBER_CACHE_DIR=off keeps nothing on disk.
An entry is keyed by everything that can change the answer: platform, device, driver and
OpenCL versions, compute units and PoCL's thread count. A missing, unreadable or foreign
file only means timing again; writes go through a temporary file and a rename, so a crash
or two processes at once never leave a half-written file.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

FILE = "opencl-tuning.json"


def cache_dir() -> Path | None:
    configured = os.environ.get("EMBER_CACHE_DIR", "").strip()
    if configured.lower() in ("off", "none", "0"):
        return None
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ember"


def device_key(device) -> str:
    parts = [device.platform.name, device.name, device.driver_version, device.version,
             str(device.max_compute_units), os.environ.get("POCL_MAX_PTHREAD_COUNT", "")]
    return " | ".join(p.strip() for p in parts)


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(device, name: str, allowed) -> tuple[str, dict] | None:
    """(choice, times in seconds) saved for this device and `name`, if valid."""
    folder = cache_dir()
    if folder is None:
        return None
    entry = _read(folder / FILE).get(device_key(device), {})
    found = entry.get(name) if isinstance(entry, dict) else None
    if not isinstance(found, dict) or found.get("choice") not in allowed:
        return None
    times = found.get("times")
    times = {str(k): float(v) for k, v in times.items()
             if isinstance(v, (int, float))} if isinstance(times, dict) else {}
    return found["choice"], times


def store(device, name: str, choice: str, times: dict) -> None:
    """Save a choice; a cache that cannot be written is skipped (the choice still holds
    for this process)."""
    folder = cache_dir()
    if folder is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / FILE
        data = _read(path)
        entry = data.get(device_key(device))
        entry = entry if isinstance(entry, dict) else {}
        entry[name] = {"choice": choice, "times": {k: round(v, 6) for k, v in times.items()}}
        data[device_key(device)] = entry
        fd, tmp = tempfile.mkstemp(prefix=".tuning-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
