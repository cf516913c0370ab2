"""PyTorch zip checkpoints (what torch.save writes) read without torch and without unpickling.

A checkpoint is a zip of `<archive>/data.pkl` (the object, pickled), `<archive>/data/<key>`
(each storage's raw bytes), `<archive>/byteorder` and a few version files.  data.pkl is
not unpickled: a small stack machine here reads its opcodes and can build only numbers,
strings, bytes, lists, tuples, dicts, sets and OrderedDicts, and call only the rebuild
functions of tensors and parameters; storage types, dtypes and torch.Size are plain
values.  Any other global (os.system, a class of the program that saved it) is refused by
name before anything is built, as torch.load(weights_only=True) refuses it.  Sizes,
strides and offsets are checked against each storage, and the objects the stack machine
builds are bounded by the length of data.pkl.
"""
from __future__ import annotations

import io
import math
import pickletools
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from .. import dtypes as D
from ..errors import CheckpointError
from .record import Saved

MAX_PICKLE_BYTES = 100_000_000
MAX_NDIM = 64
# bytes of Python objects the stack machine may build: a multiple of data.pkl's size
_COST_RATIO, _COST_FLOOR = 4, 16 << 20
_VIEW_SLACK = 64 << 20     # tensor bytes beyond twice the storage bytes they view

_STORAGES = {"BoolStorage": "bool", "ByteStorage": "uint8", "CharStorage": "int8",
             "ShortStorage": "int16", "IntStorage": "int32", "LongStorage": "int64",
             "HalfStorage": "float16", "BFloat16Storage": "bfloat16",
             "FloatStorage": "float32", "DoubleStorage": "float64"}
_DTYPE_NAMES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "half", "float", "double", "long", "int", "short"}


def load(fh, start: int, size: int, name: str):
    """The object saved in the torch zip checkpoint at `start` in fh, tensors as Saved."""
    def bad(problem: str) -> CheckpointError:
        return CheckpointError(f"ember.load: {name} is not a valid PyTorch checkpoint: "
                               f"{problem}")

    if start:
        fh.seek(start)
        fh = io.BytesIO(fh.read(size))
    _check_entry_count(fh, size, bad)
    try:
        archive = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise bad(f"its zip directory is broken ({exc})") from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if any(n.endswith("/constants.pkl") for n in names) and not pickles:
            raise bad("it is a TorchScript archive (torch.jit.save); ember reads what "
                      "torch.save writes (save model.state_dict() with torch.save)")
        if len(pickles) != 1:
            raise bad("it is a zip file without exactly one <archive>/data.pkl, so not "
                      "what torch.save writes")
        prefix = pickles[0][:-len("data.pkl")]
        order = _read(archive, prefix + "byteorder", 16, bad, missing=b"little")
        if order not in (b"little", b"big"):
            raise bad(f"its byteorder record says {order!r:.40}; expected little or big")
        data = _read(archive, pickles[0], MAX_PICKLE_BYTES, bad)
        machine = _Machine(data, lambda key: _storage(archive, prefix, key, order, bad), bad)
        return machine.run()


def _check_entry_count(fh, size: int, bad) -> None:
    """Refuse a central directory with more entries than the file has room for, before
    zipfile builds an object for each (every entry takes 76 bytes of headers at least)."""
    tail = min(size, 65557)
    fh.seek(size - tail)
    end = fh.read(tail)
    at = end.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(end):
        return                   # zipfile says what is wrong
    (count,) = struct.unpack("<H", end[at + 10:at + 12])
    if count == 0xFFFF and at >= 20 and end[at - 20:at - 16] == b"PK\x06\x07":
        (where,) = struct.unpack("<Q", end[at - 12:at - 4])
        if where + 56 <= size:
            fh.seek(where)
            record = fh.read(56)
            if record[:4] == b"PK\x06\x06":
                (count,) = struct.unpack("<Q", record[32:40])
    if count * 76 > size:
        raise bad(f"its zip directory claims {count} entries, more than {size} bytes can hold")


def _read(archive: zipfile.ZipFile, member: str, limit: int, bad, missing=None) -> bytes:
    try:
        info = archive.getinfo(member)
    except KeyError:
        if missing is not None:
            return missing
        raise bad(f"it has no {member}") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise bad(f"{member} is compressed; torch.save stores every member uncompressed "
                  "(a recompressed or forged file?)")
    if info.file_size > limit:
        raise bad(f"{member} claims {info.file_size} bytes, more than the {limit} allowed")
    try:
        return archive.read(member)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise bad(f"{member} cannot be read ({exc}); the file is truncated or corrupted") \
            from None


