"""ember.save / ember.load: checkpoints as safetensors files with a JSON structure; no pickle
(whole objects the format cannot hold go to PyTorch's zip format: io/pickled.py).

Format (version 1; docs/checkpoint-format.md has the full text)
----------------------------------------------------------------
A checkpoint is a valid safetensors file, readable by any safetensors tool:

    8 bytes    N, the header length (unsigned 64-bit little-endian)
    N bytes    the header: a UTF-8 JSON object (space padded)
                 "__metadata__": {"format": "ember", "ember_format_version": "1",
                                  "ember_structure": <JSON text>, "ember_sha256": <hex>}
                 "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
    the rest   every tensor's bytes, row-major, little-endian, back to back

`ember_structure` is the saved object in tagged JSON: null, booleans, strings, finite
floats and integers stand for themselves; a JSON list is a list; every other value is an
object with one tag key: {"$dict": [[key, value], ...]} (keys keep their types and order),
{"$odict": [...]} (an OrderedDict), {"$tuple": [...]}, {"$float": "nan" | "inf" | "-inf"},
{"$dtype": "float32"}, {"$ndarray": name} (a NumPy array) and {"$tensor": name, "device":
"cpu", "requires_grad": false, "parameter": false} (an ember tensor; tensors sharing one
buffer share one name).  Tensor names are the dotted path to the first use
("model.fc.weight").  `ember_sha256` is the SHA-256 of the structure text followed, for
each tensor in name order, by its name, dtype, shape and bytes; any change to the content
makes loading fail.

Loading never executes anything from the file and never needs much more memory than the
file's own size: the header is parsed to its schema only (io/safetensors.py), every size and
offset is checked before anything is read, the checksum is verified before the structure
is parsed, and the structure's element count is bounded by its length before json parses
it.  Every failure is a CheckpointError saying what was expected and found.  `load` also
reads plain safetensors files (a dict of tensors) and PyTorch zip checkpoints
(io/torch_zip.py: a restricted pickle interpreter, no torch, no unpickling, with PyTorch
2.6's weights_only allowlist; weights_only=False unpickles fully: io/pickled.py).

Saving writes `.NAME.<pid>-<random>.tmp` in the target's folder, fsyncs it and renames it
over the target, so a crash leaves the old checkpoint, never a half-written one; the next
save of the same target removes temporary files whose writer is gone.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import secrets
import stat
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes as D
from ..device import Device, as_device
from ..errors import (
    CheckpointError,
    DeviceUnavailableError,
    EmberError,
    EmberTypeError,
    EmberValueError,
    brief,
)
from ..tensor import Tensor
from . import safetensors as S
from .record import MAX_DEPTH, HashCounter, Saved, colliding_keys
from .torch_zip import (
    WeightsOnlyError,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)

__all__ = ["FORMAT_VERSION", "MAX_HEADER_BYTES", "CheckpointDeviceError", "WeightsOnlyError",
           "add_safe_globals", "clear_safe_globals", "get_safe_globals", "load",
           "safe_globals", "save"]

FORMAT_VERSION = "1"
MAX_HEADER_BYTES = S.MAX_HEADER_BYTES
# the structure's json.loads may build at most this many bytes of Python objects per byte
# of its text (legit structures need ~2), plus a floor for small ones
_STRUCTURE_RATIO, _STRUCTURE_FLOOR = 4, 64 << 20

# ember dtype name <-> safetensors dtype code
_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
          "int64": "I64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
          "float64": "F64", "complex64": "C64"}
_TAGS = ("$dict", "$odict", "$tuple", "$float", "$dtype", "$ndarray", "$tensor")
_TENSOR_KEYS = {"$tensor", "device", "requires_grad", "parameter"}

PathLike = str | os.PathLike
# what a full disk, a full quota and a file size limit look like (no EDQUOT on Windows)
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


class _NotPlain(EmberTypeError):
    """A value the safe format cannot hold: save pickles the object instead."""


class CheckpointDeviceError(CheckpointError, DeviceUnavailableError):
    """A tensor in the file was saved on a device this machine cannot use (or names no
    device at all); map_location places it elsewhere."""


# --- saving --------------------------------------------------------------------------------

class _Encoder:
    """Walks the object once: tagged JSON for the structure, host arrays for the tensors."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self._names: dict[int, str] = {}      # id of a native buffer -> its tensor name
        self._keep: list = []                 # keeps those ids valid during the walk

    def encode(self, obj, path: str, depth: int = 0):
        if depth > MAX_DEPTH:
            raise _NotPlain(f"ember.save: {path or 'the object'} nests deeper than "
                                 f"{MAX_DEPTH} levels; flatten it (self-references are not "
                                 "supported)")
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            value = float(obj)
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, Tensor):
            return self._tensor(obj, path)
        if isinstance(obj, np.ndarray):
            return {"$ndarray": self._array(obj, obj, path)}
        if isinstance(obj, D.DType):
            return {"$dtype": obj.name}
        if isinstance(obj, dict):
            tag = "$odict" if isinstance(obj, OrderedDict) else "$dict"
            items = []
            for key, value in obj.items():
                if not (key is None or isinstance(key, (str, int, float, bool))):
                    raise _NotPlain(
                        f"ember.save: {path or 'the object'} has a key of type "
                        f"{type(key).__name__}; supported keys are str, int, float, bool "
                        "and None (convert the key, e.g. str(key))")
                items.append([self.encode(key, path, depth + 1),
                              self.encode(value, _join(path, key), depth + 1)])
            return {tag: items}
        if isinstance(obj, (list, tuple)):
            values = [self.encode(v, _join(path, i), depth + 1) for i, v in enumerate(obj)]
            return {"$tuple": values} if isinstance(obj, tuple) else values
        raise _NotPlain(f"ember.save: {path or 'the object'} is a {type(obj).__name__}, "
                        "which the safe format does not hold")

    def _tensor(self, t: Tensor, path: str) -> dict:
        name = self._array(t._data, t, path)
        from ..nn.parameter import Parameter
        return {"$tensor": name, "device": str(t.device), "requires_grad": t.requires_grad,
                "parameter": isinstance(t, Parameter)}

    def _array(self, native, value, path: str) -> str:
        name = self._names.get(id(native))
        if name is None:
            host = value.detach().numpy() if isinstance(value, Tensor) else value
            # the file is little-endian; from_numpy_dtype names the dtypes it supports
            host = np.asarray(host, dtype=host.dtype.newbyteorder("<"), order="C")
            if D.from_numpy_dtype(host.dtype).name not in _CODES:
                # complex128 has no safetensors code (C64 only): the object is written in
                # PyTorch's zip format instead, which holds every dtype (torch.load reads it)
                raise _NotPlain(f"{host.dtype} has no safetensors code")
            name = path or "tensor"
            while name in self.arrays or name == "__metadata__":
                name += "'"
            self.arrays[name] = host
            self._names[id(native)] = name
            self._keep.append(native)
        return name


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _digest(structure: str, arrays: dict[str, np.ndarray], codes: dict[str, str]) -> str:
    h = hashlib.sha256()
    for i in range(0, len(structure), 1 << 20):     # no second copy of a large structure
        h.update(structure[i:i + (1 << 20)].encode())
    for name in sorted(arrays):
        a = arrays[name]
        h.update(json.dumps([name, codes[name], list(a.shape)]).encode())
        h.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
    return h.hexdigest()


