"""Hostile files written opcode by opcode (issue 27), and a child process that loads them
under a time and memory limit, timing each and measuring its peak with tracemalloc.

A torch checkpoint's data.pkl is a pickle: with its memo (PUT/GET) or DUP, a few hundred
bytes share one tuple 2**40 times over, nest 200,000 deep, or hold thousands of keys that
collide in a dict.  The builders here make those shapes; `load_in_child` says what each
file did (loaded, refused with which error, crashed) and what it cost.
"""
from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib

import numpy as np

P = 2**61 - 1                       # every multiple hashes to 0

PROTO = b"\x80\x02"
MARK, STOP, POP, DUP = b"(", b".", b"0", b"2"
TUPLE, TUPLE1, TUPLE2, LIST, APPEND = b"t", b"\x85", b"\x86", b"l", b"a"
EMPTY_TUPLE, EMPTY_LIST, EMPTY_DICT, EMPTY_SET = b")", b"]", b"}", b"\x8f"
SETITEM, SETITEMS, ADDITEMS, FROZENSET = b"s", b"u", b"\x90", b"\x91"
REDUCE, BINPERSID, NEWFALSE = b"R", b"Q", b"\x89"


def put(i: int = 0) -> bytes:
    return b"q" + bytes([i])


def get(i: int = 0) -> bytes:
    return b"h" + bytes([i])