class _Storage:
    __slots__ = ("array", "location", "key")

    def __init__(self, array: np.ndarray, location: str, key: str):
        self.array, self.location, self.key = array, location, key


def _storage(archive, prefix: str, pid, order: bytes, bad) -> _Storage:
    if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
            or not isinstance(pid[1], _StorageType) or not isinstance(pid[2], str)
            or not isinstance(pid[3], str) or type(pid[4]) is not int or pid[4] < 0):
        raise bad(f"unexpected persistent id {pid!r:.200}; expected ('storage', a storage "
                  "type, key, location, size)")
    kind, key, location, numel = pid[1:]
    dtype = D.get_dtype(kind.dtype).np
    if order == b"big":
        dtype = dtype.newbyteorder(">")
    member = f"{prefix}data/{key}"
    try:
        info = archive.getinfo(member)
    except KeyError:
        raise bad(f"storage {key!r:.40} has no {member}") from None
    if info.file_size != numel * dtype.itemsize:
        raise bad(f"storage {key!r:.40} should hold {numel} {kind.dtype} values "
                  f"({numel * dtype.itemsize} bytes) but {member} has {info.file_size}")
    raw = _read(archive, member, info.file_size, bad)
    return _Storage(np.frombuffer(raw, dtype=dtype), location, member)


class _StorageType:
    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: str):
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class _Global:
    """An allowlisted global: the function the stack machine calls in its place."""

    __slots__ = ("name", "call")

    def __init__(self, name: str, call):
        self.name, self.call = name, call

    def __repr__(self) -> str:
        return self.name


class _Mark:
    __slots__ = ()


_MARK = _Mark()


