"""The caches under OpenCL that are not ember's: PoCL's kernel cache and PyOpenCL's.

PoCL keeps compiled kernels in $POCL_CACHE_DIR (else $XDG_CACHE_HOME/pocl/kcache, else
~/.cache/pocl/kcache) and reports no device at all when it cannot write there; PyOpenCL
keeps its kernel-launch code in a SQLite file under $XDG_CACHE_HOME/pytools (else
~/.cache/pytools) and fails every kernel when that folder cannot be made or the file is
not a database.  prepare() runs before PyOpenCL is imported and, where a folder cannot be
written, points PoCL to a private temporary folder and turns PyOpenCL's cache off, warning
once: OpenCL then works, compiling again in every process.  The doctor check finds
corrupted cache files (a truncated kernel makes PoCL abort the process) and names the
command that clears them.

prepare() also sets POCL_WORK_GROUP_SPECIALIZATION=0 unless the user set it: PoCL then
compiles one generic work-group function per kernel (not one per local size), which is
what a program binary carries, so programs loaded from ember's binary cache (binaries.py,
filled by `ember warmup`) launch without compiling. Measured on the demo (3 epochs, side
by side on a loaded 2-core machine): the first epoch with every cache empty is ~15%
slower (generic functions cost more to compile: 260 s against 230 s, 71 s against 58 s of
CPU), later epochs no slower (2.2-2.5 s against 2.8-3.7 s), and after `ember warmup` a
process with an empty PoCL cache runs its first epoch in 4.2 s instead of minutes.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

_MAGIC = {".so": b"\x7fELF", ".bc": b"BC\xc0\xde"}
_SQLITE = b"SQLite format 3\x00"
MAX_SCANNED = 50_000            # files of the PoCL cache looked at by the doctor check
SCAN_BUDGET_S = 1.0             # ... and seconds spent on them
_prepared = False
SPECIALIZATION = "POCL_WORK_GROUP_SPECIALIZATION"


def _home_cache() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg else Path.home() / ".cache"


def pocl_dir() -> Path:
    configured = os.environ.get("POCL_CACHE_DIR", "").strip()
    return Path(configured) if configured else _home_cache() / "pocl" / "kcache"


def pytools_dir() -> Path:
    return _home_cache() / "pytools"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _databases(folder: Path) -> list[Path]:
    try:
        return sorted(folder.glob("pdict-*.sqlite"))
    except OSError:
        return []


def _not_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_SQLITE))
    except OSError:
        return True
    return bool(head) and head != _SQLITE     # an empty file is one SQLite will create


def prepare() -> None:
    """Before PyOpenCL is imported: fall back from caches that cannot work (once)."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    doctor = sys.modules.get("ember.tools.doctor")
    if getattr(doctor, "DIAGNOSING", False) and "POCL_KERNEL_CACHE" not in os.environ:
        # the doctor diagnoses PoCL's cache: its own probe must not read a corrupted
        # entry (PoCL aborts the process on some)
        os.environ["POCL_KERNEL_CACHE"] = "0"
    # One generic work-group function per kernel instead of one per local size: PoCL then
    # compiles a kernel once, and that compile travels inside the program binary that
    # ember's cache keeps (binaries.py), so a later process launches it without compiling.
    os.environ.setdefault(SPECIALIZATION, "0")
    notes = []
    pocl = pocl_dir()
    if not _writable(pocl):
        private = tempfile.mkdtemp(prefix="ember-pocl-")
        atexit.register(shutil.rmtree, private, ignore_errors=True)
        os.environ["POCL_CACHE_DIR"] = private
        notes.append(f"PoCL's kernel cache {pocl} cannot be written (kernels are compiled "
                     "again in every process; set POCL_CACHE_DIR to a writable folder)")
    if not os.environ.get("PYOPENCL_NO_CACHE"):
        folder = pytools_dir()
        broken = [p for p in _databases(folder) if _not_sqlite(p)]
        if not _writable(folder) or broken:
            os.environ["PYOPENCL_NO_CACHE"] = "1"
            cl = sys.modules.get("pyopencl")   # imported already: it read the variable
            if cl is not None:
                cl._PYOPENCL_NO_CACHE = True
            why = (f"{', '.join(map(str, broken))} is not a database (clear it: "
                   f"rm -f {' '.join(map(str, broken))})" if broken
                   else f"{folder} cannot be written")
            notes.append(f"PyOpenCL's cache is off: {why}")
    if notes:
        warnings.warn("ember (opencl): " + "; ".join(notes), RuntimeWarning, stacklevel=3)


# --- ember doctor --------------------------------------------------------------------------

def _scan(path: str) -> list:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _program_dirs(folder: Path) -> list[str]:
    """PoCL's programs (kcache/XX/HASH/...), newest first, plus the folder itself for any
    kernel written above that depth."""
    programs = []
    for top in _scan(str(folder)):
        if not top.is_dir(follow_symlinks=False):
            continue
        for entry in _scan(top.path):
            try:
                if entry.is_dir(follow_symlinks=False):
                    programs.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
            except OSError:
                continue
    programs.sort(reverse=True)
    return [path for _, path in programs]


def _kernels_in(path: str, depth: int | None = None):
    """(path, magic) of the compiled kernels under path (depth levels of it, all if None)."""
    stack = [(path, 0)]
    while stack:
        where, level = stack.pop()
        for entry in _scan(where):
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth is None or level + 1 < depth:
                        stack.append((entry.path, level + 1))
                    continue
            except OSError:
                continue
            magic = _MAGIC.get(os.path.splitext(entry.name)[1])
            if magic is not None:
                yield entry.path, magic