def save(obj: Any, f: PathLike | Any) -> None:
    """Save obj to f: a path, or a binary file object open for writing (open(p, "wb"),
    io.BytesIO()).

    Tensors, state dicts, optimizer state, NumPy arrays, dtypes, numbers, strings and
    dicts, lists and tuples of them are written in ember's safe format (a safetensors file,
    docs/checkpoint-format.md).  Any other picklable object (a whole nn.Module, a dataclass,
    an argparse Namespace, a dict holding such objects) is written as torch.save writes it:
    PyTorch's zip format (io/pickled.py), which torch.load reads too; loading it back needs
    weights_only=False, or its classes marked safe with
    ember.serialization.add_safe_globals, as in PyTorch 2.6+.

    To a path the write is atomic: f holds either its previous content or the whole new
    checkpoint.  A new file's mode follows the umask; a replaced file keeps its mode.
    """
    encoder = _Encoder()
    try:
        tree = encoder.encode(obj, "")
    except _NotPlain:
        from . import pickled
        data, storages, size = pickled.prepare(obj)
        _write(f, lambda fh: pickled.write(fh, data, storages), size)
        return
    structure = json.dumps(tree, allow_nan=False, separators=(",", ":"))
    arrays = encoder.arrays
    codes = {name: _CODES[D.from_numpy_dtype(a.dtype).name] for name, a in arrays.items()}
    metadata = {"format": "ember", "ember_format_version": FORMAT_VERSION,
                "ember_structure": structure, "ember_sha256": _digest(structure, arrays, codes)}
    head, ordered, size = S.layout(arrays, codes, metadata)
    _write(f, lambda fh: S.write(fh, head, ordered), size)


