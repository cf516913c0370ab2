"""Per-device tuning choices (which matmul structure is fastest) kept across processes.

Timing the candidates costs ~0.2-0.5 s per device (program builds included), so the winner
is saved in `opencl-tuning.json` under the cache directory: $EMBER_CACHE_DIR, else
$XDG_CACHE_HOME/ember, else ~/.cache/ember. EMBER_CACHE_DIR=off keeps nothing on disk.
An entry is keyed by everything that can change the answer: platform, device, driver and
OpenCL versions, compute units and PoCL's thread count. A missing, unreadable, foreign
or hostile file (deep JSON, wrong types, huge numbers, a FIFO or /dev/zero in its place)
only means timing again; writes go through a temporary file and a rename, so a crash or
two processes at once never leave a half-written file.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from ember._cachefile import cache_dir, read_json, write_json

FILE = "opencl-tuning.json"
MAX_BYTES = 1 << 20        # a few hundred devices' entries; anything larger is not ours


def device_key(device) -> str:
    parts = [device.platform.name, device.name, device.driver_version, device.version,
             str(device.max_compute_units), os.environ.get("POCL_MAX_PTHREAD_COUNT", "")]
    return " | ".join(p.strip() for p in parts)


def _read(path: Path) -> dict:
    """The cache file's valid entries: {device key: {name: (choice, times)}}.

    Only a regular file of at most MAX_BYTES is read (not a FIFO, which would block, nor
    /dev/zero); anything unreadable, malformed or out of schema counts as absent, so a bad
    file costs one new timing and is rewritten whole by the next store()."""
    data = read_json(path, MAX_BYTES)
    if not isinstance(data, dict):
        return {}
    out = {}
    for key, entry in data.items():
        valid = _entry(entry)
        if valid:
            out[key] = valid
    return out


def _entry(entry) -> dict:
    """{name: (choice, times)} of one device's entry, the invalid parts dropped."""
    if not isinstance(entry, dict):
        return {}
    out = {}
    for name, found in entry.items():
        if not isinstance(found, dict) or not isinstance(found.get("choice"), str):
            continue
        out[name] = (found["choice"], dict(_seconds(found.get("times"))))
    return out


def _seconds(times):
    """(name, seconds) pairs of a times dict that are finite non-negative numbers."""
    if not isinstance(times, dict):
        return
    for key, value in times.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        try:
            value = float(value)
        except OverflowError:      # 10**400 parses as an int that no float holds
            continue
        if math.isfinite(value) and value >= 0:
            yield str(key), value


def load(device, name: str, allowed) -> tuple[str, dict] | None:
    """(choice, times in seconds) saved for this device and `name`, if valid."""
    folder = cache_dir()
    if folder is None:
        return None
    found = _read(folder / FILE).get(device_key(device), {}).get(name)
    if found is None or found[0] not in allowed:
        return None
    return found


def store(device, name: str, choice: str, times: dict) -> None:
    """Save a choice; a cache that cannot be written is skipped (the choice still holds
    for this process)."""
    folder = cache_dir()
    if folder is None:
        return
    path = folder / FILE
    data = {key: {n: {"choice": c, "times": t} for n, (c, t) in entry.items()}
            for key, entry in _read(path).items()}
    entry = data.setdefault(device_key(device), {})
    entry[name] = {"choice": choice, "times": {k: round(v, 6) for k, v in times.items()}}
    write_json(path, data, ".tuning-", indent=1, sort_keys=True)
