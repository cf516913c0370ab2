"""The exported-program file: one zip, no pickle, nothing in it executed.

Members (stored, uncompressed):
    program.json           {"format": "ember.export", "version": 1, ...}: the graph in ember's
                           op set (docs/export.md has the schema)
    weights.safetensors    parameters, buffers and constants by name (ember.save's format)
    examples.safetensors   {"inputs": [...], "outputs": [...]}: what program.verify() reruns

program.json is tagged JSON: null, booleans, strings, integers and finite floats are
themselves; a JSON list is a tuple; every other value is an object with one tag:
{"$list": [...]}, {"$dict": [[key, value], ...]}, {"$float": "nan"|"inf"|"-inf"},
{"$slice": [start, stop, step]}, {"$dtype": "float32"}, {"$ref": k} (value k of the
graph) and {"$expr": {"coef", "powers", "offset"}} (a size in dynamic dimensions).

Reading checks everything before anything runs: the zip's members and sizes, the JSON's
size and nesting, every field's type, every op against this ember's declarations (name,
signature, attribute names and types), the weights' names, shapes and dtypes against the
graph (ember.load checks the safetensors layout and checksum); program.load then checks
the graph itself at the example sizes (program.instantiate: values made before use, shape
and dtype rules, value sizes).  Every failure is an ExportFormatError naming the file and
the problem.
"""
from __future__ import annotations

import io
import json
import math
import os
import zipfile

import numpy as np

from .. import dtypes as D
from ..errors import CheckpointError, EmberError, brief
from ..io.record import HashCounter, colliding_keys
from .symbolic import MAX_SIZE, Dim, Expr
from .trace import ExportError, InputSpec, NodeSpec, Ref, Spec

FORMAT = "ember.export"
FORMAT_VERSION = 1
MAX_JSON_BYTES = 64 << 20
MAX_DEPTH = 64
MAX_NODES = 1_000_000
MAX_MEMBER_BYTES = 1 << 36         # what one zip member may declare (64 GiB)
# a deflated member may inflate to this many times its compressed size, plus the floor: a
# load costs a small multiple of the file's size (a 40 KB deflated program.json of
# "1,1,1,..." would otherwise parse into 250 MB of objects)
_INFLATE_RATIO, _INFLATE_FLOOR = 4, 4 << 20
_MEMBERS = ("program.json", "weights.safetensors", "examples.safetensors")
_KINDS = ("input", "parameter", "buffer", "constant")


