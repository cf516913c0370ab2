"""The safetensors container: a bounded header parser, the writer, and the tensor bytes.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON
({"name": {"dtype", "shape", "data_offsets"}, ..., "__metadata__": {str: str}}) and the
tensors' bytes.  The header is parsed here by hand, to that schema only: a value of the
wrong kind is refused where it starts, so a hostile header costs no more memory than its
own text (json.loads would first build whatever nesting it holds).  Entries become small
tuples; every size, offset and count is checked before anything is allocated for it.
"""
from __future__ import annotations

import json
import math
import re
import struct
from json.decoder import scanstring
from typing import NamedTuple

import numpy as np

from ..errors import brief

MAX_HEADER_BYTES = 100_000_000     # the safetensors library's own bound
MAX_METADATA_KEYS = 1024
MAX_NDIM = 64                      # NumPy's limit
MAX_DIM = 2**62
_MAX_LIST_CHARS = 4096             # a shape of 64 twenty-digit sizes fits easily

# code -> NumPy dtype name, for the dtypes ember has (bfloat16 from ml_dtypes)
CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
         "I64": "int64", "F16": "float16", "BF16": "bfloat16", "F32": "float32",
         "F64": "float64", "C64": "complex64"}
ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "F16": 2, "BF16": 2,
            "F32": 4, "F64": 8, "C64": 8}
# valid safetensors codes that have no ember dtype: named as such in the error
FOREIGN = ("U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2")

_WS = re.compile(r"[ \t\n\r]*")
_FLAT_LIST = re.compile(r"\[([^\[\]{}\"]*)\]")
_UINT = re.compile(r"0|[1-9][0-9]{0,29}")


class Entry(NamedTuple):
    name: str
    code: str
    shape: tuple
    begin: int
    end: int


class Header(NamedTuple):
    metadata: dict | None     # None when the file has no "__metadata__"
    entries: list             # [Entry] in file order
    data_start: int           # where the data section begins (8 + N)


class HeaderError(ValueError):
    """What is wrong with a header, in words; ember.io turns it into a CheckpointError."""


def np_dtype(code: str) -> np.dtype:
    if code == "BF16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(CODES[code]).newbyteorder("<")


# --- reading -------------------------------------------------------------------------------

def header_length(prefix: bytes, size: int) -> int:
    """N from the first 8 bytes, checked against the file size and the bound."""
    if size < 8:
        raise HeaderError(f"it is {size} bytes long, too short for the 8-byte header length "
                          "(truncated?)")
    (n,) = struct.unpack("<Q", prefix[:8])
    if n > MAX_HEADER_BYTES or n > size - 8:
        raise HeaderError(f"the header claims {n} bytes but the file has {size - 8} after the "
                          f"length field (at most {MAX_HEADER_BYTES} allowed); the file is "
                          "truncated or corrupted")
    return n


