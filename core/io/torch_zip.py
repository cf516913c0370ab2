"""PyTorch zip checkpoints (what torch.save writes) read without torch and without unpickling.

A checkpoint is a zip of `<archive>/data.pkl` (the object, pickled), `<archive>/data/<key>`
(each storage's raw bytes), `<archive>/byteorder` and a few version files.  data.pkl is
not unpickled: a small stack machine here reads its opcodes and can build only numbers,
strings, bytes, lists, tuples, dicts, sets and OrderedDicts, and call only the rebuild
functions of tensors and parameters; storage types, dtypes and torch.Size are plain
values.  Any other global (os.system, a class of the program that saved it) is refused by
name before anything is built, in the words torch.load(weights_only=True) refuses it with,
unless add_safe_globals marked it safe: then it may be called (REDUCE), instantiated
(NEWOBJ) and given its state (BUILD), as torch's weights-only unpickler allows.  Sizes,
strides and offsets are checked against each storage.

A file costs time and memory in proportion to its size, whatever its structure: the
objects the stack machine builds, the storages it reads and the tensors it copies are
bounded by the file's size (plus a fixed floor), so are the steps spent hashing dict keys
(a pickle of a few hundred bytes can share one tuple 2**40 times through its memo, and
hashing it would take 2**40 steps: every tuple's hashing cost and depth are known when it
is built), keys chosen to collide are refused (HashCounter), tuples nest at most MAX_DEPTH
deep, and error messages show a value with errors.brief, never its whole repr.
"""
from __future__ import annotations

import io
import math
import pickle
import pickletools
import struct
import zipfile
from collections import OrderedDict

import numpy as np

from .. import dtypes as D
from ..device import Device
from ..errors import CheckpointError, brief
from .record import MAX_DEPTH, HashCounter, Saved, colliding_keys

MAX_PICKLE_BYTES = 100_000_000
MAX_NDIM = 64
# what the stack machine may spend, in bytes of Python objects built (and steps spent
# hashing keys): a multiple of the file's size (a real checkpoint of 20,000 one-element
# tensors needs 10x: each costs a record, an array and a Tensor), plus a floor
_COST_RATIO, _COST_FLOOR = 16, 16 << 20
_VIEW_SLACK = 64 << 20     # tensor bytes beyond twice the storage bytes they view
_INT64 = 2**63             # torch keeps sizes, strides and offsets in int64
_MEMO_LIMIT = 2**32        # memo indexes: LONG_BINPUT's 4 bytes
_TENSOR_COST = 1024        # a tensor's Saved record, array header and Tensor, about
_OBJECT_COST = 256         # an object a safe global builds, about

_STORAGES = {"BoolStorage": "bool", "ByteStorage": "uint8", "CharStorage": "int8",
             "ShortStorage": "int16", "IntStorage": "int32", "LongStorage": "int64",
             "HalfStorage": "float16", "BFloat16Storage": "bfloat16",
             "FloatStorage": "float32", "DoubleStorage": "float64",
             "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128"}
# globals the user marked safe for weights_only loads (add_safe_globals): each a function or
# class, or a (function or class, "module.qualname") pair, as torch.serialization keeps them
_SAFE_GLOBALS: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Mark globals (functions, classes, or (object, "module.qualname") pairs) as safe for a
    weights_only load: a checkpoint may then call the functions, and create the classes'
    objects and set their state, as torch.serialization.add_safe_globals."""
    global _SAFE_GLOBALS
    if not isinstance(safe_globals, (list, tuple, set)):
        raise TypeError(f"add_safe_globals: expected a list of functions/classes or "
                        f"(object, 'module.name') pairs, got {type(safe_globals).__name__}")
    _user_globals(safe_globals)            # checks every entry before adding any
    _SAFE_GLOBALS = _SAFE_GLOBALS.union(safe_globals)


def get_safe_globals() -> list:
    """The globals add_safe_globals marked safe (torch.serialization.get_safe_globals)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals() -> None:
    """Forget every global add_safe_globals marked safe."""
    global _SAFE_GLOBALS
    _SAFE_GLOBALS = set()