def global_(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def text(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def integer(v: int) -> bytes:
    if 0 <= v < 256:
        return b"K" + bytes([v])
    raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
    if len(raw) < 256:
        return b"\x8a" + bytes([len(raw)]) + raw
    return b"\x8b" + struct.pack("<I", len(raw)) + raw


def ints(values) -> bytes:
    return MARK + b"".join(integer(v) for v in values) + TUPLE


def rebuild(size: bytes, stride: bytes, offset: int = 0, numel: int | bytes = 4, key: str = "0",
            kind: str = "FloatStorage") -> bytes:
    """torch._utils._rebuild_tensor_v2(storage `key`, offset, size, stride, False, {})."""
    storage = (MARK + text("storage") + global_("torch", kind) + text(key) + text("cpu")
               + (numel if isinstance(numel, bytes) else integer(numel)) + TUPLE + BINPERSID)
    return (global_("torch._utils", "_rebuild_tensor_v2") + MARK + storage + integer(offset)
            + size + stride + NEWFALSE + global_("collections", "OrderedDict") + EMPTY_TUPLE
            + REDUCE + TUPLE + REDUCE)


def torch_file(data_pkl: bytes, storage: bytes | None = None) -> bytes:
    """A zip as torch.save lays it out, holding data_pkl and storage '0' (4 float32)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data_pkl)
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/data/0", np.arange(4, dtype=np.float32).tobytes()
                   if storage is None else storage)
        z.writestr("archive/version", b"3\n")
    return buf.getvalue()


def overlapping_zip(n: int, payload: bytes) -> bytes:
    """A torch zip whose n byte storages overlap: storage k's stored data runs from its own
    end of header to the end of `payload`, over every later member's header (each CRC is
    right), so reading them all reads the file about n / 2 times.  data.pkl lists n
    one-byte tensors, one on each storage."""
    names = [f"archive/data/{k}".encode() for k in range(n)]

    def data_pkl(sizes) -> bytes:          # BININT sizes: the same length for any sizes
        return PROTO + MARK + b"".join(
            rebuild(ints([1]), ints([1]), key=str(k), kind="ByteStorage",
                    numel=b"J" + struct.pack("<i", size)) for k, size in enumerate(sizes)
        ) + LIST + STOP

    def local(name: bytes, size: int, crc: int) -> bytes:
        return struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, 0, 0, 0, 33, crc, size, size,
                           len(name), 0) + name

    fixed = [(b"archive/byteorder", b"little"), (b"archive/version", b"3\n")]
    pkl_size = len(data_pkl([0] * n))
    at = 30 + len(b"archive/data.pkl") + pkl_size + sum(30 + len(m) + len(d) for m, d in fixed)
    starts = []
    for name in names:
        at += 30 + len(name)
        starts.append(at)                  # where storage k's data begins
    end = at + len(payload)
    sizes = [end - start for start in starts]
    members = [(b"archive/data.pkl", data_pkl(sizes))] + fixed
    image, entries = b"", []
    for name, data in members:
        entries.append((name, len(image), len(data), zlib.crc32(data)))
        image += local(name, len(data), zlib.crc32(data)) + data
    tail = b"".join(local(name, 0, 0) for name in names) + payload
    whole = bytearray(image + tail)
    last_first = []            # storage k's data holds the headers after it: those first
    for name, start, size in reversed(list(zip(names, starts, sizes))):
        crc = zlib.crc32(whole[start:end])
        header = local(name, size, crc)
        whole[start - len(header):start] = header
        last_first.append((name, start - len(header), size, crc))
    entries += last_first[::-1]
    directory = b"".join(
        struct.pack("<4s6H3I5HII", b"PK\x01\x02", 20, 20, 0, 0, 0, 33, crc, size, size,
                    len(name), 0, 0, 0, 0, 0, offset) + name
        for name, offset, size, crc in entries)
    return bytes(whole) + directory + struct.pack(
        "<4s4H2IH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(directory),
        len(whole), 0)


# --- shapes: each leaves one object on the stack --------------------------------------------

def laughs(levels: int, how: str = "dup") -> bytes:
    """() doubled `levels` times, each level sharing the one below twice: 2**levels leaves
    in a few bytes per level."""
    step = {"dup": DUP + TUPLE2,                                   # x -> (x, x)
            "memo": put() + POP + MARK + get() + get() + TUPLE,
            "list": put() + POP + MARK + get() + get() + LIST}[how]
    return EMPTY_TUPLE + step * levels


def nested(depth: int, how: str = "tuple") -> bytes:
    """A container inside a container ... `depth` deep."""
    if how == "tuple":
        return EMPTY_TUPLE + TUPLE1 * depth
    if how == "list":
        return EMPTY_LIST + (put() + POP + EMPTY_LIST + get() + APPEND) * depth
    return EMPTY_DICT + (put() + POP + EMPTY_DICT + integer(1) + get() + SETITEM) * depth


def colliding(n: int, how: str = "dict") -> bytes:
    """n distinct int keys that all hash to 0."""
    keys = [integer(k * P) for k in range(1, n + 1)]
    if how == "dict":
        return EMPTY_DICT + MARK + b"".join(k + integer(1) for k in keys) + SETITEMS
    if how == "set":
        return global_("builtins", "set") + MARK + b"".join(keys) + LIST + TUPLE1 + REDUCE
    return EMPTY_SET + MARK + b"".join(keys) + ADDITEMS


# --- uses of the object x on the stack: each ends the pickle --------------------------------

USES = {
    "value": put() + POP + EMPTY_DICT + text("a") + get() + SETITEM + STOP,
    "key": put() + POP + EMPTY_DICT + get() + integer(1) + SETITEM + STOP,
    "torch.Size": put() + POP + global_("torch", "Size") + get() + TUPLE1 + REDUCE + STOP,
    "callee": EMPTY_TUPLE + REDUCE + STOP,
    "persistent id": BINPERSID + STOP,
    "set": put() + POP + global_("builtins", "set") + MARK + get() + LIST + TUPLE1 + REDUCE
    + STOP,
    "frozenset": put() + POP + MARK + get() + FROZENSET + STOP,
    "additems": put() + POP + EMPTY_SET + MARK + get() + ADDITEMS + STOP,
    "OrderedDict": put() + POP + global_("collections", "OrderedDict") + MARK + get()
    + integer(1) + TUPLE2 + LIST + TUPLE1 + REDUCE + STOP,
    "tensor size": put() + POP + rebuild(get(), get()) + STOP,
}


def pickle_of(shape: bytes, use: str) -> bytes:
    return PROTO + shape + USES[use]


# --- the child ------------------------------------------------------------------------------

LIMIT_BYTES = 1 << 30               # address space of the child (ember itself needs ~600 MB)

_CHILD = textwrap.dedent("""
    import json, resource, sys, time, tracemalloc
    limit, cpu = int(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    import ember
    import ember.export
    import ember.onnx
    from ember.errors import EmberError
    try:                          # imported once here, not timed with the first file
        import onnx.helper, onnx.numpy_helper, ember.onnx.importer
    except ImportError:
        pass
    def load(path, kind):
        try:
            if kind == "export":
                ember.export.load(path)
            elif kind == "onnx":
                ember.onnx.load(path)
            else:
                ember.load(path)
            return "loaded", ""
        except EmberError as exc:
            return type(exc).__name__, str(exc)
        except Exception as exc:          # the ONNX importer's errors are checked elsewhere
            if kind != "onnx":
                raise
            return "onnx: " + type(exc).__name__, str(exc)[:500]
    def attempt(path, kind):
        try:
            return load(path, kind)
        except BaseException as exc:      # reported, and the test fails on it
            return "not an ember error: " + type(exc).__name__, str(exc)[:500]

    for path, kind, untraced in json.loads(sys.argv[1]):
        print(json.dumps({"started": path}), flush=True)
        if untraced:                         # timed without tracemalloc, which slows it
            start = time.perf_counter()
            attempt(path, kind)
            seconds = time.perf_counter() - start
        tracemalloc.start()
        start = time.perf_counter()
        outcome, message = attempt(path, kind)
        traced = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(json.dumps({"path": path, "outcome": outcome, "message": message[:2000],
                          "seconds": seconds if untraced else traced, "traced": traced,
                          "peak": peak}), flush=True)
""")


def load_in_child(folder, files: dict, timeout: float, untraced=(), cpu: int = 60) -> dict:
    """{name: {"outcome", "message", "seconds", "traced", "peak", "size"}} for files {name:
    (bytes, kind)} (kind "torch", "ember", "export" or "onnx") loaded one after another in
    one child process with at most LIMIT_BYTES of address space and `cpu` seconds of CPU.
    "peak" and "traced" come from a load under tracemalloc (several times slower);
    "seconds" from a load without it for the files named in `untraced`, else is "traced".
    A child that crashes or runs out of time names the file it was loading."""
    paths, sizes = [], {}
    for k, (name, (content, kind)) in enumerate(files.items()):
        path = os.path.join(folder, f"case{k}")
        with open(path, "wb") as fh:
            fh.write(content)
        paths.append((path, kind, name in untraced))
        sizes[path] = (name, len(content))
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(paths), str(LIMIT_BYTES),
                              str(cpu)],
                             capture_output=True, text=True, timeout=timeout)
        stdout, code, stderr = out.stdout, out.returncode, out.stderr
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        code, stderr = "timeout", ""
    results, current = {}, None
    for line in stdout.splitlines():
        record = json.loads(line)
        if "started" in record:
            current = sizes[record["started"]][0]
            continue
        name, size = sizes[record.pop("path")]
        results[name] = {**record, "size": size}
        current = None
    if current is not None or code != 0:
        raise AssertionError(f"the child ended with {code} while loading {current!r} "
                             f"(done: {len(results)} of {len(files)}):\n{stderr[-3000:]}")
    return results


# --- the fuzz: random pickles that share and nest ------------------------------------------

_SCALARS = [integer(0), integer(7), integer(-1), integer(P), integer(3 * P), integer(2**300),
            text("w"), text("layer.0.weight"), b"C\x03abc", b"G" + struct.pack(">d", 0.5),
            b"N", b"\x88", b"\x89"]
_SHAPES = [((), ()), ((4,), (1,)), ((2, 2), (2, 1)), ((2, 2), (1, 2)), ((1, 4), (4, 1)),
           ((0, 3), (3, 1)), ((4, 1), (1, 2**62))]


def _soup(rng, n_ops: int) -> bytes:
    """n_ops random opcodes over a modelled stack, each where the stack's kinds allow it, so
    that most soups load: scalars, DUP and memo PUT/GET (sharing), tuples (hashable when
    their items are), lists, dicts and sets filled with what they accept, the allowed calls
    and tensors.  The whole stack ends as one list."""
    out, kinds, memo, marks = [MARK], [], {}, []

    def hashable(kind):
        return kind == "h"
    for _ in range(n_ops):
        roll = rng.random()
        fence = marks[-1] if marks else 0          # items below the last MARK are not operands
        top = kinds[-1] if len(kinds) > fence else None
        if top is None or roll < 0.2:
            out.append(_SCALARS[rng.integers(len(_SCALARS))])
            kinds.append("h")
        elif roll < 0.32:
            out.append(DUP)
            kinds.append(top)
        elif roll < 0.40:
            slot = int(rng.integers(0, 4))
            out.append(put(slot))
            memo[slot] = top
        elif roll < 0.50 and memo:
            slot = list(memo)[rng.integers(len(memo))]
            out.append(get(slot))
            kinds.append(memo[slot])
        elif roll < 0.62:
            n = int(rng.integers(1, 4))
            if len(kinds) - fence < n:
                continue
            items = kinds[-n:]
            del kinds[-n:]
            out.append({1: TUPLE1, 2: TUPLE2, 3: b"\x87"}[n])
            kinds.append("h" if all(map(hashable, items)) else "u")
        elif roll < 0.68:
            out.append(MARK)
            marks.append(len(kinds))
        elif roll < 0.76 and marks:
            items = kinds[marks.pop():]
            del kinds[len(kinds) - len(items):]
            if all(map(hashable, items)) and rng.random() < 0.4:
                out.append(FROZENSET)
                kinds.append("h")
            else:
                closer = [TUPLE, LIST][rng.integers(2)]
                out.append(closer)
                kinds.append("L" if closer == LIST else
                             "h" if all(map(hashable, items)) else "u")
        elif roll < 0.80:
            which = int(rng.integers(3))
            out.append([EMPTY_LIST, EMPTY_DICT, EMPTY_SET][which])
            kinds.append("LDS"[which])
        elif roll < 0.88 and len(kinds) - 2 >= fence and kinds[-2] == "L":
            out.append(APPEND)
            kinds.pop()
        elif roll < 0.92 and len(kinds) - 3 >= fence and kinds[-3] == "D" and \
                hashable(kinds[-2]):
            out.append(SETITEM)
            del kinds[-2:]
        elif roll < 0.96 and hashable(top):
            # set([top]) or frozenset([top]): top hashed as an item
            call = global_("builtins", "set" if rng.random() < 0.5 else "frozenset")
            out.append(put(3) + POP + call + MARK + get(3) + LIST + TUPLE1 + REDUCE)
            memo[3] = top
            kinds[-1] = "S" if call.endswith(b"set\n") and b"frozen" not in call else "h"
        else:
            size, stride = _SHAPES[rng.integers(len(_SHAPES))]
            out.append(rebuild(ints(size), ints(stride)))
            kinds.append("x")
    while marks:
        marks.pop()
        out.append(LIST)
    return b"".join(out) + LIST


def fuzz_pickles(seed: int, count: int) -> dict:
    """{name: data.pkl}: structure-sharing and nesting templates with random sizes and
    uses, and random opcode soups."""
    rng = np.random.default_rng(seed)
    cases = {}
    for k in range(count):
        use = list(USES)[rng.integers(len(USES))]
        kind = rng.integers(7)
        if kind == 0:
            how = ["dup", "memo", "list"][rng.integers(3)]
            levels = int(rng.integers(1, 64))
            name, shape = f"laughs({levels}, {how})", laughs(levels, how)
        elif kind == 1:
            how = ["tuple", "list", "dict"][rng.integers(3)]
            depth = int(rng.integers(1, 200_000 if how == "tuple" else 3000))
            name, shape = f"nested({depth}, {how})", nested(depth, how)
        elif kind == 2:
            how = ["dict", "set", "additems"][rng.integers(3)]
            n = int(rng.integers(1, 3000))
            name, shape = f"colliding({n}, {how})", colliding(n, how)
        elif kind == 3:
            # one big int shared by many tuple keys: hashing reads its digits each time
            bits, n = int(rng.integers(64, 200_000)), int(rng.integers(1, 2000))
            keys = b"".join(MARK + get() + integer(i) + TUPLE + integer(1) for i in range(n))
            name = f"{n} keys holding a {bits}-bit int"
            shape = integer(2**bits - 1) + put() + POP + EMPTY_DICT + MARK + keys + SETITEMS
        else:
            n_ops = int(rng.integers(10, 1200))
            name, shape, use = f"soup of {n_ops}", _soup(rng, n_ops), "value"
        cases[f"{k}: {name} as {use}"] = PROTO + shape + USES[use]
    return cases