class ExportFormatError(ExportError, ValueError):
    """A file that is not a valid exported program (truncated, corrupted, hostile).

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


# --- writing -------------------------------------------------------------------------------

def save(program, path) -> None:
    from ..io import save as save_tensors
    spec = program.spec
    document = {
        "format": FORMAT, "version": FORMAT_VERSION, "ember_version": _ember_version(),
        "ops": {name: _op_signature(name) for name in sorted(
            {n.op for n in spec.nodes if n.kind == "kernel"})},
        "dims": [[d.name, d.min, d.max] for d in spec.dims.values()],
        "inputs": [[i.name, i.kind, encode(i.shape), i.dtype.name] for i in spec.inputs],
        "nodes": [_node_json(n) for n in spec.nodes],
        "outputs": encode(spec.outputs),
        "in_tree": encode(spec.in_tree),
    }
    text = json.dumps(document, allow_nan=False, separators=(",", ":")).encode()
    weights = {name: t.to("cpu") for name, t in program._weights.items()}
    members = [("program.json", text), ("weights.safetensors", _tensors(save_tensors, weights))]
    if program.examples:
        inputs, outputs = program.examples
        members.append(("examples.safetensors", _tensors(
            save_tensors, {"inputs": list(inputs), "outputs": list(outputs)})))
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as zf:
            for name, data in members:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                zf.writestr(info, data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _tensors(save_tensors, obj) -> bytes:
    buf = io.BytesIO()
    save_tensors(obj, buf)
    return buf.getvalue()


def _ember_version() -> str:
    try:
        from importlib.metadata import version
        return version("ember")
    except Exception:  # noqa: BLE001  (not installed as a distribution: a source tree)
        return "unknown"


def _op_signature(name: str) -> str:
    from ..ops._op import REGISTRY
    return REGISTRY[name].sig["text"]


def _node_json(n: NodeSpec) -> list:
    out = None if n.shape is None else [encode(n.shape), n.dtype.name]
    return [n.kind, n.op, encode(list(n.args)), {k: encode(v) for k, v in n.attrs.items()},
            out, n.inplace]


def encode(value):
    """A Python value (of what a graph holds) as tagged JSON."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, tuple):
        return [encode(v) for v in value]
    if isinstance(value, list):
        return {"$list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"$dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, slice):
        return {"$slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if isinstance(value, D.DType):
        return {"$dtype": value.name}
    if isinstance(value, Ref):
        return {"$ref": value.index}
    if isinstance(value, Expr):
        return {"$expr": value.to_json()}
    if isinstance(value, np.generic):
        return encode(value.item())
    raise ExportError(f"export: cannot store a {type(value).__name__} ({value!r:.60}) in a "
                      "program file")


# --- reading -------------------------------------------------------------------------------

def read(path) -> tuple:
    """(name, spec, weights, examples) of the exported-program file at `path`, each part
    checked against the others; program.load makes them a program and checks its graph."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)
    members = _read_zip(path, name)
    document = _parse_json(members["program.json"], name)
    reader = _Reader(name)
    spec = reader.spec(document)
    weights = _read_tensors(members["weights.safetensors"], name, "weights.safetensors")
    if not isinstance(weights, dict) or not all(isinstance(k, str) for k in weights):
        raise invalid(name, "weights.safetensors does not hold a dict of named tensors")
    _check_weights(spec, weights, name)
    examples = None
    if "examples.safetensors" in members:
        stored = _read_tensors(members["examples.safetensors"], name, "examples.safetensors")
        examples = _check_examples(spec, stored, name)
    return name, spec, weights, examples


def invalid(name: str, problem: str) -> ExportFormatError:
    """The error that refuses file `name`, saying what is wrong with it."""
    return ExportFormatError(f"ember.export.load: {name} is not a valid exported program: "
                             f"{problem}")


def _read_zip(path, name) -> dict:
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ExportFormatError(f"ember.export.load: no file at {name}") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise invalid(name, f"not a readable zip file ({exc})") from None
    with zf:
        archive = zf.fp.seek(0, os.SEEK_END) if zf.fp is not None else 0
        infos = {}
        for info in zf.infolist():
            if info.filename in infos:
                raise invalid(name, f"member {brief(info.filename, 60)} appears twice")
            infos[info.filename] = info
        for required in _MEMBERS[:2]:
            if required not in infos:
                raise invalid(name, f"it lacks {required} (members: "
                                 f"{brief(sorted(infos)[:8], 200)})")
        extra = set(infos) - set(_MEMBERS)
        if extra:
            raise invalid(name, f"unexpected members {brief(sorted(extra)[:8], 200)}")
        out = {}
        for member, info in infos.items():
            limit = MAX_JSON_BYTES if member == "program.json" else MAX_MEMBER_BYTES
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise invalid(name, f"{member} uses compression method {info.compress_type}; "
                                 "programs are stored or deflated")
            if info.compress_type == zipfile.ZIP_STORED and info.file_size > archive:
                raise invalid(name, f"{member} claims {info.file_size} bytes; the whole file has "
                                 f"{archive} (truncated?)")
            if info.file_size > limit:
                raise invalid(name, f"{member} claims {info.file_size} bytes (at most {limit})")
            if info.compress_type == zipfile.ZIP_DEFLATED and \
                    info.file_size > _INFLATE_RATIO * info.compress_size + _INFLATE_FLOOR:
                raise invalid(name, f"{member} would inflate {info.compress_size} bytes to "
                                 f"{info.file_size}, more than {_INFLATE_RATIO} times (plus "
                                 f"{_INFLATE_FLOOR} bytes) what the file holds (a zip bomb?); "
                                 "ember writes programs stored: re-zip it without compression "
                                 "(zip -0)")
            try:
                data = zf.read(member)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
                    RuntimeError) as exc:
                raise invalid(name, f"cannot read {member} ({exc})") from None
            if len(data) != info.file_size:
                raise invalid(name, f"{member} holds {len(data)} bytes, not {info.file_size}")
            out[member] = data
    return out


def _parse_json(data: bytes, name):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid(name, f"program.json is not UTF-8 ({exc})") from None
    del data
    # json builds ~60 bytes of objects per container: bound their count by the text first
    containers = text.count("[") + text.count("{")
    if 64 * containers > 8 * len(text) + (1 << 20):
        raise invalid(name, f"program.json holds {containers} containers in {len(text)} "
                         "characters (a hostile file?)")

    def no_duplicates(pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise invalid(name, f"program.json repeats the key {brief(k, 60)}")
            out[k] = v
        return out

    def constant(token):
        raise invalid(name, f"program.json holds {token}, which is not JSON (the format writes "
                            'a non-finite float as {"$float": "nan" | "inf" | "-inf"})')

    def finite(token):
        value = float(token)
        if not math.isfinite(value):
            raise invalid(name, f"program.json holds the number {token[:40]}, which overflows a "
                                'float (the format writes a non-finite float as {"$float": '
                                '"inf"} or "-inf")')
        return value
    try:
        document = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=constant,
                              parse_float=finite)
    except RecursionError:
        raise invalid(name, "program.json is nested too deeply") from None
    except ValueError as exc:
        if isinstance(exc, ExportFormatError):
            raise
        raise invalid(name, f"program.json is not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise invalid(name, "program.json is not a JSON object")
    return document


def _read_tensors(data: bytes, name, member):
    from ..io import load as load_tensors
    try:
        return load_tensors(io.BytesIO(data), map_location="cpu")
    except CheckpointError as exc:
        raise invalid(name, f"{member}: {exc}") from None


class _Reader:
    """program.json -> Spec, every field checked."""

    def __init__(self, name: str):
        self.name = name
        self.dims: dict = {}

    def bad(self, problem: str) -> ExportFormatError:
        return invalid(self.name, problem)

    def spec(self, doc: dict) -> Spec:
        if doc.get("format") != FORMAT:
            raise self.bad(f"its format is {brief(doc.get('format'), 60)}, not {FORMAT!r}")
        version = doc.get("version")
        if version != FORMAT_VERSION or type(version) is not int:
            raise self.bad(f"format version {brief(version, 40)}; this ember reads version "
                           f"{FORMAT_VERSION} (a newer ember wrote it? upgrade ember)")
        want = {"format", "version", "ember_version", "ops", "dims", "inputs", "nodes",
                "outputs", "in_tree"}
        if set(doc) != want:
            raise self.bad(f"program.json has keys {brief(sorted(doc), 200)}; expected "
                           f"{sorted(want)}")
        self.ops(doc["ops"])
        self.dims = self.dim_list(doc["dims"])
        inputs = self.inputs(doc["inputs"])
        nodes = self.nodes(doc["nodes"], len(inputs))
        made = len(inputs) + sum(n.shape is not None for n in nodes)
        outputs = self.structure(self.decode(doc["outputs"], "outputs"), "outputs", made)
        in_tree = self.decode(doc["in_tree"], "in_tree")
        self.in_tree(in_tree, sum(i.kind == "input" for i in inputs))
        return Spec(self.dims, inputs, nodes, outputs, in_tree)

    def ops(self, ops) -> None:
        from ..ops._op import REGISTRY
        if not isinstance(ops, dict):
            raise self.bad("'ops' is not an object of op signatures")
        for op, sig in ops.items():
            declared = REGISTRY.get(op)
            if declared is None:
                raise self.bad(f"it uses op {brief(op, 60)}, which this ember does not declare "
                               "(written by another ember version?)")
            if sig != declared.sig["text"]:
                raise self.bad(f"op {op!r} had signature {brief(sig, 200)} when the file was "
                               f"written; this ember's is {declared.sig['text']!r}")
        self.op_names = set(ops)

    def dim_list(self, dims) -> dict:
        out = {}
        if not isinstance(dims, list) or len(dims) > 64:
            raise self.bad("'dims' is not a short list of [name, min, max]")
        for d in dims:
            if not (isinstance(d, list) and len(d) == 3 and isinstance(d[0], str)
                    and all(type(v) is int for v in d[1:])):
                raise self.bad(f"dims entry {brief(d, 80)} is not [name, min, max]")
            try:
                out[d[0]] = Dim(d[0], d[1], d[2])
            except EmberError as exc:
                raise self.bad(str(exc)) from None
        if len(out) != len(dims):
            raise self.bad("two dims share a name")
        return out

    def inputs(self, inputs) -> list:
        if not isinstance(inputs, list) or len(inputs) > MAX_NODES:
            raise self.bad("'inputs' is not a list")
        out, names = [], set()
        for k, item in enumerate(inputs):
            if not (isinstance(item, list) and len(item) == 4 and isinstance(item[0], str)
                    and item[1] in _KINDS):
                raise self.bad(f"input {k} is not [name, kind, shape, dtype] with kind one "
                               f"of {_KINDS}")
            name, kind, shape, dtype = item
            if name in names:
                raise self.bad(f"two inputs are named {brief(name, 60)}")
            names.add(name)
            out.append(InputSpec(name, kind, self.shape(shape, f"input {brief(name, 60)}"),
                                 self.dtype(dtype, f"input {brief(name, 60)}")))
        kinds = [i.kind for i in out]
        if "input" in kinds and kinds.index("input") != 0 or \
                kinds[:kinds.count("input")] != ["input"] * kinds.count("input"):
            raise self.bad("the function's inputs must come before the weights")
        return out

    def nodes(self, nodes, n_inputs: int) -> list:
        from ..ops._op import REGISTRY
        if not isinstance(nodes, list) or len(nodes) > MAX_NODES:
            raise self.bad("'nodes' is not a list (of at most a million nodes)")
        out, made = [], n_inputs
        for k, item in enumerate(nodes):
            where = f"node {k}"
            if not (isinstance(item, list) and len(item) == 6 and item[0] in ("kernel", "check")
                    and isinstance(item[1], str) and isinstance(item[3], dict)
                    and isinstance(item[5], bool)):
                raise self.bad(f"{where} is not [kind, op, args, attrs, out, inplace]")
            kind, op, args, attrs, result, inplace = item
            where = f"node {k} ({op:.60})"
            args = self.decode(args, where)
            if not isinstance(args, list):
                raise self.bad(f"{where}: its arguments are not a list")
            for a in args:
                if isinstance(a, Ref) and not 0 <= a.index < made:
                    raise self.bad(f"{where} reads v{a.index}, which is not made before it")
                if not isinstance(a, Ref) and not _scalar(a):
                    raise self.bad(f"{where}: argument {brief(a, 60)} is neither a value nor a "
                                   "number")
            attrs = {key: self.decode(v, f"{where}, attribute {brief(key, 40)}")
                     for key, v in attrs.items()}
            if kind == "check":
                if not op.endswith("_bounds") or set(attrs) != {"size"} or len(args) != 1 \
                        or not isinstance(args[0], Ref) or result is not None or inplace:
                    raise self.bad(f"{where} is not an index check (x_bounds(index), "
                                   "size=...)")
                out.append(NodeSpec("check", op, args, attrs, None, None))
                continue
            if op not in self.op_names:
                raise self.bad(f"{where}: op {brief(op, 60)} is not listed in 'ops'")
            declared = REGISTRY[op]
            self.signature(declared, args, attrs, where)
            if result is None:
                if not inplace or not args or not isinstance(args[0], Ref):
                    raise self.bad(f"{where} has no output and writes no input")
                out.append(NodeSpec("kernel", op, args, attrs, None, None, True))
                continue
            if not (isinstance(result, list) and len(result) == 2) or inplace:
                raise self.bad(f"{where}: its output is not [shape, dtype]")
            out.append(NodeSpec("kernel", op, args, attrs,
                                self.shape(result[0], where), self.dtype(result[1], where)))
            made += 1
        return out

    def signature(self, op, args, attrs, where) -> None:
        sig = op.sig
        inputs = sig["inputs"]
        required = sum(not i["optional"] for i in inputs)
        if not sig["variadic"] and not required <= len(args) <= len(inputs) or \
                sig["variadic"] and not args:
            raise self.bad(f"{where} has {len(args)} arguments; {op.name}'s signature is "
                           f"({sig['text']})")
        for j, a in enumerate(args):
            kind = inputs[min(j, len(inputs) - 1)]["type"] if inputs else "array"
            if not isinstance(a, Ref) and "scalar" not in kind and a is not None:
                raise self.bad(f"{where}: argument {j} must be an array, got {brief(a, 40)}")
            if a is None and not sig["variadic"] and not inputs[j]["optional"]:
                raise self.bad(f"{where}: argument {j} ({inputs[j]['name']}) is required, "
                               "got None")
        unknown = set(attrs) - set(sig["attrs"])
        missing = set(sig["attrs"]) - set(attrs)
        if unknown or missing:
            raise self.bad(f"{where}: attributes {sorted(attrs)} do not match {op.name}'s "
                           f"signature ({sig['text']})")
        for key, kind in sig["attrs"].items():
            if not _typed(attrs[key], kind):
                raise self.bad(f"{where}: attribute {key}={brief(attrs[key], 80)} is not a {kind}")
            if key in _AXES and _symbolic(attrs[key]):
                # a dimension index is never a function of a dynamic size
                raise self.bad(f"{where}: attribute {key}={brief(attrs[key], 80)} is a "
                               "dimension index, not a size")

    def shape(self, shape, where) -> tuple:
        value = self.decode(shape, where)
        if not isinstance(value, tuple) or len(value) > 64:
            raise self.bad(f"{where}: its shape is not a list of at most 64 sizes")
        for n in value:
            if isinstance(n, Expr):
                if not n.is_int:
                    raise self.bad(f"{where}: a size {n!r} that is not an integer")
            elif type(n) is not int or not 0 <= n < MAX_SIZE:
                raise self.bad(f"{where}: size {brief(n, 40)} is not an integer in [0, 2**62)")
        return value

    def dtype(self, name, where) -> D.DType:
        dtype = D._BY_NAME.get(name) if isinstance(name, str) else None
        if dtype is None or dtype.name != name:
            raise self.bad(f"{where}: unknown dtype {brief(name, 40)}")
        return dtype

    def in_tree(self, tree, n_inputs: int) -> None:
        refs = []

        def walk(t, depth):
            if depth > MAX_DEPTH:
                raise self.bad("in_tree is nested too deeply")
            if isinstance(t, Ref):
                refs.append(t.index)
            elif isinstance(t, (tuple, list)):
                for x in t:
                    walk(x, depth + 1)
            elif isinstance(t, dict):
                for x in t.values():
                    walk(x, depth + 1)
            elif not _scalar(t) and not isinstance(t, str):
                raise self.bad(f"in_tree holds {brief(t, 60)}")
        if not (isinstance(tree, tuple) and len(tree) == 2 and isinstance(tree[0], tuple)
                and isinstance(tree[1], dict)):
            raise self.bad("in_tree is not [args, kwargs]")
        walk(tree, 0)
        if refs != list(range(n_inputs)):
            raise self.bad("in_tree does not name each input once, in order")

    def structure(self, value, where, made):
        from ..graph.ir import flatten
        for leaf in flatten(value):
            if isinstance(leaf, Ref) and not 0 <= leaf.index < made:
                raise self.bad(f"{where} name v{leaf.index}, which no node makes")
        return value

    def decode(self, node, where: str, depth: int = 0):
        if depth > MAX_DEPTH:
            raise self.bad(f"{where} is nested more than {MAX_DEPTH} deep")
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return tuple(self.decode(v, where, depth + 1) for v in node)
        if not isinstance(node, dict) or len(node) != 1:
            raise self.bad(f"{where}: {brief(node, 60)} is not a tagged value")
        (tag, v), = node.items()
        if tag == "$list" and isinstance(v, list):
            return [self.decode(x, where, depth + 1) for x in v]
        if tag == "$dict" and isinstance(v, list):
            out, counter = {}, HashCounter()
            for pair in v:
                if not (isinstance(pair, list) and len(pair) == 2 and
                        isinstance(pair[0], (str, int)) and not isinstance(pair[0], bool)):
                    raise self.bad(f"{where}: a $dict entry is not [key, value]")
                if not counter.add(pair[0]):
                    raise self.bad(f"{where}: " + colliding_keys("a $dict"))
                out[pair[0]] = self.decode(pair[1], where, depth + 1)
            return out
        if tag == "$float" and v in ("nan", "inf", "-inf"):
            return float(v)
        if tag == "$slice" and isinstance(v, list) and len(v) == 3:
            parts = [self.decode(x, where, depth + 1) for x in v]
            if not all(p is None or isinstance(p, Expr) or type(p) is int for p in parts):
                raise self.bad(f"{where}: a slice of {brief(parts, 60)}")
            return slice(*parts)
        if tag == "$dtype":
            return self.dtype(v, where)
        if tag == "$ref" and type(v) is int and 0 <= v < MAX_NODES * 2:
            return Ref(v)
        if tag == "$expr" and isinstance(v, dict):
            return self.expr(v, where)
        raise self.bad(f"{where}: unknown tagged value {brief(tag, 40)}")

    def expr(self, v: dict, where) -> Expr:
        def number(x):
            return type(x) in (int, float) and (type(x) is float and math.isfinite(x)
                                                or type(x) is int) and abs(x) < MAX_SIZE
        powers = v.get("powers")
        if set(v) != {"coef", "powers", "offset"} or not number(v["coef"]) or \
                not number(v["offset"]) or not isinstance(powers, dict) or not powers or \
                len(powers) > 8:
            raise self.bad(f"{where}: a malformed size expression {brief(v, 80)}")
        for name, p in powers.items():
            if name not in self.dims or p not in (1, -1) or type(p) is not int:
                raise self.bad(f"{where}: a size expression over {brief(name, 40)}, which is not "
                               f"a declared dimension (dims: {sorted(self.dims)})")
        return Expr(v["coef"], powers, v["offset"])


def _scalar(a) -> bool:
    return a is None or isinstance(a, (bool, int, float, Expr))


_AXES = frozenset({"axis", "axes", "dim", "dims", "dim0", "dim1"})


def _symbolic(value) -> bool:
    return isinstance(value, Expr) or isinstance(value, tuple) and any(
        isinstance(v, Expr) for v in value)


def _typed(value, kind: str) -> bool:
    """Whether value has the type a signature writes as `kind`."""
    if "|" in kind and not kind.startswith("tuple"):
        return any(_typed(value, k.strip()) for k in kind.split("|"))
    if kind == "None":
        return value is None
    if kind == "int":
        return (type(value) is int or isinstance(value, Expr) and value.is_int)
    if kind == "bool":
        return type(value) is bool
    if kind == "scalar":
        return type(value) in (bool, int, float) or isinstance(value, Expr)
    if kind == "dtype":
        return isinstance(value, D.DType)
    if kind == "slice":
        return isinstance(value, slice) or type(value) is int
    if kind.startswith("tuple[") and kind.endswith("]"):
        inner = kind[6:-1]
        if not isinstance(value, tuple) or len(value) > 64:
            return False
        parts = [p.strip() for p in _split_top(inner)]
        if len(parts) > 1:                       # tuple[int, int]: fixed length
            return len(value) == len(parts) and all(_typed(v, p) for v, p in zip(value, parts))
        return all(_typed(v, parts[0]) for v in value)
    return False


def _split_top(text: str) -> list:
    depth, start, out = 0, 0, []
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def _check_weights(spec: Spec, weights: dict, name) -> None:
    want = {i.name: i for i in spec.inputs if i.kind != "input"}
    if set(weights) != set(want):
        missing, extra = sorted(set(want) - set(weights)), sorted(set(weights) - set(want))
        raise invalid(name, f"weights.safetensors does not match the graph (missing "
                         f"{brief(missing[:5], 200)}, unexpected {brief(extra[:5], 200)})")
    for key, t in weights.items():
        i = want[key]
        if i.dtype is not t.dtype or any(isinstance(n, Expr) for n in i.shape) or \
                tuple(t.shape) != tuple(i.shape):
            raise invalid(name, f"weight {brief(key, 60)} is {t.dtype.name}{list(t.shape)}; "
                             f"the graph reads {i.dtype.name}{list(i.shape)}")


def _check_examples(spec: Spec, stored, name) -> tuple:
    if not (isinstance(stored, dict) and set(stored) == {"inputs", "outputs"}
            and all(isinstance(stored[k], list) for k in stored)):
        raise invalid(name, "examples.safetensors does not hold {'inputs': [...], 'outputs': "
                         "[...]}")
    from ..tensor import Tensor
    inputs, outputs = stored["inputs"], stored["outputs"]
    if not all(type(t) is Tensor for t in inputs + outputs):
        raise invalid(name, "examples.safetensors holds something other than tensors")
    if len(inputs) != len(spec.arg_inputs()):
        raise invalid(name, f"examples.safetensors has {len(inputs)} inputs; the graph takes "
                         f"{len(spec.arg_inputs())}")
    return inputs, outputs


def describe(spec: Spec) -> str:
    """The program as text, like Graph.format but with dynamic sizes by name."""
    def typ(shape, dtype):
        return f"{dtype.name}[{','.join(map(repr, shape))}]"
    args = [f"v{k}: {typ(i.shape, i.dtype)}" for k, i in enumerate(spec.inputs)
            if i.kind == "input"]
    lines = [f"program({', '.join(args)}):"]
    names = {}
    for k, i in enumerate(spec.inputs):
        names[k] = i.name if i.kind != "input" else f"v{k}"
        if i.kind != "input":
            lines.append(f"    v{k}: {typ(i.shape, i.dtype)} = {i.kind} {i.name}")
    made = len(spec.inputs)
    for n in spec.nodes:
        call = ", ".join([repr(a) for a in n.args] + [f"{k}={_short(v)}"
                                                       for k, v in n.attrs.items()])
        what = f"{n.op}({call})" if n.kind == "kernel" else f"check:{n.op}({call})"
        if n.shape is None:
            lines.append(f"    {what}" + (f"  # writes {n.args[0]!r}" if n.inplace else ""))
        else:
            lines.append(f"    v{made}: {typ(n.shape, n.dtype)} = {what}")
            made += 1
    lines.append(f"    return {spec.outputs!r}")
    return "\n".join(lines)


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