def _kernel_sound(path: str, magic: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            if magic == _MAGIC[".so"]:      # an ELF header says where the file must end
                head = fh.read(64)
                return head.startswith(magic) and _whole(head, os.fstat(fh.fileno()).st_size)
            data = fh.read()
    except OSError:
        return False
    return data.startswith(magic) and _whole(data)


def _pocl_findings() -> list[dict]:
    folder = pocl_dir()
    if not folder.is_dir():
        return []
    # a cache of years holds tens of thousands of kernels (1.8 GB, 73,000 files took 22 s
    # to read whole): the newest are checked first (a crash while writing leaves the newest
    # truncated), within a time budget, and the finding says how many were looked at
    programs = _program_dirs(folder)
    bad, scanned, looked = [], 0, 0
    deadline = time.monotonic() + SCAN_BUDGET_S
    for where, depth in [(str(folder), 2)] + [(p, None) for p in programs]:
        if scanned >= MAX_SCANNED or time.monotonic() > deadline:
            break
        looked += where != str(folder)
        for path, magic in _kernels_in(where, depth):
            scanned += 1
            if not _kernel_sound(path, magic):
                bad.append(path)
    if not bad:
        seen = (f"{scanned} compiled kernels checked" if looked == len(programs) else
                f"{scanned} compiled kernels of the newest {looked} of {len(programs)} "
                f"programs checked (the doctor's {SCAN_BUDGET_S:g}-s budget)")
        return [{"reference": "opencl-pocl-cache", "severity": "ok",
                 "message": f"PoCL's kernel cache {folder} looks sound", "seen": seen}]
    return [{"reference": "opencl-pocl-cache-corrupt", "severity": "problem",
             "message": f"PoCL's kernel cache {folder} holds {len(bad)} truncated or "
                        "corrupted kernel files; PoCL fails (or aborts the process) when it "
                        "meets one",
             "seen": ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""),
             "fix": f"rm -rf {folder}   (PoCL rebuilds it)"}]


def _pyopencl_findings() -> list[dict]:
    import sqlite3
    out = []
    for path in _databases(pytools_dir()):
        problem = None
        if _not_sqlite(path):
            problem = "is not a SQLite database"
        else:
            try:
                with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                    result = db.execute("PRAGMA quick_check").fetchone()
                if result and result[0] != "ok":
                    problem = f"fails SQLite's check ({result[0]})"
            except sqlite3.Error as exc:
                problem = f"cannot be read by SQLite ({exc})"
        if problem is not None:
            out.append({"reference": "opencl-pyopencl-cache-corrupt", "severity": "problem",
                        "message": f"PyOpenCL's cache file {path} {problem}; every OpenCL "
                                   "kernel fails while it is there (ember turns the cache off "
                                   "and warns)",
                        "seen": str(path), "fix": f"rm -f {path}*"})
    return out


def _writable_findings() -> list[dict]:
    out = []
    for what, folder in (("PoCL's kernel cache", pocl_dir()),
                         ("PyOpenCL's cache", pytools_dir())):
        if not _writable(folder):
            out.append({"reference": "opencl-cache-unwritable", "severity": "warning",
                        "message": f"{what} folder {folder} cannot be written: ember runs "
                                   "OpenCL without it, compiling kernels again in every "
                                   "process", "seen": str(folder),
                        "fix": f"mkdir -p {folder} && chmod u+w {folder}   (or set "
                               "XDG_CACHE_HOME / POCL_CACHE_DIR to a writable folder)"})
    return out


def _whole(data: bytes, size: int | None = None) -> bool:
    """Whether a compiled kernel (ELF object or LLVM bitcode) reaches the end it claims;
    an ELF file can be judged from its 64-byte header and its size."""
    size = len(data) if size is None else size
    if data.startswith(b"\x7fELF"):
        if len(data) < 64 or data[5] != 1:        # little-endian is all PoCL writes here
            return len(data) >= 64
        wide = data[4] == 2
        shoff = int.from_bytes(data[0x28:0x30] if wide else data[0x20:0x24], "little")
        entsize, count = (int.from_bytes(data[i:i + 2], "little")
                          for i in ((0x3A, 0x3C) if wide else (0x2E, 0x30)))
        return shoff + entsize * count <= size
    # bitcode: after the magic, top-level blocks, each giving its length in 32-bit words
    bits, end = 32, len(data) * 8

    def read(n: int) -> int:
        nonlocal bits
        word = int.from_bytes(data[bits // 8:bits // 8 + 9], "little") >> (bits % 8)
        bits += n
        return word & ((1 << n) - 1)

    def vbr(n: int) -> int:
        value, shift = 0, 0
        while True:
            chunk = read(n)
            value |= (chunk & ((1 << (n - 1)) - 1)) << shift
            shift += n - 1
            if not chunk >> (n - 1) or shift > 64:
                return value

    while bits + 2 <= end:
        if read(2) != 1:                          # ENTER_SUBBLOCK, or the file is broken
            return False
        vbr(8)
        vbr(4)
        bits = -(-bits // 32) * 32
        bits += 32 + 32 * read(32)
    return bits == end


def check() -> list[dict]:
    """Findings about the caches of PoCL and PyOpenCL (for `ember doctor`)."""
    return _pocl_findings() + _pyopencl_findings() + _writable_findings()
