"""ember.save / ember.load: checkpoints as safetensors files with a JSON structure; no pickle.

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

Loading never executes anything from the file.  Before the safetensors library sees a
file, the header is checked here: its length against the file size and a 100 MB bound,
the JSON (no duplicate keys, bounded nesting), every dtype, every shape against its byte
count, the offsets (contiguous from 0 to the end of the file), then the structure and
the checksum.  Every failure is a CheckpointError saying what was expected and found.

Saving is atomic: the file is written to a temporary name in the same folder, flushed
to disk (fsync) and renamed over the target, so a crash leaves the old checkpoint (and
perhaps a stray `.NAME.*.tmp` file), never a half-written one.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import stat
import struct
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes as D
from .device import Device, as_device
from .errors import CheckpointError, DeviceUnavailableError, EmberError, EmberTypeError
from .tensor import Tensor

__all__ = ["FORMAT_VERSION", "MAX_HEADER_BYTES", "load", "save"]

FORMAT_VERSION = "1"
MAX_HEADER_BYTES = 100_000_000     # the safetensors library's own bound
MAX_DEPTH = 100                    # nesting of the saved structure
MAX_NDIM = 64                      # NumPy's limit
_MAX_DIM = 2**62

# ember dtype name <-> safetensors dtype code
_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
          "int64": "I64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
          "float64": "F64"}
_DTYPES = {code: D.get_dtype(name) for name, code in _CODES.items()}
_TAGS = ("$dict", "$odict", "$tuple", "$float", "$dtype", "$ndarray", "$tensor")

PathLike = str | os.PathLike


# --- saving --------------------------------------------------------------------------------

class _Encoder:
    """Walks the object once: tagged JSON for the structure, host arrays for the tensors."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}
        self._names: dict[int, str] = {}      # id of a native buffer -> its tensor name
        self._keep: list = []                 # keeps those ids valid during the walk

    def encode(self, obj, path: str, depth: int = 0):
        if depth > MAX_DEPTH:
            raise EmberTypeError(f"ember.save: {path or 'the object'} nests deeper than "
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
                    raise EmberTypeError(
                        f"ember.save: {path or 'the object'} has a key of type "
                        f"{type(key).__name__}; supported keys are str, int, float, bool "
                        "and None (convert the key, e.g. str(key))")
                items.append([self.encode(key, path, depth + 1),
                              self.encode(value, _join(path, key), depth + 1)])
            return {tag: items}
        if isinstance(obj, (list, tuple)):
            values = [self.encode(v, _join(path, i), depth + 1) for i, v in enumerate(obj)]
            return {"$tuple": values} if isinstance(obj, tuple) else values
        raise EmberTypeError(
            f"ember.save: cannot save {path or 'the object'} of type {type(obj).__name__}; "
            "a checkpoint holds tensors, NumPy arrays, dtypes, numbers, strings, None and "
            "dicts, lists and tuples of them (save a module or optimizer as its "
            ".state_dict())")

    def _tensor(self, t: Tensor, path: str) -> dict:
        name = self._array(t._data, t, path)
        from .nn.parameter import Parameter
        return {"$tensor": name, "device": str(t.device), "requires_grad": t.requires_grad,
                "parameter": isinstance(t, Parameter)}

    def _array(self, native, value, path: str) -> str:
        name = self._names.get(id(native))
        if name is None:
            host = value.detach().numpy() if isinstance(value, Tensor) else value
            # the file is little-endian; from_numpy_dtype names the dtypes it supports
            host = np.asarray(host, dtype=host.dtype.newbyteorder("="), order="C")
            D.from_numpy_dtype(host.dtype)
            name = path or "tensor"
            while name in self.arrays:
                name += "'"
            self.arrays[name] = host
            self._names[id(native)] = name
            self._keep.append(native)
        return name


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _digest(structure: str, arrays: dict[str, np.ndarray], codes: dict[str, str]) -> str:
    h = hashlib.sha256(structure.encode())
    for name in sorted(arrays):
        a = arrays[name]
        h.update(json.dumps([name, codes[name], list(a.shape)]).encode())
        h.update(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
    return h.hexdigest()


def _write_tensors(path: str, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    from safetensors.numpy import save_file
    save_file(arrays, path, metadata=metadata)


def save(obj: Any, f: PathLike) -> None:
    """Save tensors, state dicts, optimizer state, numbers and strings to the file f.

    The write is atomic: f holds either its previous content or the whole new checkpoint.
    """
    path = _path(f, "save")
    encoder = _Encoder()
    structure = json.dumps(encoder.encode(obj, ""), allow_nan=False, separators=(",", ":"))
    arrays = encoder.arrays
    codes = {name: _CODES[D.from_numpy_dtype(a.dtype).name] for name, a in arrays.items()}
    metadata = {"format": "ember", "ember_format_version": FORMAT_VERSION,
                "ember_structure": structure, "ember_sha256": _digest(structure, arrays, codes)}
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never write through someone else's file; mode 0o666 lets the umask decide
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        _write_tensors(tmp, arrays, metadata)
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
        raise EmberTypeError(f"ember.{what}: expected a file path (str or os.PathLike), got "
                             f"{type(f).__name__}")
    return os.fspath(f)


# --- loading -------------------------------------------------------------------------------

def _bad(path: str, problem: str) -> CheckpointError:
    return CheckpointError(f"ember.load: {path} is not a valid ember checkpoint: {problem}")


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _parse_json(text: str | bytes, what: str, path: str):
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise _bad(path, f"the {what} nests too deeply") from None
    except ValueError as exc:    # JSONDecodeError, UnicodeDecodeError, duplicates, huge ints
        raise _bad(path, f"the {what} is not valid JSON ({exc})") from None


def _read_header(path: str) -> tuple[dict, dict]:
    """Validate everything about the file but the tensor bytes; return (metadata, entries)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise CheckpointError(f"ember.load: no file at {path}; check the path") from None
    if not stat.S_ISREG(info.st_mode):
        raise _bad(path, "it is not a regular file")
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 8:
            raise _bad(path, f"it is {size} bytes long, too short for the 8-byte header "
                             "length (truncated?)")
        (n,) = struct.unpack("<Q", fh.read(8))
        if n > MAX_HEADER_BYTES or n > size - 8:
            raise _bad(path, f"the header claims {n} bytes but the file has {size - 8} after "
                             f"the length field (at most {MAX_HEADER_BYTES} allowed); the "
                             "file is truncated or corrupted")
        raw = fh.read(n)
    if len(raw) != n:
        raise _bad(path, "the file changed while it was read")
    if not raw.startswith(b"{"):
        raise _bad(path, "the header is not a JSON object")
    header = _parse_json(raw, "header", path)
    if not isinstance(header, dict):
        raise _bad(path, "the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict) or meta.get("format") != "ember":
        raise _bad(path, "it has no ember metadata (a plain safetensors file? read it with "
                         "safetensors.numpy.load_file)")
    if any(not isinstance(v, str) for v in meta.values()):
        raise _bad(path, "metadata values must be strings")
    version = meta.get("ember_format_version")
    if version != FORMAT_VERSION:
        raise _bad(path, f"format version {version!r}; this ember reads version "
                         f"{FORMAT_VERSION!r} (a newer ember wrote it? upgrade ember)")
    for key in ("ember_structure", "ember_sha256"):
        if key not in meta:
            raise _bad(path, f"the metadata lacks {key!r}")
    _check_entries(path, header, size - 8 - n)
    return meta, header


def _check_entries(path: str, entries: dict, buffer_size: int) -> None:
    spans = []
    for name, entry in entries.items():
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise _bad(path, f"tensor {name!r}: expected exactly dtype, shape and "
                             f"data_offsets, got {entry!r:.200}")
        code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if code not in _DTYPES:
            raise _bad(path, f"tensor {name!r}: unknown dtype {code!r:.40}; expected one of "
                             f"{', '.join(_DTYPES)}")
        if (not isinstance(shape, list) or len(shape) > MAX_NDIM
                or any(type(s) is not int or not 0 <= s < _MAX_DIM for s in shape)):
            raise _bad(path, f"tensor {name!r}: shape {shape!r:.200} is not a list of at "
                             f"most {MAX_NDIM} non-negative sizes")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or any(type(o) is not int for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= buffer_size):
            raise _bad(path, f"tensor {name!r}: data_offsets {offsets!r:.200} are not "
                             f"[begin, end] with 0 <= begin <= end <= {buffer_size}, the size "
                             "of the data section (is the file truncated?)")
        # Python ints cannot overflow: a shape whose product is huge simply fails here
        expected = math.prod(shape) * _DTYPES[code].itemsize
        if expected != offsets[1] - offsets[0]:
            raise _bad(path, f"tensor {name!r}: shape {shape} of {code} needs {expected} "
                             f"bytes but its data_offsets span {offsets[1] - offsets[0]}")
        spans.append((offsets[0], offsets[1], name))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            raise _bad(path, f"tensor {name!r} starts at byte {begin} of the data but the "
                             f"previous one ends at {end}; tensors must be contiguous")
        end = stop
    if end != buffer_size:
        raise _bad(path, f"the tensors cover {end} bytes but the data section has "
                         f"{buffer_size} (truncated, or trailing bytes)")


def load(f: PathLike, map_location: str | Device | dict | Callable | None = None) -> Any:
    """Load what ember.save wrote; tensors go to map_location.

    map_location: None (each tensor to the device it was saved from), a device ('cpu',
    'opencl:0', a Device) for all, a dict {saved device: device}, or a callable
    fn(cpu_tensor, saved_device_str) returning the tensor to use (or None for the default).
    """
    path = _path(f, "load")
    meta, entries = _read_header(path)
    structure_text = meta["ember_structure"]
    structure = _parse_json(structure_text, "structure", path)
    arrays = _read_arrays(path, meta, entries)
    codes = {name: entry["dtype"] for name, entry in entries.items()}
    if _digest(structure_text, arrays, codes) != meta["ember_sha256"]:
        raise _bad(path, "its content does not match its SHA-256 checksum (the file was "
                         "corrupted after it was written)")
    return _Decoder(path, arrays, map_location).decode(structure, 0)


def _read_arrays(path: str, meta: dict, entries: dict) -> dict[str, np.ndarray]:
    import ml_dtypes  # noqa: F401  (registers bfloat16, which the reader asks NumPy for)
    from safetensors import SafetensorError, safe_open
    try:
        with safe_open(path, framework="numpy") as fh:
            if fh.metadata() != meta or set(fh.keys()) != set(entries):
                raise _bad(path, "the file changed while it was read")
            return {name: fh.get_tensor(name) for name in entries}
    except (SafetensorError, OSError, TypeError, ValueError) as exc:
        raise _bad(path, f"the safetensors reader refused it ({exc})") from None


class _Decoder:
    """Rebuilds the saved object from the tagged JSON, placing tensors per map_location."""

    def __init__(self, path: str, arrays: dict, map_location):
        self.path, self.arrays, self.map_location = path, arrays, map_location
        self._placed: dict[tuple, Tensor] = {}     # (name, saved device) -> tensor
        self._tensors: dict[tuple, Tensor] = {}    # ... and its autograd flags -> tensor

    def decode(self, node, depth: int):
        if depth > MAX_DEPTH:
            raise _bad(self.path, f"the structure nests deeper than {MAX_DEPTH} levels")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict) or len(node.keys() & set(_TAGS)) != 1:
            raise _bad(self.path, f"unexpected structure node {node!r:.200}")
        (tag,) = node.keys() & set(_TAGS)
        value = node[tag]
        if tag in ("$dict", "$odict"):
            out = OrderedDict() if tag == "$odict" else {}
            if not isinstance(value, list):
                raise _bad(self.path, f"{tag} holds {type(value).__name__}, expected a list")
            for pair in value:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _bad(self.path, f"{tag} entry {pair!r:.100} is not a [key, value] pair")
                key = self.decode(pair[0], depth + 1)
                if not (key is None or isinstance(key, (str, int, float, bool))):
                    raise _bad(self.path, f"dict key {key!r:.100} has an unsupported type")
                out[key] = self.decode(pair[1], depth + 1)
            return out
        if tag == "$tuple" and isinstance(value, list):
            return tuple(self.decode(v, depth + 1) for v in value)
        if tag == "$float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag == "$dtype" and isinstance(value, str) and value in _CODES:
            return D.get_dtype(value)
        if tag == "$ndarray" and value in self.arrays:
            return np.array(self.arrays[value])
        if tag == "$tensor" and value in self.arrays:
            return self._tensor(node)
        raise _bad(self.path, f"bad {tag} node {node!r:.200}")

    def _tensor(self, node: dict) -> Tensor:
        name, saved = node["$tensor"], node.get("device")
        requires_grad, parameter = node.get("requires_grad"), node.get("parameter")
        if (set(node) != {"$tensor", "device", "requires_grad", "parameter"}
                or not isinstance(saved, str) or not isinstance(requires_grad, bool)
                or not isinstance(parameter, bool)):
            raise _bad(self.path, f"bad tensor node {node!r:.200}")
        key = (name, saved, requires_grad, parameter)
        t = self._tensors.get(key)
        if t is None:
            placed = self._placed.get((name, saved))
            if placed is None:   # one buffer saved once loads as one shared buffer
                placed = self._placed[name, saved] = self._place(name, saved)
            if requires_grad and placed.dtype.category != D.FLOAT:
                raise _bad(self.path, f"tensor {name!r} of {placed.dtype.name} is marked "
                                      "requires_grad, which only floating tensors can be")
            if parameter:
                from .nn.parameter import Parameter
                t = Parameter(placed, requires_grad=requires_grad)
            else:
                t = placed.detach().requires_grad_(True) if requires_grad else placed
            self._tensors[key] = t
        return t

    def _place(self, name: str, saved: str) -> Tensor:
        from .ops.creation import from_host
        host = from_host(self.arrays[name], "cpu")
        target = self.map_location
        if callable(target) and not isinstance(target, (str, Device)):
            out = target(host, saved)
            if out is None:
                target = None
            elif isinstance(out, Tensor):
                return out
            else:
                raise EmberTypeError(f"ember.load: map_location returned a "
                                     f"{type(out).__name__} for tensor {name!r}; it must "
                                     "return a Tensor or None")
        if isinstance(target, dict):
            target = target.get(saved, saved)
        try:
            device = as_device(saved if target is None else target)
        except EmberError as exc:
            raise DeviceUnavailableError(
                f"ember.load: {self.path} holds tensor {name!r} saved on {saved}, which is "
                f"not usable here ({exc}); pass map_location='cpu' (or another device) to "
                "load it elsewhere") from None
        return host if device.type == "cpu" else host.to(device)