def read_header(fh, start: int, size: int) -> Header:
    """Read and check the header of the safetensors file at `start` in the binary file fh
    (`size` bytes long): everything but the tensor bytes themselves."""
    fh.seek(start)
    n = header_length(fh.read(8), size)
    raw = fh.read(n)
    if len(raw) != n:
        raise HeaderError("the file changed while it was read")
    if not raw.startswith(b"{"):
        raise HeaderError("the header is not a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HeaderError(f"the header is not valid UTF-8 ({exc})") from None
    del raw
    metadata, entries = _Parser(text).header()
    del text
    _check_layout(entries, size - 8 - n)
    return Header(metadata, entries, 8 + n)


class _Parser:
    """Recursive descent over exactly the safetensors header schema."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, problem: str) -> HeaderError:
        return HeaderError(f"{problem} (at character {self.pos} of the header)")

    def peek(self) -> str:
        self.pos = _WS.match(self.text, self.pos).end()
        return self.text[self.pos:self.pos + 1]

    def expect(self, char: str, where: str) -> None:
        found = self.peek()
        if found != char:
            raise self.fail(f"expected {char!r} {where}, found {found or 'the end'!r}")
        self.pos += 1

    def more(self, where: str) -> bool:
        """After a member: True at ',' (another follows), False at '}'."""
        found = self.peek()
        if found in (",", "}"):
            self.pos += 1
            return found == ","
        raise self.fail(f"expected ',' or '}}' {where}, found {found or 'the end'!r}")

    def string(self, what: str) -> str:
        if self.peek() != '"':
            raise self.fail(f"{what} must be a JSON string")
        try:
            value, self.pos = scanstring(self.text, self.pos + 1, True)
        except ValueError as exc:
            raise self.fail(f"{what} is not a valid JSON string ({exc.args[0]})") from None
        return value

    def uints(self, what: str, limit: int) -> list[int]:
        self.peek()
        match = _FLAT_LIST.match(self.text, self.pos)
        if match is None or match.end() - match.start() > _MAX_LIST_CHARS:
            raise self.fail(f"{what} must be a short list of non-negative integers")
        inner = match.group(1)
        if inner.count(",") >= limit:
            raise self.fail(f"{what} has more than {limit} items")
        self.pos = match.end()
        out = []
        for item in inner.split(",") if inner.strip(" \t\n\r") else ():
            item = item.strip(" \t\n\r")
            if not _UINT.fullmatch(item):
                raise self.fail(f"{what} holds {brief(item, 30)}, not a non-negative integer")
            out.append(int(item))
        return out

    def header(self) -> tuple[dict | None, list]:
        self.expect("{", "at the start of the header")
        metadata, entries, names = None, [], set()
        if self.peek() == "}":
            self.pos += 1
        else:
            while True:
                name = self.string("a tensor name")
                if name in names or (name == "__metadata__" and metadata is not None):
                    raise self.fail(f"duplicate key {brief(name, 100)}")
                self.expect(":", f"after {name[:100]!r}")
                if name == "__metadata__":
                    metadata = self.metadata()
                else:
                    names.add(name)
                    entries.append(self.entry(name))
                if not self.more("between tensors"):
                    break
        if self.peek():
            raise self.fail("unexpected text after the header object")
        return metadata, entries

    def metadata(self) -> dict:
        self.expect("{", "for __metadata__ (a map of strings)")
        out: dict[str, str] = {}
        if self.peek() == "}":
            self.pos += 1
            return out
        while True:
            key = self.string("a metadata key")
            if key in out:
                raise self.fail(f"duplicate metadata key {brief(key, 100)}")
            self.expect(":", f"after metadata key {key[:100]!r}")
            out[key] = self.string(f"metadata value {key[:100]!r} (metadata values are "
                                   "strings)")
            if len(out) > MAX_METADATA_KEYS:
                raise self.fail(f"__metadata__ has more than {MAX_METADATA_KEYS} keys")
            if not self.more("in __metadata__"):
                return out

    def entry(self, name: str) -> Entry:
        where = f"tensor {name[:100]!r}"
        self.expect("{", f"for {where} (an object of dtype, shape and data_offsets)")
        fields: dict = {}
        if self.peek() != "}":
            while True:
                key = self.string(f"a key of {where}")
                if key in fields:
                    raise self.fail(f"{where}: duplicate key {brief(key, 40)}")
                self.expect(":", f"after {key[:40]!r} in {where}")
                if key == "dtype":
                    fields[key] = self.string(f"the dtype of {where}")
                elif key == "shape":
                    fields[key] = self.uints(f"the shape of {where}", MAX_NDIM)
                elif key == "data_offsets":
                    fields[key] = self.uints(f"the data_offsets of {where}", 2)
                else:
                    raise self.fail(f"{where}: unexpected key {brief(key, 40)}; expected exactly "
                                    "dtype, shape and data_offsets")
                if not self.more(f"in {where}"):
                    break
        else:
            self.pos += 1
        missing = [k for k in ("dtype", "shape", "data_offsets") if k not in fields]
        if missing:
            raise self.fail(f"{where} lacks {', '.join(missing)}; expected exactly dtype, "
                            "shape and data_offsets")
        code, shape, offsets = fields["dtype"], fields["shape"], fields["data_offsets"]
        if code not in ITEMSIZE:
            known = "a safetensors dtype ember has no dtype for" if code in FOREIGN else \
                "an unknown dtype"
            raise self.fail(f"{where} has {known}, {brief(code, 40)}; ember reads "
                            f"{', '.join(ITEMSIZE)}")
        if any(s >= MAX_DIM for s in shape):
            raise self.fail(f"{where}: shape {shape} has a size of 2**62 or more")
        if len(offsets) != 2 or offsets[0] > offsets[1]:
            raise self.fail(f"{where}: data_offsets {offsets} are not [begin, end] with "
                            "begin <= end")
        # Python ints cannot overflow: a shape whose product is huge simply fails here
        expected = math.prod(shape) * ITEMSIZE[code]
        if expected != offsets[1] - offsets[0]:
            raise self.fail(f"{where}: shape {shape} of {code} needs {expected} bytes but its "
                            f"data_offsets span {offsets[1] - offsets[0]}")
        return Entry(name, code, tuple(shape), offsets[0], offsets[1])


def _check_layout(entries: list, data_size: int) -> None:
    """The tensors, by offset, tile the data section from 0 to its end exactly."""
    end = 0
    for e in sorted(entries, key=lambda e: (e.begin, e.end)):
        if e.end > data_size:
            raise HeaderError(f"tensor {brief(e.name, 100)}: data_offsets [{e.begin}, "
                              f"{e.end}] pass the end of the data section ({data_size} bytes; "
                              "is the file truncated?)")
        if e.begin != end:
            raise HeaderError(f"tensor {brief(e.name, 100)} starts at byte {e.begin} of the "
                              f"data but the previous one ends at {end}; tensors must be "
                              "contiguous")
        end = e.end
    if end != data_size:
        raise HeaderError(f"the tensors cover {end} bytes but the data section has "
                          f"{data_size} (truncated, or trailing bytes)")


def read_array(fh, base: int, entry: Entry) -> np.ndarray:
    """The tensor's bytes (the data section starts at `base` in fh) in a new array."""
    out = np.empty(entry.shape, dtype=np_dtype(entry.code))
    if out.size:
        fh.seek(base + entry.begin)
        target = memoryview(out.reshape(-1).view(np.uint8))
        done = 0
        while done < len(target):
            got = fh.readinto(target[done:])
            if not got:
                raise HeaderError("the file ended before its tensors did (it changed while "
                                  "it was read?)")
            done += got
    return out


# --- writing -------------------------------------------------------------------------------

def layout(arrays: dict[str, np.ndarray], codes: dict[str, str],
           metadata: dict[str, str]) -> tuple[bytes, list[np.ndarray], int]:
    """(the 8-byte length and the header, the arrays in file order, the file's size).

    Tensors go largest itemsize first, then by name, so each one is aligned to its own
    itemsize (the header is padded to 8 bytes), as the safetensors library writes them.
    """
    order = sorted(arrays, key=lambda name: (-arrays[name].dtype.itemsize, name))
    header: dict = {"__metadata__": metadata}
    offset = 0
    for name in order:
        nbytes = arrays[name].nbytes
        header[name] = {"dtype": codes[name], "shape": list(arrays[name].shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    head = struct.pack("<Q", len(text)) + text
    return head, [arrays[name] for name in order], len(head) + offset


def write(fh, head: bytes, arrays: list[np.ndarray]) -> None:
    """Write the file to a binary file object: the header, then each array's bytes."""
    fh.write(head)
    for a in arrays:
        if a.size:
            # a byte view: the buffer protocol does not know ml_dtypes' bfloat16
            fh.write(memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8)))