class _Machine:
    """Runs the opcodes of a pickle with only the values and calls allowed above."""

    def __init__(self, data: bytes, storage, bad):
        self.data, self.storage_for, self.bad = data, storage, bad
        self.storages: dict[str, _Storage] = {}
        self.cost, self.budget = 0, max(_COST_RATIO * len(data), _COST_FLOOR)
        # tensors are copied out of their storages: views may overlap, but not so much
        # that a small file expands into far more memory than it holds
        self.storage_bytes = self.tensor_bytes = 0
        self.globals = {
            "collections.OrderedDict": self._odict,
            "torch._utils._rebuild_tensor": self._rebuild_tensor,
            "torch._utils._rebuild_tensor_v2": self._rebuild_tensor,
            "torch._utils._rebuild_parameter": self._rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self._rebuild_parameter,
            "torch.Size": self._size,
            "builtins.set": self._set, "builtins.frozenset": self._set,
            "_codecs.encode": self._encode,
        }

    def spend(self, nbytes: int) -> None:
        self.cost += nbytes
        if self.cost > self.budget:
            raise self.bad(f"data.pkl builds more than {self.budget} bytes of objects from "
                           f"{len(self.data)} bytes of pickle (a hostile file?)")

    def find(self, module: str, name: str):
        module = "builtins" if module == "__builtin__" else module
        full = f"{module}.{name}"
        if full in self.globals:
            return _Global(full, self.globals[full])
        if module == "torch" and name in _STORAGES:
            return _StorageType(name, _STORAGES[name])
        if module == "torch" and name in _DTYPE_NAMES:
            return D.get_dtype(name)
        raise self.bad(f"it asks for the global {full!r:.200}, which ember does not load: "
                       "a checkpoint may hold tensors, storages, dtypes, OrderedDict and "
                       "plain containers only (ember never runs code from a file, whatever "
                       "weights_only says)")

    def run(self):
        stack: list = []
        memo: dict = {}
        try:
            for op, arg, _ in pickletools.genops(self.data):
                result = self.step(op.name, arg, stack, memo)
                if result is not None:
                    return result[0]
        except CheckpointError:
            raise
        except (ValueError, IndexError, KeyError, TypeError, EOFError, struct.error) as exc:
            raise self.bad(f"data.pkl is not a valid pickle ({type(exc).__name__}: "
                           f"{exc})") from None
        raise self.bad("data.pkl ends without a STOP opcode")

    def pop_mark(self, stack: list) -> list:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1:]
                del stack[i:]
                return items
        raise ValueError("no MARK on the stack")

    def step(self, op: str, arg, stack: list, memo: dict):
        push = stack.append
        if op in _CONSTANTS:
            push(_CONSTANTS[op])
        elif op in _VALUES:
            if isinstance(arg, (str, bytes)):
                self.spend(49 + len(arg))
            push(arg if op != "BYTEARRAY8" else bytes(arg))
        elif op in ("PROTO", "FRAME"):
            pass
        elif op == "STOP":
            return (stack.pop(),)
        elif op == "MARK":
            push(_MARK)
        elif op in ("EMPTY_LIST", "EMPTY_DICT", "EMPTY_TUPLE", "EMPTY_SET"):
            self.spend(64)
            push({"EMPTY_LIST": list, "EMPTY_DICT": dict, "EMPTY_TUPLE": tuple,
                  "EMPTY_SET": set}[op]())
        elif op in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(op[-1])
            items = tuple(stack[-n:])
            del stack[-n:]
            self.spend(64 + 8 * n)
            push(items)
        elif op in ("TUPLE", "LIST", "FROZENSET"):
            items = self.pop_mark(stack)
            self.spend(64 + 8 * len(items))
            push({"TUPLE": tuple, "LIST": list, "FROZENSET": frozenset}[op](items))
        elif op == "DICT":
            items = self.pop_mark(stack)
            self.spend(64 + 48 * len(items))
            push(self._pairs(dict(), items))
        elif op == "APPEND":
            value = stack.pop()
            self.spend(8)
            self._list(stack[-1]).append(value)
        elif op == "APPENDS":
            items = self.pop_mark(stack)
            self.spend(8 * len(items))
            self._list(stack[-1]).extend(items)
        elif op == "SETITEM":
            value, key = stack.pop(), stack.pop()
            self.spend(48)
            self._pairs(stack[-1], [key, value])
        elif op == "SETITEMS":
            items = self.pop_mark(stack)
            self.spend(24 * len(items))
            self._pairs(stack[-1], items)
        elif op == "ADDITEMS":
            items = self.pop_mark(stack)
            self.spend(24 * len(items))
            target = stack[-1]
            if type(target) is not set:
                raise self.bad("ADDITEMS on something that is not a set")
            target.update(self._hashable(items))
        elif op in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):
            self.spend(40)
            memo[len(memo) if op == "MEMOIZE" else arg] = stack[-1]
        elif op in ("GET", "BINGET", "LONG_BINGET"):
            push(memo[arg])
        elif op == "POP":
            stack.pop()
        elif op == "POP_MARK":
            self.pop_mark(stack)
        elif op == "DUP":
            push(stack[-1])
        elif op == "GLOBAL":
            module, _, name = arg.partition(" ")
            push(self.find(module, name))
        elif op == "STACK_GLOBAL":
            name, module = stack.pop(), stack.pop()
            if not (isinstance(module, str) and isinstance(name, str)):
                raise self.bad("STACK_GLOBAL with a module or name that is not a string")
            push(self.find(module, name))
        elif op == "REDUCE":
            args, func = stack.pop(), stack.pop()
            if not isinstance(func, _Global) or type(args) is not tuple:
                raise self.bad(f"it calls {func!r:.100}, which is not a function ember allows")
            push(func.call(*args))
        elif op == "BUILD":
            state, target = stack.pop(), stack[-1]
            # torch sets the state_dict's _metadata (versions per module) this way
            if type(target) is not OrderedDict or type(state) is not dict:
                raise self.bad(f"it sets the state of a {type(target).__name__}, which only "
                               "an OrderedDict may have here")
        elif op in ("PERSID", "BINPERSID"):
            pid = arg if op == "PERSID" else stack.pop()
            push(self._persistent(pid))
        else:        # NEWOBJ, INST, OBJ, EXT*, buffers: what only arbitrary objects need
            raise self.bad(f"data.pkl uses the pickle opcode {op}, which builds arbitrary "
                           "objects; ember does not run it")
        return None

    # -- containers -----------------------------------------------------------------------
    def _list(self, target) -> list:
        if type(target) is not list:
            raise self.bad(f"APPEND on a {type(target).__name__}, not a list")
        return target

    def _pairs(self, target, items: list):
        if type(target) not in (dict, OrderedDict) or len(items) % 2:
            raise self.bad(f"SETITEM on a {type(target).__name__}, not a dict")
        for key, value in zip(items[::2], items[1::2]):
            target[self._hashable([key])[0]] = value
        return target

    def _hashable(self, items: list) -> list:
        for item in items:
            if isinstance(item, (Saved, list, dict, set)):
                raise self.bad(f"a dict key or set item is a {type(item).__name__}; only "
                               "numbers, strings and tuples may be")
        return items

    # -- the allowed calls ----------------------------------------------------------------
    def _odict(self, items=()):
        out = OrderedDict()
        if items:
            if type(items) is not list or any(type(p) is not tuple or len(p) != 2
                                              for p in items):
                raise self.bad("OrderedDict(...) with something other than a list of pairs")
            self.spend(64 + 48 * len(items))
            for key, value in items:
                out[self._hashable([key])[0]] = value
        return out

    def _size(self, dims=()):
        if type(dims) is not tuple or any(type(d) is not int for d in dims):
            raise self.bad(f"torch.Size({dims!r:.100}) with something other than ints")
        return dims

    def _set(self, items=()):
        if type(items) is not list:
            raise self.bad("set(...) with something other than a list")
        return set(self._hashable(items))

    def _encode(self, text, encoding="latin1"):
        # protocol 2 pickles bytes as _codecs.encode(str, 'latin1')
        if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
            raise self.bad("_codecs.encode(...) with arguments bytes never need")
        return text.encode("latin-1")

    def _persistent(self, pid) -> _Storage:
        key = pid[2] if isinstance(pid, tuple) and len(pid) > 2 else None
        found = self.storages.get(key) if isinstance(key, str) else None
        if found is None:
            found = self.storage_for(pid)
            self.storages[key] = found
            self.storage_bytes += found.array.nbytes
        return found

    def _rebuild_tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None,
                        metadata=None) -> Saved:
        if not isinstance(storage, _Storage):
            raise self.bad(f"a tensor rebuilt from {type(storage).__name__}, not a storage")
        if (type(offset) is not int or type(size) is not tuple or type(stride) is not tuple
                or len(size) != len(stride) or len(size) > MAX_NDIM
                or any(type(s) is not int or s < 0 for s in size + stride) or offset < 0):
            raise self.bad(f"a tensor with offset {offset!r:.40}, size {size!r:.100} and "
                           f"stride {stride!r:.100}; expected non-negative ints, one stride "
                           "per size")
        if not isinstance(requires_grad, bool) or hooks not in (None, OrderedDict()) \
                or metadata not in (None, {}):
            raise self.bad("a tensor with backward hooks or Python attributes, which need "
                           "code to restore")
        base = storage.array
        numel = math.prod(size)
        if numel:
            last = offset + sum((n - 1) * s for n, s in zip(size, stride))
            if last >= len(base):
                raise self.bad(f"a tensor of size {size} and stride {stride} at offset "
                               f"{offset} reaches element {last} of a storage of "
                               f"{len(base)}")
        self.tensor_bytes += numel * base.itemsize
        if self.tensor_bytes > 2 * self.storage_bytes + _VIEW_SLACK:
            raise self.bad(f"its tensors add up to {self.tensor_bytes} bytes, far more than "
                           f"the {self.storage_bytes} bytes of storage they view (expanded "
                           "views? save them with .clone())")
        if numel:
            view = np.lib.stride_tricks.as_strided(
                base[offset:], shape=size, strides=[s * base.itemsize for s in stride],
                writeable=False)
        else:
            view = np.empty(size, dtype=base.dtype)
        array = np.array(view, dtype=base.dtype.newbyteorder("="), order="C")
        # equal views of one storage load as one tensor, as they are one in the pickle
        key = f"{storage.key} at offset {offset}, size {size}, stride {stride}"
        return Saved(array, _device(storage.location), requires_grad, False, key)

    def _rebuild_parameter(self, data, requires_grad, hooks=None, state=None) -> Saved:
        if not isinstance(data, Saved) or not isinstance(requires_grad, bool) \
                or hooks not in (None, OrderedDict()) or state not in (None, {}):
            raise self.bad("a parameter that is not a plain tensor with a requires_grad flag")
        return Saved(data.array, data.device, requires_grad, True, data.key)


def _device(location: str) -> str:
    """torch's storage location as an ember device string ('cuda' is 'cuda:0')."""
    return "cuda:0" if location == "cuda" else location


_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
_VALUES = {"INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
           "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
           "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
           "BYTEARRAY8"}