def _write(f, write: Callable, size: int) -> None:
    if hasattr(f, "write"):
        name = getattr(f, "name", None)
        with _disk_full(name if isinstance(name, str) else repr(f), size, None):
            write(f)
            if hasattr(f, "flush"):      # a full disk shows at the flush of buffered files
                f.flush()
        return
    _save_atomic(_path(f, "save"), write, size)


def _save_atomic(path: str, write: Callable, size: int) -> None:
    directory, base = os.path.split(os.path.abspath(path))
    _remove_stale(directory, base)
    try:
        info = os.stat(path)
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None
    except OSError:
        mode = None
    tmp = os.path.join(directory, f".{base}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    # O_EXCL: never write through someone else's file; mode 0o666 lets the umask decide
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o666)
    try:
        _lock(fd)          # tells _remove_stale in other processes that this one is alive
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with _disk_full(path, size, directory), open(fd, "wb", closefd=False) as fh:
            write(fh)
            fh.flush()
            os.fsync(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)
    _fsync_dir(directory)


@contextlib.contextmanager
def _disk_full(target: str, size: int, directory: str | None):
    """A full disk (or quota, or file size limit) as a CheckpointError with the numbers."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in _FULL:
            raise
        free, kept = "", ""
        if directory is not None:
            kept = "; the previous checkpoint, if any, is untouched"
            with contextlib.suppress(OSError, AttributeError):
                st = os.statvfs(directory)
                free = f", {st.f_bavail * st.f_frsize} bytes are free there"
        raise CheckpointError(
            f"ember.save: could not write {target}: {exc.strerror}; the checkpoint needs "
            f"{size} bytes{free} (free some space, or save elsewhere){kept}") from exc


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:        # Windows: stale files are then left for the user
        return
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _remove_stale(directory: str, base: str) -> None:
    """Delete temporary files of earlier saves of this target whose writer died (kill -9,
    power loss): its pid is gone and nobody holds the file's lock."""
    if os.name != "posix":
        return
    import fcntl
    pattern = re.compile(re.escape(f".{base}.") + r"(\d+)-[0-9a-f]{8}\.tmp")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        candidate = os.path.join(directory, name)
        try:
            fd = os.open(candidate, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.unlink(candidate)
        except OSError:
            pass                    # locked: its writer is alive after all
        finally:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _fsync_dir(directory: str) -> None:
    # makes the rename itself durable; not every platform can open a folder
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _path(f, what: str) -> str:
    if not isinstance(f, (str, os.PathLike)):
        raise EmberTypeError(f"ember.{what}: expected a file path (str or os.PathLike) or a "
                             f"binary file object, got {type(f).__name__}")
    return os.fspath(f)


# --- loading -------------------------------------------------------------------------------

def _bad(name: str, problem: str) -> CheckpointError:
    return CheckpointError(f"ember.load: {name} is not a valid ember checkpoint: {problem}")


def load(f: PathLike | Any, map_location: str | Device | dict | Callable | None = None, *,
         weights_only: bool | None = None, mmap: bool | None = None) -> Any:
    """Load what ember.save wrote, a safetensors file (a dict of tensors) or a PyTorch zip
    checkpoint (torch.save); tensors go to map_location.

    f: a path or a binary file object open for reading.  map_location: None (each tensor
    to the device it was saved from), a device ('cpu', 'opencl:0', a Device) for all, a
    dict {saved device: device}, or a callable fn(cpu_tensor, saved_device_str) returning
    the tensor to use (or None for the default).

    weights_only (None means True, PyTorch 2.6's default): a PyTorch checkpoint may hold
    tensors, storages, dtypes, devices, sizes, plain containers and OrderedDicts, and the
    globals marked safe with ember.serialization.add_safe_globals (or the safe_globals
    context manager); any other global is refused with torch's "Weights only load failed
    ... Unsupported global" (a WeightsOnlyError) before it is imported.  weights_only=False
    unpickles the file fully, as torch.load(weights_only=False): THE FILE CAN RUN ANY CODE,
    so use it only for files from a source you trust.  ember's own format and safetensors
    hold no code, and load the same either way.

    mmap=True: the tensors are memory maps of the file (copy-on-write, as torch maps them:
    pages are read when touched, writes stay in this process) instead of copies read into
    memory: ember's format and safetensors map every tensor, a PyTorch zip checkpoint its
    storages (torch.save stores them uncompressed).  It needs f to be a path; tensors
    placed on another device by map_location are copied there from the map.
    """
    if weights_only is None:
        weights_only = True
    for flag, value in (("weights_only", weights_only), ("mmap", mmap)):
        if value is not None and not isinstance(value, bool):
            raise EmberTypeError(f"ember.load: {flag} must be True, False or None, got "
                                 f"{brief(value, 40)}")
    if mmap and hasattr(f, "read"):
        raise EmberValueError(
            "ember.load: f must be a file path in order to use the mmap argument (got a "
            f"{type(f).__name__}); pass the path, or mmap=False to read the file object")
    with _open(f) as (fh, start, size, name):
        fh.seek(start)
        prefix = fh.read(9)
        mapped = name if mmap else None
        placer = _Placer(name, map_location)
        if prefix[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            if not weights_only:
                from . import pickled
                return pickled.loads(fh, start, size, name, placer._tensor, mapped)
            from . import torch_zip
            memo: dict = {}
            obj = torch_zip.load(fh, start, size, name, mmap_path=mapped,
                                 place=lambda value: placer.fill(value, memo, 0))
            return placer.fill(obj, memo, 0)
        obj = _load_safetensors(fh, start, size, name, prefix, mapped)
    return placer.fill(obj, {}, 0)


@contextlib.contextmanager
def _open(f):
    """(a seekable binary file, where the checkpoint starts in it, its size, its name)."""
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        name = name if isinstance(name, str) else type(f).__name__
        try:
            seekable = f.seekable()
        except (AttributeError, OSError, ValueError):
            seekable = False
        if f.read(0) != b"":
            raise EmberTypeError(f"ember.load: {name} is open in text mode; open it in "
                                 "binary mode ('rb')")
        if not seekable:               # a pipe or socket: read it all
            import io
            f = io.BytesIO(f.read())
        start = f.tell()
        size = f.seek(0, os.SEEK_END) - start
        yield f, start, size, name
        return
    path = _path(f, "load")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise CheckpointError(f"ember.load: no file at {path}; check the path") from None
    except OSError as exc:     # a symlink loop, a permission, a folder on Windows ...
        raise CheckpointError(f"ember.load: cannot open {path}: {exc.strerror or exc}") \
            from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _bad(path, "it is not a regular file")
        fh = open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh, 0, info.st_size, path


def _load_safetensors(fh, start: int, size: int, name: str, prefix: bytes,
                      mapped: str | None = None):
    if len(prefix) >= 9 and prefix[0] == 0x80 and 2 <= prefix[1] <= 5 and prefix[8] != 0x7B:
        raise _bad(name, "it is a bare pickle file (torch.save's legacy format, "
                         "_use_new_zipfile_serialization=False), which ember never unpickles, "
                         "whatever weights_only says; save it as a PyTorch zip checkpoint "
                         "(torch.save's default) or with safetensors, which ember reads")
    try:
        header = S.read_header(fh, start, size)
    except S.HeaderError as exc:
        raise _bad(name, str(exc)) from None
    meta = header.metadata
    if meta is None or meta.get("format") != "ember":
        return _plain(fh, start, name, header, mapped)
    version = meta.get("ember_format_version")
    if version != FORMAT_VERSION:
        raise _bad(name, f"format version {brief(version, 40)}; this ember reads version "
                         f"{FORMAT_VERSION!r} (a newer ember wrote it? upgrade ember)")
    for key in ("ember_structure", "ember_sha256"):
        if key not in meta:
            raise _bad(name, f"the metadata lacks {key!r}")
    arrays = _read_arrays(fh, start, name, header, mapped)
    structure_text = meta["ember_structure"]
    codes = {e.name: e.code for e in header.entries}
    if _digest(structure_text, arrays, codes) != meta["ember_sha256"]:
        raise _bad(name, "its content does not match its SHA-256 checksum (the file was "
                         "corrupted after it was written)")
    structure = _parse_structure(structure_text, name)
    return _Decoder(name, arrays).decode(structure, 0)


def _read_arrays(fh, start: int, name: str, header: S.Header,
                 mapped: str | None = None) -> dict[str, np.ndarray]:
    if mapped is not None:        # mmap=True: copy-on-write maps of the file, read on touch
        base = start + header.data_start
        return {e.name: np.memmap(mapped, dtype=S.np_dtype(e.code), mode="c",
                                  offset=base + e.begin, shape=e.shape)
                if math.prod(e.shape) else np.empty(e.shape, dtype=S.np_dtype(e.code))
                for e in header.entries}
    try:
        return {e.name: S.read_array(fh, start + header.data_start, e)
                for e in sorted(header.entries, key=lambda e: e.begin)}
    except S.HeaderError as exc:
        raise _bad(name, str(exc)) from None


def _plain(fh, start: int, name: str, header: S.Header, mapped: str | None = None) -> OrderedDict:
    """A safetensors file without ember metadata: {name: tensor} in the file's order."""
    arrays = _read_arrays(fh, start, name, header, mapped)
    return OrderedDict((e.name, Saved(arrays[e.name], "cpu", False, False, e.name))
                       for e in header.entries)


def _parse_structure(text: str, name: str):
    # json.loads builds ~60 bytes of objects per container: bound that by the text's
    # length first (brackets inside strings are counted too, which only errs on the safe
    # side), so that `[[],[],...]` is refused before it is built
    containers = text.count("[") + text.count("{")
    cost = 64 * containers + 16 * text.count(",") + 32 * text.count('"')
    if cost > max(_STRUCTURE_RATIO * len(text), _STRUCTURE_FLOOR):
        raise _bad(name, f"the structure holds {containers} containers in {len(text)} "
                         "characters, more than a saved object can (a hostile file?)")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_constant,
                          parse_float=_finite)
    except RecursionError:
        raise _bad(name, "the structure nests too deeply") from None
    except ValueError as exc:    # JSONDecodeError, duplicates, huge ints, NaN
        raise _bad(name, f"the structure is not valid JSON ({exc})") from None


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {brief(key, 100)}")
        out[key] = value
    return out


def _constant(text: str):
    raise ValueError(f"{text} is not JSON (non-finite floats are saved as $float)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text:.40} overflows a float")
    return value


class _Decoder:
    """Rebuilds the saved object from the tagged JSON; tensors stay Saved until placed."""

    def __init__(self, name: str, arrays: dict):
        self.name, self.arrays = name, arrays

    def bad(self, problem: str) -> CheckpointError:
        return _bad(self.name, problem)

    def decode(self, node, depth: int):
        if depth > MAX_DEPTH:
            raise self.bad(f"the structure nests deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        tag = next(iter(node), None)
        if tag == "$tensor":
            return self._tensor(node)
        if tag not in _TAGS or len(node) != 1:
            raise self.bad(f"unexpected structure node {brief(node, 200)}; expected a value or "
                           "an object with exactly one tag key")
        value = node[tag]
        if tag in ("$dict", "$odict"):
            return self._dict(tag, value, depth)
        if tag == "$tuple" and isinstance(value, list):
            return tuple(self.decode(v, depth + 1) for v in value)
        if tag == "$float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag == "$dtype" and isinstance(value, str) and value in _CODES:
            return D.get_dtype(value)
        if tag == "$ndarray" and isinstance(value, str) and value in self.arrays:
            return np.array(self.arrays[value])
        raise self.bad(f"bad {tag} node {brief(node, 200)}")

    def _dict(self, tag: str, value, depth: int) -> dict:
        out = OrderedDict() if tag == "$odict" else {}
        if not isinstance(value, list):
            raise self.bad(f"{tag} holds {type(value).__name__}, expected a list")
        counter = HashCounter()
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.bad(f"{tag} entry {brief(pair, 100)} is not a [key, value] pair")
            key = self.decode(pair[0], depth + 1)
            if not (key is None or isinstance(key, (str, int, float, bool))):
                raise self.bad(f"dict key {brief(key, 100)} has an unsupported type")
            if not counter.add(key):
                raise self.bad(colliding_keys(f"a {tag}"))
            if key in out:
                raise self.bad(f"{tag} has the key {brief(key, 100)} twice")
            out[key] = self.decode(pair[1], depth + 1)
        return out

    def _tensor(self, node: dict) -> Saved:
        name, saved = node["$tensor"], node.get("device")
        requires_grad, parameter = node.get("requires_grad"), node.get("parameter")
        if (set(node) != _TENSOR_KEYS or not isinstance(name, str) or name not in self.arrays
                or not isinstance(saved, str) or not isinstance(requires_grad, bool)
                or not isinstance(parameter, bool)):
            raise self.bad(f"bad tensor node {brief(node, 200)}; expected {{'$tensor': a stored "
                           "tensor's name, 'device': str, 'requires_grad': bool, "
                           "'parameter': bool}")
        return Saved(self.arrays[name], saved, requires_grad, parameter, name)


class _Placer:
    """Turns Saved tensors into tensors on their devices, once the whole file is checked."""

    def __init__(self, name: str, map_location):
        self.name, self.map_location = name, map_location
        self._placed: dict[tuple, Tensor] = {}     # (key, saved device) -> tensor
        self._tensors: dict[tuple, Tensor] = {}    # ... and its autograd flags -> tensor

    def fill(self, obj, memo: dict, depth: int):
        if isinstance(obj, Saved):
            return self._tensor(obj)
        kind = type(obj)
        if kind not in (list, tuple, dict, OrderedDict):
            return obj
        if id(obj) in memo:
            return memo[id(obj)]
        if depth > MAX_DEPTH:
            raise _bad(self.name, f"the saved object nests deeper than {MAX_DEPTH} levels")
        if kind is tuple:
            out = memo[id(obj)] = tuple(self.fill(v, memo, depth + 1) for v in obj)
        elif kind is list:
            out = memo[id(obj)] = []
            out.extend(self.fill(v, memo, depth + 1) for v in obj)
        else:
            out = memo[id(obj)] = kind()
            for key, value in obj.items():
                out[key] = self.fill(value, memo, depth + 1)
        return out

    def _tensor(self, saved: Saved) -> Tensor:
        key = (saved.key, saved.device, saved.requires_grad, saved.parameter)
        t = self._tensors.get(key)
        if t is None:
            placed = self._placed.get(key[:2])
            if placed is None:   # one buffer saved once loads as one shared buffer
                placed = self._placed[key[:2]] = self._place(saved)
            if saved.requires_grad and placed.dtype.category < D.FLOAT:
                raise _bad(self.name, f"tensor {brief(saved.key, 100)} of {placed.dtype.name} is "
                                      "marked requires_grad, which only floating tensors "
                                      "can be")
            if saved.parameter:
                from ..nn.parameter import Parameter
                t = Parameter(placed, requires_grad=saved.requires_grad)
            else:
                t = placed.detach().requires_grad_(True) if saved.requires_grad else placed
            self._tensors[key] = t
        return t

    def _place(self, saved: Saved) -> Tensor:
        from ..ops.creation import from_host
        host = from_host(saved.array, "cpu")      # arrays read from a file are fresh
        target = self.map_location
        if callable(target) and not isinstance(target, (str, Device)):
            out = target(host, saved.device)
            if out is None:
                target = None
            elif isinstance(out, Tensor):
                return out
            else:
                raise EmberTypeError(f"ember.load: map_location returned a "
                                     f"{type(out).__name__} for tensor {brief(saved.key, 100)}; it "
                                     "must return a Tensor or None")
        if isinstance(target, dict):
            target = target.get(saved.device, saved.device)
        try:
            device = as_device(saved.device if target is None else target)
        except EmberError as exc:
            raise CheckpointDeviceError(
                f"ember.load: {self.name} holds tensor {brief(saved.key, 100)} saved on "
                f"{brief(saved.device, 40)}, which is not usable here ({exc}); pass "
                "map_location='cpu' (or another device) to load it elsewhere") from None
        return host if device.type == "cpu" else host.to(device)
