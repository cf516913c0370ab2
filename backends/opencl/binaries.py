"""ember's own cache of built OpenCL programs, kept across processes and virtual envs.

Why: building a program from source (clBuildProgram) is the largest part of an OpenCL cold
start (PoCL: ~0.1 s fixed per build on a quiet machine, often 0.5-1 s on a busy one, ~60
builds for the demo). A driver's own cache (PoCL's POCL_CACHE_DIR) is per install, so a new
venv with a new PoCL wheel starts cold; this cache lives in ember's user cache directory
(the folder tuning.py uses: $EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember, else
~/.cache/ember; EMBER_CACHE_DIR=off keeps nothing) under `opencl-binaries/`.

What is stored: the program's binary (clGetProgramInfo(CL_PROGRAM_BINARIES)); the next
process loads it with `cl.Program(ctx, [device], [binary]).build()` (a few ms instead of a
build). PoCL's binary holds the program's IR and, for every kernel, a machine-code
work-group function for a generic local size (asking for the binary compiles them all).
With work-group specialization off (caches.prepare() sets POCL_WORK_GROUP_SPECIALIZATION=0
unless the user chose) a launch uses that generic function, so a program loaded from here
launches without compiling anything (measured: 10 kernels' first launches 0.04 s instead of
3.5 s); with specialization on, PoCL compiles every kernel again per local size at its
first launch. Since asking for a binary compiles unused kernels too, an ordinary run
stores nothing and `ember warmup` stores every program it builds (see storing()).

Key: SHA-256 of the platform (name, version), the device (name, version, driver version)
and the full program source (prelude included), so a new driver, device or source never
reads an old binary.

Safety: an entry is `MAGIC + sha256(payload) + payload`; anything else (truncated, bit
flips, a foreign file, a FIFO, an oversized file) counts as absent and is rebuilt and
rewritten, never raised. A binary the driver refuses is rebuilt from source too. Writes go
to a temporary file in the same folder and are renamed into place (atomic), so concurrent
writers of the same entry leave one whole entry. The folder is bounded (EMBER_OPENCL_
BINARY_CACHE_MB, default 256 MB): after a store the oldest entries (by modification time;
a hit refreshes it) are removed until the total fits.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

from ember._cachefile import read_bytes

from . import tuning

FOLDER = "opencl-binaries"
MAGIC = b"EMBER-CL-BIN/1\n"
SUFFIX = ".bin"
DEFAULT_LIMIT_MB = 256
MAX_ENTRY_BYTES = 64 << 20          # no program binary of ours comes near this
SPECIALIZATION = "POCL_WORK_GROUP_SPECIALIZATION"
EAGER_KERNELS = 0                   # a run stores programs of at most this many kernels


def folder() -> Path | None:
    base = tuning.cache_dir()
    return None if base is None else base / FOLDER


def limit_bytes() -> int:
    raw = os.environ.get("EMBER_OPENCL_BINARY_CACHE_MB", "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_LIMIT_MB
    except ValueError:
        mb = DEFAULT_LIMIT_MB
    return max(0, int(mb * (1 << 20)))


def storing(kernels: int) -> bool:
    """Whether a program of `kernels` kernels just built from source is stored now.

    Asking PoCL for a binary compiles every kernel of the program (for a generic
    work-group size), used or not. An elementwise program holds ~20 layout variants of
    which a run uses 1-6: compiling all of them on a cold start cost the demo 3.5x the
    compiles it needs (379 kernels for 109 launched; storing programs of up to 8 kernels
    still doubled the demo's compile CPU time, and even storing only single-kernel
    programs made the cold first epoch 13% slower: 190 s against 168 s side by side on a
    loaded machine, the binary's compile costing more than a launch's). So an ordinary
    run stores nothing (EAGER_KERNELS = 0) and `ember warmup` (EMBER_OPENCL_STORE_ALL=1),
    whose point is building ahead of time, stores every program; every run reads. With
    PoCL's work-group specialization on (POCL_WORK_GROUP_SPECIALIZATION=1,
    which caches.prepare() turns off unless the user set it) each launch compiles a
    specialised kernel anyway, so nothing is stored (entries are still read)."""
    if os.environ.get(SPECIALIZATION, "0").strip() not in ("0", ""):
        return False
    if os.environ.get("EMBER_OPENCL_STORE_ALL", "").strip() in ("1", "yes", "on"):
        return True
    return kernels <= EAGER_KERNELS


def device_identity(device) -> str:
    """Everything about the device and its driver that can change a binary."""
    platform = device.platform
    parts = [platform.name, platform.version, device.name, device.version,
             device.driver_version, os.environ.get(SPECIALIZATION, "")]
    return " | ".join(str(p).strip() for p in parts)


def entry_key(identity: str, source: str, options: str = "") -> str:
    h = hashlib.sha256()
    for part in (identity, options, source):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _pack(binary: bytes) -> bytes:
    return MAGIC + hashlib.sha256(binary).digest() + binary


def _unpack(data: bytes) -> bytes | None:
    head = len(MAGIC) + 32
    if len(data) <= head or not data.startswith(MAGIC):
        return None
    digest, binary = data[len(MAGIC):head], data[head:]
    return binary if hashlib.sha256(binary).digest() == digest else None


def read(key: str) -> bytes | None:
    """The binary stored under `key`, or None when absent, unreadable or corrupt."""
    base = folder()
    if base is None:
        return None
    path = base / (key + SUFFIX)
    data = read_bytes(path, MAX_ENTRY_BYTES + 64)
    if data is None:
        return None
    binary = _unpack(data)
    if binary is not None:
        try:
            os.utime(path)           # recently used: evicted last
        except OSError:
            pass
    return binary


def write(key: str, binary: bytes) -> None:
    """Store `binary` under `key` (atomically), then evict the oldest entries past the
    size bound. A folder that cannot be written is skipped: the program still holds for
    this process."""
    base = folder()
    if base is None or not binary or len(binary) > MAX_ENTRY_BYTES:
        return
    limit = limit_bytes()
    if limit <= 0:
        return
    try:
        base.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=base)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_pack(binary))
            os.replace(tmp, base / (key + SUFFIX))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        evict(base, limit)
    except OSError:
        pass


def evict(base: Path, limit: int) -> None:
    """Remove the least recently used entries until the folder's entries fit in `limit`."""
    entries = []
    try:
        with os.scandir(base) as it:
            for e in it:
                if not e.name.endswith(SUFFIX) or e.name.startswith(".tmp-"):
                    continue
                try:
                    info = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    entries.append((info.st_mtime_ns, e.name, info.st_size))
    except OSError:
        return
    total = sum(size for _, _, size in entries)
    for _, name, size in sorted(entries):
        if total <= limit:
            break
        try:
            os.unlink(base / name)
        except OSError:        # another process removed it first
            pass
        total -= size


def build(cl, context, device, identity: str, source: str):
    """(program, from_cache): `source` built, from ember's binary cache when a valid entry
    exists, else from source (and then stored). Raises cl.RuntimeError only when the source
    itself does not build."""
    key = entry_key(identity, source)
    binary = read(key)
    if binary is not None:
        try:
            return cl.Program(context, [device], [binary]).build(), True
        except cl.Error:         # a binary the driver refuses: build it again from source
            pass
    program = cl.Program(context, source).build()
    try:
        if not storing(program.get_info(cl.program_info.NUM_KERNELS)):
            return program, False
        built = program.get_info(cl.program_info.BINARIES)
    except cl.Error:
        return program, False
    if built and built[0]:
        write(key, bytes(built[0]))
    return program, False