class safe_globals:
    """with ember.serialization.safe_globals([Cls, fn]): those globals are safe for
    weights_only loads inside the block only (torch.serialization.safe_globals)."""

    def __init__(self, safe_globals: list):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        global _SAFE_GLOBALS
        _SAFE_GLOBALS = _SAFE_GLOBALS - set(self.safe_globals)


def _user_globals(entries=None) -> dict:
    """{"module.qualname": object} of the globals marked safe."""
    out = {}
    for entry in _SAFE_GLOBALS if entries is None else entries:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


UNSAFE_MESSAGE = ("Re-running `ember.load` with `weights_only` set to `False` will likely "
                  "succeed, but it can result in arbitrary code execution. Do it only if you "
                  "got the file from a trusted source.")


class WeightsOnlyError(CheckpointError, pickle.UnpicklingError):
    """A weights_only load met a global that is not allowlisted (torch.load's "Weights only
    load failed ... Unsupported global"); weights_only=False or add_safe_globals loads it.
    A pickle.UnpicklingError, as torch's, so `except pickle.UnpicklingError:` catches it."""


def unsupported_global(full: str) -> WeightsOnlyError:
    """torch.load's refusal of a global, worded as torch words it, ember's names for the fix."""
    shown = full[len("builtins."):] if full.startswith("builtins.") else full
    shown = shown if len(shown) <= 200 else shown[:200] + "..."
    return WeightsOnlyError(
        "ember.load: Weights only load failed. This file can still be loaded, to do so you "
        "have two options, do those steps only if you trust the source of the checkpoint. "
        f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` "
        "please check the recommended steps in the following error message.\n\t"
        f"WeightsUnpickler error: Unsupported global: GLOBAL {shown} was not an allowed "
        "global by default. Please use `ember.serialization.add_safe_globals([{0}])` or the "
        "`ember.serialization.safe_globals([{0}])` context manager to allowlist this global "
        "if you trust this class/function.".replace("{0}", shown))


_DTYPE_NAMES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64", "half", "float", "double", "long", "int", "short",
                "complex64", "complex128", "cfloat", "cdouble"}


def load(fh, start: int, size: int, name: str, *, place=None, mmap_path: str | None = None):
    """The object saved in the torch zip checkpoint at `start` in fh, tensors as Saved.

    Only the allowlist (tensors, storages, dtypes, plain containers) and the globals
    add_safe_globals marked safe are loaded: weights_only=True.  place(obj) turns Saved
    tensors (in containers) into tensors before they reach a safe global's code.
    mmap_path: the file's path, to map the storages instead of reading them."""
    bad = _bad(name)
    archive = _open_zip(fh, start, size, bad)
    with archive:
        names = archive.namelist()
        if any(n.endswith("/constants.pkl") for n in names) and not any(
                n.endswith("/data.pkl") and n.count("/") == 1 for n in names):
            raise bad("it is a TorchScript archive (torch.jit.save); ember reads what "
                      "torch.save writes (save model.state_dict() with torch.save)")
        entry, prefix, order = _data_pickle(archive, names, bad)
        data = _read(archive, entry, min(MAX_PICKLE_BYTES, size), bad)
        machine = _Machine(data, size, bad, place=place, mapped=mmap_path is not None)
        machine.storage_for = lambda pid: _storage(
            archive, prefix, pid, order, bad, size - len(data) - machine.storage_bytes,
            mmap_path)
        return machine.run()


def open_archive(fh, start: int, size: int, name: str, mmap_path: str | None = None):
    """(the zip, its data.pkl bytes, a storage reader pid -> _Storage, the machine that
    checks tensors) for a full unpickle of the checkpoint (weights_only=False)."""
    bad = _bad(name)
    archive = _open_zip(fh, start, size, bad)
    try:
        entry, prefix, order = _data_pickle(archive, archive.namelist(), bad)
    except BaseException:
        archive.close()
        raise
    data = _read(archive, entry, size, bad)
    machine = _Machine(data, size, bad, mapped=mmap_path is not None)
    machine.storage_for = lambda pid: _storage(archive, prefix, pid, order, bad, size,
                                               mmap_path)
    return archive, data, machine


def _bad(name: str):
    """The error of a file that is not a valid torch zip checkpoint, for `name`."""
    def bad(problem: str) -> CheckpointError:
        return CheckpointError(f"ember.load: {name} is not a valid PyTorch checkpoint: "
                               f"{problem}")
    return bad


def _open_zip(fh, start: int, size: int, bad) -> zipfile.ZipFile:
    """The zip archive of the checkpoint at `start` in fh, its entry count checked first."""
    if start:
        fh.seek(start)
        fh = io.BytesIO(fh.read(size))
    _check_entry_count(fh, size, bad)
    try:
        return zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise bad(f"its zip directory is broken ({exc})") from None


def _data_pickle(archive, names, bad) -> tuple:
    """(the name of the archive's one <archive>/data.pkl, its folder prefix, the byte order
    its storages were written in)."""
    pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise bad("it is a zip file without exactly one <archive>/data.pkl, so not what "
                  "torch.save writes")
    prefix = pickles[0][:-len("data.pkl")]
    order = _read(archive, prefix + "byteorder", 16, bad, missing=b"little")
    if order not in (b"little", b"big"):
        raise bad(f"its byteorder record says {brief(order, 40)}; expected little or big")
    return pickles[0], prefix, order


def make_device(spec, index=None):
    """torch.device(...) read from a file, as ember's Device (any type ember can name)."""
    try:
        return Device(spec, index)
    except Exception:                      # noqa: BLE001  (whatever the parser says)
        raise CheckpointError(f"ember.load: the checkpoint holds torch.device"
                              f"({brief(spec, 40)}, {brief(index, 20)}), which ember cannot "
                              "name") from None


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


def _storage(archive, prefix: str, pid, order: bytes, bad, room: int,
             mmap_path: str | None = None) -> _Storage:
    """Storage `pid` read from its member; `room`: the bytes of the file no storage read
    before holds (members that overlap, each claiming the rest of the file, would otherwise
    read the file once per member)."""
    if (type(pid) is not tuple or len(pid) != 5 or pid[0] != "storage"
            or not isinstance(pid[1], _StorageType) or type(pid[2]) is not str
            or type(pid[3]) is not str or type(pid[4]) is not int or pid[4] < 0):
        raise bad(f"unexpected persistent id {brief(pid, 200)}; expected ('storage', a "
                  "storage type, key, location, size)")
    kind, key, location, numel = pid[1:]
    dtype = D.get_dtype(kind.dtype).np
    if order == b"big":
        dtype = dtype.newbyteorder(">")
    member = f"{prefix}data/{key}"
    try:
        info = archive.getinfo(member)
    except KeyError:
        raise bad(f"storage {brief(key, 40)} has no {brief(member, 100)}") from None
    if info.file_size != numel * dtype.itemsize:
        raise bad(f"storage {brief(key, 40)} should hold {brief(numel, 40)} {kind.dtype} "
                  f"values ({brief(numel * dtype.itemsize, 40)} bytes) but "
                  f"{brief(member, 100)} has {info.file_size}")
    if info.file_size > room:
        raise bad(f"its storages add up to more bytes than the file holds ({brief(member, 100)} "
                  f"claims {info.file_size} bytes, {max(room, 0)} are left): zip members that "
                  "overlap (a zip bomb?)")
    if mmap_path is not None:
        return _Storage(_mapped(archive, info, mmap_path, dtype, numel, bad), location, member)
    raw = _read(archive, member, info.file_size, bad)
    return _Storage(np.frombuffer(raw, dtype=dtype), location, member)


def _mapped(archive, info: zipfile.ZipInfo, path: str, dtype, numel: int, bad) -> np.ndarray:
    """The member's bytes as a copy-on-write memory map of the file (mmap=True): pages are
    read when touched, writes stay in this process, as torch.load(mmap=True) maps them."""
    if info.compress_type != zipfile.ZIP_STORED:
        raise bad(f"{info.filename} is compressed; torch.save stores every member "
                  "uncompressed (a recompressed or forged file?)")
    fp = archive.fp
    fp.seek(info.header_offset)
    local = fp.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise bad(f"the local header of {info.filename} is missing or broken")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    begin = info.header_offset + 30 + name_len + extra_len
    if numel == 0:
        return np.empty(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="c", offset=begin, shape=(numel,))


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


class _User(_Global):
    """A global add_safe_globals marked safe: called (REDUCE) or instantiated (NEWOBJ)."""

    __slots__ = ()


def _build(target, state) -> None:
    """pickle's BUILD on an object of a safe class: __setstate__, or its __dict__ and slots."""
    setstate = getattr(target, "__setstate__", None)
    if setstate is not None and getattr(type(target), "__setstate__", None) is not \
            getattr(object, "__setstate__", None):
        setstate(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state:
        target.__dict__.update(state)
    if slotstate:
        for key, value in slotstate.items():
            setattr(target, key, value)


class _Mark:
    __slots__ = ()


_MARK = _Mark()


def _value(x):
    """x, an operand an opcode took from the stack: never a MARK (pickle keeps its marks
    apart, so an opcode that takes one as a value would let the marker into the object)."""
    if x is _MARK:
        raise ValueError("an opcode takes a MARK as its operand (stack underflow)")
    return x


class _Machine:
    """Runs the opcodes of a pickle with only the values and calls allowed above."""

    def __init__(self, data: bytes, size: int, bad, place=None, mapped: bool = False):
        self.data, self.size, self.bad = data, size, bad
        self.place = place or (lambda obj: obj)     # Saved -> Tensor, for safe globals' code
        self.mapped = mapped                        # storages are memory maps: keep views
        self.user = _user_globals()                 # "module.name" -> a safe global
        self.user_types = {id(v): v for v in self.user.values() if isinstance(v, type)}
        self.storage_for = None        # pid -> _Storage, set by load
        self.storages: dict[str, _Storage] = {}
        self.cost, self.budget = 0, _COST_RATIO * size + _COST_FLOOR
        # tensors are copied out of their storages: views may overlap, but not so much
        # that a small file expands into far more memory than it holds
        self.storage_bytes = self.tensor_bytes = 0
        # every tuple built: id -> (the tuple, its depth, the steps hashing it takes, what
        # it holds that a key may not); tuples are immutable, so this stays true
        self.tuples: dict[int, tuple] = {id(()): ((), 1, 1, "")}
        self.keys: dict[int, tuple] = {}       # id of a dict or set -> (it, HashCounter)
        self.globals = {
            "collections.OrderedDict": self._odict,
            "torch._utils._rebuild_tensor": self._rebuild_tensor,
            "torch._utils._rebuild_tensor_v2": self._rebuild_tensor,
            "torch._utils._rebuild_parameter": self._rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self._rebuild_parameter,
            "torch.Size": self._size, "torch.device": self._device,
            "builtins.set": self._set, "builtins.frozenset": self._frozenset,
            "_codecs.encode": self._encode,
        }

    def spend(self, nbytes: int) -> None:
        self.cost += nbytes
        if self.cost > self.budget:
            raise self.bad(f"data.pkl builds more than {self.budget} bytes of objects (or "
                           f"hashing steps) from a file of {self.size} bytes (a hostile "
                           "file?)")

    def find(self, module: str, name: str):
        module = "builtins" if module == "__builtin__" else module
        full = f"{module}.{name}"
        if full in self.globals:
            return _Global(full, self.globals[full])
        if module == "torch" and name in _STORAGES:
            return _StorageType(name, _STORAGES[name])
        if module == "torch" and name in _DTYPE_NAMES:
            return D.get_dtype(name)
        if full in self.user:
            return _User(full, self.user[full])
        if ((module == "torch" or module.startswith("torch.")) and self.user
                and not any(part.startswith("_") for part in full.split("."))):
            # torch's class, marked safe by its ember name (torch.nn.Linear under the alias)
            from ..torch_alias import resolve
            try:
                found = getattr(resolve(module), name)
            except (ImportError, AttributeError):
                found = None
            if found is not None and any(found is v for v in self.user.values()):
                return _User(full, found)
        raise unsupported_global(full)

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
        except (ValueError, IndexError, KeyError, TypeError, EOFError, OverflowError,
                struct.error) as exc:
            raise self.bad(f"data.pkl is not a valid pickle ({type(exc).__name__}: "
                           f"{brief(str(exc), 200)})") from None
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
        pop = stack.pop
        if op in _CONSTANTS:
            self.spend(8)
            push(_CONSTANTS[op])
        elif op in _VALUES:
            kind = type(arg)
            self.spend(49 + len(arg) if kind is str or kind is bytes else
                       32 + (arg.bit_length() >> 3) if kind is int else 32)
            push(arg if op != "BYTEARRAY8" else bytes(arg))
        elif op in ("PROTO", "FRAME"):
            pass
        elif op == "STOP":
            return (_value(pop()),)
        elif op == "MARK":
            self.spend(8)
            push(_MARK)
        elif op in ("EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET"):
            # what each takes once it holds an item (a list's header, a dict's or set's table)
            self.spend(72 if op == "EMPTY_LIST" else 232)
            push({"EMPTY_LIST": list, "EMPTY_DICT": dict, "EMPTY_SET": set}[op]())
        elif op == "EMPTY_TUPLE":
            self.spend(8)
            push(())
        elif op in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(op[-1])
            items = stack[-n:]
            if len(items) < n or any(x is _MARK for x in items):
                raise ValueError(f"{op} takes {n} values; the stack has fewer above its MARK")
            del stack[-n:]
            push(self._tuple(items))
        elif op in ("TUPLE", "LIST"):
            items = self.pop_mark(stack)
            if op == "TUPLE":
                push(self._tuple(items))
            else:
                self.spend(64 + 8 * len(items))
                push(items)
        elif op == "FROZENSET":
            push(self._frozenset(self.pop_mark(stack), from_list=False))
        elif op == "DICT":
            items = self.pop_mark(stack)
            self.spend(64 + 48 * len(items))
            push(self._pairs(dict(), items))
        elif op == "APPEND":
            value = _value(pop())
            self.spend(8)
            self._list(stack[-1]).append(value)
        elif op == "APPENDS":
            items = self.pop_mark(stack)
            self.spend(8 * len(items))
            self._list(stack[-1]).extend(items)
        elif op == "SETITEM":
            value, key = _value(pop()), _value(pop())
            self.spend(48)
            self._pairs(stack[-1], [key, value])
        elif op == "SETITEMS":
            items = self.pop_mark(stack)
            self.spend(24 * len(items))
            self._pairs(stack[-1], items)
        elif op == "ADDITEMS":
            items = self.pop_mark(stack)
            target = stack[-1]
            if type(target) is not set:
                raise self.bad("ADDITEMS on something that is not a set")
            self.spend(32 * len(items))
            self._add(target, items, target.add)
        elif op in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):
            self.spend(48)
            index = len(memo) if op == "MEMOIZE" else arg
            if type(index) is not int or not 0 <= index < _MEMO_LIMIT:
                raise self.bad(f"data.pkl is not a valid pickle: it writes memo entry "
                               f"{brief(index, 40)}, outside [0, 2**32)")
            memo[index] = _value(stack[-1])
        elif op in ("GET", "BINGET", "LONG_BINGET"):
            if type(arg) is not int or arg not in memo:
                raise self.bad(f"data.pkl is not a valid pickle: it reads memo entry "
                               f"{brief(arg, 40)}, which it never wrote")
            self.spend(8)
            push(memo[arg])
        elif op == "POP":
            stack.pop()
        elif op == "POP_MARK":
            self.pop_mark(stack)
        elif op == "DUP":
            self.spend(8)
            push(_value(stack[-1]))
        elif op == "GLOBAL":
            module, _, name = arg.partition(" ")
            self.spend(64)
            push(self.find(module, name))
        elif op == "STACK_GLOBAL":
            name, module = _value(pop()), _value(pop())
            if not (type(module) is str and type(name) is str):
                raise self.bad("STACK_GLOBAL with a module or name that is not a string")
            self.spend(64)
            push(self.find(module, name))
        elif op == "REDUCE":
            args, func = _value(pop()), _value(pop())
            if type(args) is tuple and isinstance(func, _User):
                self.spend(_OBJECT_COST)
                push(func.call(*self.place(args)))
            elif not isinstance(func, _Global) or type(args) is not tuple:
                raise self.bad(f"it calls {brief(func, 100)}, which is not a function ember "
                               "allows")
            else:
                push(func.call(*args))
        elif op in ("NEWOBJ", "NEWOBJ_EX") and isinstance(stack[-2 if op == "NEWOBJ" else -3],
                                                         _User):
            kwargs = _value(pop()) if op == "NEWOBJ_EX" else {}
            args, cls = _value(pop()), _value(pop())
            if not isinstance(cls.call, type) or type(args) is not tuple \
                    or type(kwargs) is not dict:
                raise self.bad(f"it creates an object of {cls.name}, which is not a class")
            self.spend(_OBJECT_COST)
            push(cls.call.__new__(cls.call, *self.place(args), **self.place(kwargs)))
        elif op == "BUILD":
            state, target = _value(pop()), stack[-1]
            if id(type(target)) in self.user_types:
                _build(target, self.place(state))
            # torch sets the state_dict's _metadata (versions per module) this way
            elif type(target) is not OrderedDict or type(state) is not dict:
                raise self.bad(f"it sets the state of a {type(target).__name__}, which only "
                               "an OrderedDict or an object of a class marked safe "
                               "(add_safe_globals) may have here")
        elif op in ("PERSID", "BINPERSID"):
            pid = arg if op == "PERSID" else _value(pop())
            push(self._persistent(pid))
        else:        # NEWOBJ, INST, OBJ, EXT*, buffers: what only arbitrary objects need
            raise self.bad(f"data.pkl uses the pickle opcode {op}, which builds arbitrary "
                           "objects; ember does not run it")
        return None

    # -- containers -----------------------------------------------------------------------
    def _tuple(self, items: list) -> tuple:
        """tuple(items), with its depth and hashing cost measured from its items' (each
        tuple is measured once, when it is built, however often it is shared)."""
        depth, steps, holds = 1, 1, ""
        tuples = self.tuples
        for x in items:
            kind = type(x)
            if kind is tuple:
                _, d, n, inner = tuples[id(x)]
                depth, steps, holds = max(depth, d + 1), steps + n, holds or inner
            elif kind is int:
                steps += 1 + x.bit_length() // 60      # hashing an int reads its digits
            elif kind in _KEY_KINDS:
                steps += 1        # str and bytes cache their hash; frozenset too, once built
            else:
                holds = holds or _what(x)
        if depth > MAX_DEPTH:
            raise self.bad(f"data.pkl nests tuples more than {MAX_DEPTH} deep (a hostile "
                           "file?)")
        self.spend(64 + 8 * len(items) + 120)
        out = tuple(items)
        tuples[id(out)] = (out, depth, steps, holds)
        return out

    def _key(self, key, counter: HashCounter):
        """key, checked to be hashable in steps the file has paid for, and not one of many
        keys chosen to collide in this dict or set."""
        kind = type(key)
        if kind is tuple:
            _, _, steps, holds = self.tuples[id(key)]
        elif kind is int:
            steps, holds = 1 + key.bit_length() // 60, ""
        else:
            steps, holds = 1, "" if kind in _KEY_KINDS else _what(key)
        if holds:
            raise self.bad(f"a dict key or set item is or holds {holds}; only numbers, "
                           "strings, dtypes and tuples of them may be")
        if 3 * steps > self.budget - self.cost:
            raise self.bad(f"a dict key or set item takes {steps} steps to hash, more than a "
                           f"file of {self.size} bytes may spend (a tuple that holds itself "
                           "many times over through the memo: a hostile file?)")
        self.spend(3 * steps)       # the count here, the dict's own hash, the load's copy
        if not counter.add(key):
            raise self.bad(colliding_keys("data.pkl"))
        return key

    def _counter(self, target) -> HashCounter:
        entry = self.keys.get(id(target))
        if entry is None:
            entry = self.keys[id(target)] = (target, HashCounter())
        return entry[1]

    def _add(self, target, items, add) -> None:
        counter = self._counter(target)
        for item in items:
            add(self._key(item, counter))

    def _list(self, target) -> list:
        if type(target) is not list:
            raise self.bad(f"APPEND on a {type(target).__name__}, not a list")
        return target

    def _pairs(self, target, items: list):
        if type(target) not in (dict, OrderedDict) or len(items) % 2:
            raise self.bad(f"SETITEM on a {type(target).__name__}, not a dict")
        counter = self._counter(target)
        for key, value in zip(items[::2], items[1::2]):
            target[self._key(key, counter)] = value
        return target

    # -- the allowed calls ----------------------------------------------------------------
    def _odict(self, items=()):
        out = OrderedDict()
        if items:
            if type(items) is not list or any(type(p) is not tuple or len(p) != 2
                                              for p in items):
                raise self.bad("OrderedDict(...) with something other than a list of pairs")
            self.spend(64 + 48 * len(items))
            counter = self._counter(out)
            for key, value in items:
                out[self._key(key, counter)] = value
        return out

    def _size(self, dims=()):
        if type(dims) is not tuple or any(type(d) is not int for d in dims):
            raise self.bad(f"torch.Size({brief(dims, 100)}) with something other than ints")
        return dims

    def _device(self, spec, index=None):
        if type(spec) is not str or not (index is None or type(index) is int):
            raise self.bad(f"torch.device({brief(spec, 40)}, {brief(index, 20)}): expected a "
                           "string and an optional int")
        return make_device(spec, index)

    def _set(self, items=()):
        if type(items) is not list:
            raise self.bad("set(...) with something other than a list")
        self.spend(64 + 32 * len(items))
        out: set = set()
        self._add(out, items, out.add)
        return out

    def _frozenset(self, items=(), from_list=True):
        if from_list and type(items) is not list:
            raise self.bad("frozenset(...) with something other than a list")
        self.spend(64 + 32 * len(items))
        counter = HashCounter()
        return frozenset([self._key(item, counter) for item in items])

    def _encode(self, text, encoding="latin1"):
        # protocol 2 pickles bytes as _codecs.encode(str, 'latin1')
        if type(text) is not str or encoding not in ("latin1", "latin-1"):
            raise self.bad("_codecs.encode(...) with arguments bytes never need")
        self.spend(33 + len(text))
        return text.encode("latin-1")

    def _persistent(self, pid) -> _Storage:
        key = pid[2] if type(pid) is tuple and len(pid) > 2 else None
        found = self.storages.get(key) if type(key) is str else None
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
                or any(type(s) is not int for s in size + stride)):
            raise self.bad(f"a tensor with offset {brief(offset, 40)}, size "
                           f"{brief(size, 100)} and stride {brief(stride, 100)}; expected "
                           "ints, one stride per size")
        if not (0 <= offset < _INT64 and all(0 <= n < _INT64 for n in size)
                and all(-_INT64 <= s < _INT64 for s in stride)):
            raise self.bad(f"a tensor with offset {brief(offset, 40)}, size "
                           f"{brief(size, 100)} and stride {brief(stride, 100)}: sizes and "
                           "offsets are int64 >= 0 and strides int64 (torch refuses these too)")
        # a dimension of size 1 (or a tensor of no elements) never steps its stride: torch
        # loads whatever it says, so does ember; other strides must be >= 0, as torch saves
        numel = math.prod(size)
        steps = [s if n > 1 and numel else 0 for n, s in zip(size, stride)]
        if any(s < 0 for s in steps):
            raise self.bad(f"a tensor of size {brief(size, 100)} with a negative stride "
                           f"({brief(stride, 100)}), which torch never saves")
        if not isinstance(requires_grad, bool) or hooks not in (None, OrderedDict()) \
                or metadata not in (None, {}):
            raise self.bad("a tensor with backward hooks or Python attributes, which need "
                           "code to restore")
        base = storage.array
        if numel:
            last = offset + sum((n - 1) * s for n, s in zip(size, steps))
            if last >= len(base):
                raise self.bad(f"a tensor of size {size} and stride {stride} at offset "
                               f"{offset} reaches element {last} of a storage of "
                               f"{len(base)}")
        self.tensor_bytes += numel * base.itemsize
        if self.tensor_bytes > 2 * self.storage_bytes + _VIEW_SLACK:
            raise self.bad(f"its tensors add up to {self.tensor_bytes} bytes, far more than "
                           f"the {self.storage_bytes} bytes of storage they view (expanded "
                           "views? save them with .clone())")
        # equal views of one storage load as one tensor, as they are one in the pickle
        key = f"{storage.key} at offset {offset}, size {size}, stride {stride}"
        self.spend(_TENSOR_COST + len(key))
        contiguous = all(s == math.prod(size[i + 1:]) for i, s in enumerate(steps) if size[i] > 1)
        if numel and self.mapped and contiguous and base.dtype.isnative:
            # mmap=True: the tensor is the mapped pages themselves, read when touched
            array = base[offset:offset + numel].reshape(size)
        elif numel:
            view = np.lib.stride_tricks.as_strided(
                base[offset:], shape=size, strides=[s * base.itemsize for s in steps],
                writeable=False)
            array = np.array(view, dtype=base.dtype.newbyteorder("="), order="C")
        else:
            try:
                array = np.empty(size, dtype=base.dtype.newbyteorder("="))
            except ValueError:        # a size NumPy's index type cannot hold
                raise self.bad(f"a tensor of size {size} with no elements, which NumPy "
                               "(and so ember) cannot hold: a dimension too large") from None
        return Saved(array, _device(storage.location), requires_grad, False, key)

    def _rebuild_parameter(self, data, requires_grad, hooks=None, state=None) -> Saved:
        if not isinstance(data, Saved) or not isinstance(requires_grad, bool) \
                or hooks not in (None, OrderedDict()) or state not in (None, {}):
            raise self.bad("a parameter that is not a plain tensor with a requires_grad flag")
        return Saved(data.array, data.device, requires_grad, True, data.key)


# what a dict key or set item may be besides ints and tuples (hashing each is one step)
_KEY_KINDS = frozenset({str, bytes, float, bool, type(None), complex, frozenset, D.DType})


def _what(x) -> str:
    return ("a tensor" if type(x) is Saved else "a storage" if type(x) is _Storage else
            f"a {type(x).__name__}")


def _device(location: str) -> str:
    """torch's storage location as an ember device string ('cuda' is 'cuda:0')."""
    return "cuda:0" if location == "cuda" else location


_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False}
_VALUES = {"INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
           "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE",
           "SHORT_BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
           "BYTEARRAY8"}
