"""ember's cache folder and the small JSON files kept in it (OpenCL tuning choices, the CuPy
probe's facts): $EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember, else ~/.cache/ember;
EMBER_CACHE_DIR=off (or none, 0) keeps nothing on disk.

A missing, unreadable, foreign or hostile file (deep JSON, a FIFO or /dev/zero in its place,
a huge file) reads as absent: it only costs the work the cache would have spared.  Writes go
through a temporary file and a rename, so a crash or two processes at once never leave a
half-written file (the last writer wins)."""
from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path


def cache_dir() -> Path | None:
    configured = os.environ.get("EMBER_CACHE_DIR", "").strip()
    if configured.lower() in ("off", "none", "0"):
        return None
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ember"


def read_bytes(path, max_bytes: int) -> bytes | None:
    """The contents of a regular file of at most max_bytes, else None (never blocks on a
    FIFO, never reads a device)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(max_bytes + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_json(path, max_bytes: int):
    """The JSON value of a regular file of at most max_bytes, else None."""
    data = read_bytes(path, max_bytes)
    if data is None or len(data) > max_bytes:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


def write_json(path, data, prefix: str, **dump) -> bool:
    """Write data as JSON through a temporary file and a rename; False where the folder
    cannot be made or written (the caller goes on without its cache)."""
    folder = os.path.dirname(os.fspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, **dump)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, TypeError, ValueError):
        return False
    return True
