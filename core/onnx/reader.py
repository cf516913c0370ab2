"""Reading an ONNX model without trusting it, for ember.onnx.load.

The bytes are parsed here (protobuf), every tensor is decoded here (not by
onnx.numpy_helper, not by onnx.load's external-data loader), and the graph is checked
here before anything runs: an ONNX model is a file from somewhere, and every way it can
be malformed is an OnnxImportError that names the initializer, node or output, what was
expected, what the file holds and the fix.

Cost stays proportional to the file: a tensor's declared size is checked against the bytes
that hold it before any array is made (a tensor declaring 2**40 elements with no data
allocates nothing), external data is read only after ember's own path check (relative,
inside the model's directory after symlinks, an existing regular file, offset and length
within it) and at most once per byte of each data file, and error messages show an
untrusted name only up to a fixed budget.
"""
from __future__ import annotations

import hashlib
import heapq
import os
import stat

import numpy as np

from ..errors import EmberError


class OnnxImportError(EmberError, ValueError):
    """An ONNX model that ember cannot run: a malformed file (unparseable bytes, a tensor
    whose data disagrees with its shape, a node reading a value nothing makes, external
    data outside the model's directory), an op or attribute ember does not import.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


NAME_BUDGET = 60            # characters of an untrusted name shown in a message
MAX_DIMS = 32               # dimensions of a tensor (NumPy's limit is 64)

_FIX_EXPORT = "export the model again (the file is damaged or was written wrongly)"


def quote(name) -> str:
    """repr(name) cut to NAME_BUDGET characters: names come from the file."""
    text = name if isinstance(name, str) else \
        name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
    if len(text) <= NAME_BUDGET:
        return repr(text)
    return f"{text[:NAME_BUDGET]!r}... ({len(text)} characters)"


def text(value, what: str) -> str:
    """A string field of the model; protobuf hands back bytes where the file's bytes are
    not UTF-8, which ONNX requires of every name."""
    if isinstance(value, str):
        return value
    raise OnnxImportError(f"onnx.load: {what} is not UTF-8 text ({quote(value)}); ONNX "
                          f"names are UTF-8: {_FIX_EXPORT}")


def _texts(values, what: str) -> list:
    return [text(v, what) for v in values]


def _names(names, limit: int = 4) -> str:
    names = list(names)
    shown = ", ".join(quote(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _dims(dims) -> str:
    dims = list(dims)
    if len(dims) <= 8:
        return str(dims)
    return f"[{', '.join(str(d) for d in dims[:8])}, ... ({len(dims)} dims)]"


# --- bytes -> ModelProto -------------------------------------------------------------------

def parse(data: bytes, what: str):
    """The ModelProto in data; an OnnxImportError when protobuf cannot read it."""
    import onnx
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # noqa: BLE001  (protobuf's DecodeError, upb's RuntimeError...)
        raise OnnxImportError(
            f"onnx.load: cannot read an ONNX model from {what}: protobuf cannot parse its "
            f"{len(data)} bytes ({type(exc).__name__}: {str(exc)[:200]}); expected a "
            f"serialized onnx.ModelProto: the file is truncated or corrupt, or not ONNX; "
            f"{_FIX_EXPORT}") from None
    return proto


# --- tensors -------------------------------------------------------------------------------

# ONNX TensorProto.DataType -> (NumPy dtype name, the typed field that holds it when the
# tensor has no raw_data)
_STORAGE = {1: ("float32", "float_data"), 2: ("uint8", "int32_data"),
            3: ("int8", "int32_data"), 4: ("uint16", "int32_data"),
            5: ("int16", "int32_data"), 6: ("int32", "int32_data"),
            7: ("int64", "int64_data"), 9: ("bool", "int32_data"),
            10: ("float16", "int32_data"), 11: ("float64", "double_data"),
            12: ("uint32", "uint64_data"), 13: ("uint64", "uint64_data"),
            16: ("bfloat16", "int32_data")}
_TYPED_FIELDS = ("float_data", "int32_data", "string_data", "int64_data", "double_data",
                 "uint64_data")
_EXTERNAL = 1               # TensorProto.EXTERNAL
_EXTERNAL_KEYS = ("location", "offset", "length", "checksum")


def _type_name(code: int) -> str:
    from onnx import TensorProto
    try:
        return TensorProto.DataType.Name(code)
    except ValueError:
        return f"type code {code}"


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        from .. import dtypes as D
        return np.dtype(D.bfloat16.np)
    return np.dtype(name)


class Source:
    """Where a model's external data lives (its directory), and how much of each data file
    its tensors have read: together no more than the file holds, so overlapping or
    repeated regions cannot multiply a small file into a large load."""

    def __init__(self, base_dir=None):
        self.base_dir = None if base_dir is None else os.fspath(base_dir)
        self._read: dict = {}

    def external(self, tensor, what: str, nbytes: int) -> bytes:
        keys: dict = {}
        for entry in tensor.external_data:
            text(entry.key, f"an external-data key of {what}")
            text(entry.value, f"an external-data value of {what}")
            if entry.key in keys:
                raise OnnxImportError(f"onnx.load: {what} names external-data key "
                                      f"{quote(entry.key)} twice; {_FIX_EXPORT}")
            keys[entry.key] = entry.value
        unknown = [k for k in keys if k not in _EXTERNAL_KEYS]
        if unknown:
            raise OnnxImportError(
                f"onnx.load: {what} has external-data keys {_names(unknown)}; ember reads "
                f"{', '.join(_EXTERNAL_KEYS)}: remove the others or {_FIX_EXPORT}")
        location = keys.get("location", "")
        if not location:
            raise OnnxImportError(f"onnx.load: {what} keeps its data in an external file but "
                                  f"names no 'location'; {_FIX_EXPORT}")
        if self.base_dir is None:
            raise OnnxImportError(
                f"onnx.load: {what} keeps its data in the external file {quote(location)}, "
                "and the model came without a directory (bytes, a ModelProto or an unnamed "
                "file object): load it from its path, or pass base_dir= the folder that "
                "holds its data files")
        path = safe_location(self.base_dir, location, what)
        offset = _int_key(keys, "offset", 0, what)
        length = _int_key(keys, "length", None, what)
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise OnnxImportError(f"onnx.load: {what}'s external data {quote(location)} "
                                      "is not a regular file; point it at the data file")
            size = info.st_size
            if offset > size:
                raise OnnxImportError(
                    f"onnx.load: {what} reads external data at offset {offset} of "
                    f"{quote(location)}, which holds {size} bytes; the data file is "
                    f"truncated or belongs to another model: {_FIX_EXPORT}")
            if length is None:
                length = size - offset
            if length != nbytes:
                raise OnnxImportError(
                    f"onnx.load: {what} needs {nbytes} bytes for its shape and dtype; its "
                    f"external data in {quote(location)} is {length} bytes (offset "
                    f"{offset}); {_FIX_EXPORT}")
            if offset + length > size:
                raise OnnxImportError(
                    f"onnx.load: {what} reads bytes {offset} to {offset + length} of "
                    f"{quote(location)}, which holds only {size} bytes; the data file is "
                    f"truncated or belongs to another model: {_FIX_EXPORT}")
            used = self._read.get(path, 0) + length
            if used > size:
                raise OnnxImportError(
                    f"onnx.load: the model's tensors read {used} bytes from "
                    f"{quote(location)}, which holds {size} ({what} is the one past the end): "
                    "tensors share or overlap regions of the file; each tensor needs bytes "
                    f"of its own: {_FIX_EXPORT}")
            self._read[path] = used
            fh.seek(offset)
            data = fh.read(length)
        if len(data) != length:
            raise OnnxImportError(f"onnx.load: {what}'s external data {quote(location)} "
                                  "changed while it was read; load it again")
        checksum = keys.get("checksum")
        if checksum is not None and hashlib.sha1(data).hexdigest() != checksum.lower():
            raise OnnxImportError(
                f"onnx.load: {what}'s external data in {quote(location)} does not match the "
                f"SHA-1 checksum the model records ({quote(checksum)}); the data file is "
                f"damaged or from another model: {_FIX_EXPORT}")
        return data


def _int_key(keys: dict, key: str, default, what: str):
    if key not in keys:
        return default
    text = keys[key]
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise OnnxImportError(f"onnx.load: {what}'s external-data {key} is {quote(text)}; "
                              f"expected a non-negative whole number of bytes; {_FIX_EXPORT}")
    return int(text)


def safe_location(base_dir: str, location: str, what: str) -> str:
    """The real path of external-data `location`, checked by ember whatever the installed
    onnx checks: relative, no '..' that climbs out of base_dir, inside base_dir once
    symlinks are resolved, an existing regular file."""
    where = f"onnx.load: {what} keeps its data in {quote(location)}"
    fix = ("external data must be a file in the model's folder or below it, named by a "
           "relative path: move the data file there")
    if "\x00" in location:
        raise OnnxImportError(f"{where}, which has a NUL character; {fix}")
    if location.startswith(("/", "\\")) or os.path.isabs(location) or \
            (len(location) > 1 and location[1] == ":"):
        raise OnnxImportError(f"{where}, an absolute path; {fix}")
    depth = 0
    for part in location.replace("\\", "/").split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                raise OnnxImportError(f"{where}, which climbs out of the model's folder "
                                      f"with '..'; {fix}")
        elif part not in ("", "."):
            depth += 1
    base = os.path.realpath(base_dir)
    path = os.path.realpath(os.path.join(base, location))
    if path == base or os.path.commonpath([base, path]) != base:
        raise OnnxImportError(f"{where}, which leads outside the model's folder {base!r} "
                              f"through a symbolic link; {fix}")
    if not os.path.exists(path):
        raise OnnxImportError(f"{where}, which does not exist in {base!r}; copy the data file "
                              "beside the model (onnx.save writes it there)")
    if not os.path.isfile(path):
        raise OnnxImportError(f"{where}, which is not a regular file; {fix}")
    return path


def tensor_array(tensor, what: str, source: Source) -> np.ndarray:
    """A TensorProto as a NumPy array, after checking that its data fits its dims and dtype
    (before any array is allocated)."""
    if tensor.HasField("segment"):
        raise OnnxImportError(f"onnx.load: {what} is a segment of a larger tensor; ember "
                              f"reads whole tensors: {_FIX_EXPORT}")
    code = tensor.data_type
    if code not in _STORAGE:
        raise OnnxImportError(
            f"onnx.load: {what} has element type {_type_name(code)}; ember reads "
            f"{', '.join(_type_name(c) for c in _STORAGE)}: cast it before export")
    dtype_name, field = _STORAGE[code]
    dims = list(tensor.dims)
    if len(dims) > MAX_DIMS:
        raise OnnxImportError(f"onnx.load: {what} has {len(dims)} dimensions; ember reads at "
                              f"most {MAX_DIMS}: {_FIX_EXPORT}")
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"onnx.load: {what} has dims {_dims(dims)}; every dim must be 0 "
                              f"or more: {_FIX_EXPORT}")
    count = 1
    for d in dims:
        count *= d
        if count > 2 ** 63:            # more than any file holds: stop the product growing
            break
    dtype = _np_dtype(dtype_name)
    nbytes = count * dtype.itemsize
    typed = [f for f in _TYPED_FIELDS if len(getattr(tensor, f))]
    external = tensor.data_location == _EXTERNAL
    has_raw = tensor.HasField("raw_data")
    sources = typed + ["raw_data"] * has_raw + ["external data"] * external
    if len(sources) > 1:
        raise OnnxImportError(f"onnx.load: {what} holds its data in {' and '.join(sources)}; "
                              f"a tensor holds it in one place: {_FIX_EXPORT}")
    if typed and typed[0] != field:
        raise OnnxImportError(f"onnx.load: {what} is {_type_name(code)} but holds its data in "
                              f"{typed[0]}; that type keeps it in {field} or raw_data: "
                              f"{_FIX_EXPORT}")
    shape_text = f"dims {_dims(dims)} of {_type_name(code)}"
    if external:
        data = source.external(tensor, what, nbytes)
    elif has_raw:
        data = tensor.raw_data
        if len(data) != nbytes:
            raise OnnxImportError(
                f"onnx.load: {what} has {shape_text}, which need {nbytes} bytes; its raw_data "
                f"holds {len(data)}: {_FIX_EXPORT}")
    else:
        values = getattr(tensor, field)
        if len(values) != count:
            raise OnnxImportError(
                f"onnx.load: {what} has {shape_text}, which need {count} values; its {field} "
                f"holds {len(values)}: {_FIX_EXPORT}")
        if dtype_name in ("float16", "bfloat16"):      # 16-bit patterns in int32_data
            array = np.array(values, np.int64).astype(np.uint16).view(dtype)
        else:
            array = np.array(values, np.float64 if field in ("float_data", "double_data")
                             else np.int64 if field != "uint64_data" else np.uint64)
            array = array.astype(dtype)
        return array.reshape(dims)
    return np.frombuffer(data, dtype.newbyteorder("<")).astype(dtype, copy=False) \
        .reshape(dims)


# --- attributes ----------------------------------------------------------------------------

# the letters a signature uses for an attribute's type -> AttributeProto.AttributeType
_ATTRIBUTE_TYPES = {"f": 1, "i": 2, "s": 3, "t": 4, "F": 6, "I": 7}
_ATTRIBUTE_WORDS = {1: "a float", 2: "an int", 3: "a string", 4: "a tensor", 5: "a graph",
                    6: "a list of floats", 7: "a list of ints", 8: "a list of strings",
                    9: "a list of tensors", 10: "a list of graphs", 11: "a sparse tensor",
                    12: "a list of sparse tensors", 13: "a type", 14: "a list of types"}


def attribute_value(a, letter: str, what: str, source: Source):
    """The value of attribute a, which the importer reads as type `letter`."""
    where = f"onnx.load: attribute {quote(a.name)} of {what}"
    if a.ref_attr_name:
        text(a.ref_attr_name, f"the function attribute of {quote(a.name)} of {what}")
        raise OnnxImportError(f"{where} refers to a function attribute "
                              f"({quote(a.ref_attr_name)}); ember imports graphs, not "
                              "function bodies: inline the model's functions first "
                              "(onnx.inliner.inline_local_functions)")
    want = _ATTRIBUTE_TYPES[letter]
    if a.type != want:
        raise OnnxImportError(
            f"{where} is {_ATTRIBUTE_WORDS.get(a.type, f'of attribute type {a.type}')}; "
            f"expected {_ATTRIBUTE_WORDS[want]}: {_FIX_EXPORT}")
    if letter == "f":
        return float(a.f)
    if letter == "i":
        return int(a.i)
    if letter == "s":
        try:
            return a.s.decode()
        except UnicodeDecodeError:
            raise OnnxImportError(f"{where} is not UTF-8 text: {_FIX_EXPORT}") from None
    if letter == "F":
        return [float(v) for v in a.floats]
    if letter == "I":
        return [int(v) for v in a.ints]
    return tensor_array(a.t, f"attribute {quote(a.name)} of {what}", source)


# --- the graph -----------------------------------------------------------------------------

def node_label(index: int, node) -> str:
    name = f"node {quote(node.name)}" if node.name else f"node #{index}"
    op = node.op_type
    if not isinstance(op, str):
        return f"{name} ({quote(op)})"
    return f"{name} ({op if op.isidentifier() and len(op) <= NAME_BUDGET else quote(op)})"


def _signature(spec: tuple) -> tuple:
    low, high, outputs, text = spec
    attrs = {}
    for word in text.split():
        name, letter = word.split(":")
        required = letter.endswith("!")
        attrs[name] = (letter.rstrip("!"), required)
    return low, high, outputs, attrs


class Plan:
    """What OnnxModule runs: the checked graph in an order where each node's inputs exist."""

    def __init__(self, opset, inputs, outputs, initializers, nodes):
        self.opset, self.inputs, self.outputs = opset, inputs, outputs
        self.initializers, self.nodes = initializers, nodes


def plan(proto, source: Source, signatures: dict) -> Plan:
    """Check the whole model (opset, initializers, inputs, every node's op, inputs, outputs
    and attributes, the graph's outputs) and order its nodes; an OnnxImportError names
    the first thing wrong."""
    if not proto.HasField("graph"):
        raise OnnxImportError("onnx.load: the model has no graph; expected an onnx.ModelProto "
                              f"with a graph: the file is empty or not ONNX; {_FIX_EXPORT}")
    opset = _opset(proto)
    graph = proto.graph
    if len(graph.sparse_initializer):
        raise OnnxImportError(
            f"onnx.load: the graph has sparse initializers "
            f"({_names(t.values.name for t in graph.sparse_initializer)}); ember imports "
            "dense ones: store them dense (onnx.numpy_helper.from_array)")
    initializers: dict = {}
    for k, t in enumerate(graph.initializer):
        what = f"initializer {quote(t.name)}" if t.name else f"initializer #{k}"
        text(t.name, f"the name of initializer #{k}")
        if not t.name:
            raise OnnxImportError(f"onnx.load: {what} has no name; {_FIX_EXPORT}")
        if t.name in initializers:
            raise OnnxImportError(f"onnx.load: two initializers are named {quote(t.name)}; "
                                  f"names are unique in a graph: {_FIX_EXPORT}")
        initializers[t.name] = tensor_array(t, what, source)
    inputs = []
    seen = set()
    for k, value in enumerate(graph.input):
        text(value.name, f"the name of graph input #{k}")
        if not value.name:
            raise OnnxImportError(f"onnx.load: graph input #{k} has no name; {_FIX_EXPORT}")
        if value.name in seen:
            raise OnnxImportError(f"onnx.load: two graph inputs are named "
                                  f"{quote(value.name)}; names are unique: {_FIX_EXPORT}")
        seen.add(value.name)
        if value.name not in initializers:
            inputs.append(value.name)
    available = set(inputs) | set(initializers)
    made: dict = {}
    nodes = []
    for k, node in enumerate(graph.node):
        label = node_label(k, node)
        nodes.append(_node(node, label, signatures, source, available, made))
    nodes = _order(nodes, available, inputs)
    outputs = []
    if not len(graph.output):
        raise OnnxImportError(f"onnx.load: the graph has no outputs; {_FIX_EXPORT}")
    for k, value in enumerate(graph.output):
        text(value.name, f"the name of graph output #{k}")
        if value.name not in available and value.name not in made:
            raise OnnxImportError(
                f"onnx.load: graph output {quote(value.name) if value.name else f'#{k}'} is "
                "never produced: no node, graph input or initializer makes it (expected one "
                f"of the values the nodes make, e.g. {_names(list(made)[-4:])}); "
                f"{_FIX_EXPORT}")
        outputs.append(value.name)
    return Plan(opset, inputs, outputs, initializers, nodes)


def _opset(proto) -> int:
    versions = {o.version for o in proto.opset_import
                if text(o.domain, "an opset domain") in ("", "ai.onnx")}
    if not versions:
        raise OnnxImportError("onnx.load: the model names no opset for the default ONNX "
                              f"domain (opset_import); {_FIX_EXPORT}")
    if len(versions) > 1:
        raise OnnxImportError(f"onnx.load: the model names opsets {sorted(versions)} for the "
                              f"default domain; a model names one: {_FIX_EXPORT}")
    opset = versions.pop()
    if opset < 11:
        raise OnnxImportError(f"onnx.load: the model uses opset {opset}; ember imports opset "
                              "11 and later: convert it (onnx.version_converter)")
    return opset


def _node(node, label, signatures, source, available, made) -> tuple:
    for field in ("name", "op_type", "domain"):
        text(getattr(node, field), f"the {field} of {label}")
    if node.domain not in ("", "ai.onnx"):
        raise OnnxImportError(f"onnx.load: {label} is in domain {quote(node.domain)}; ember "
                              "imports the default ONNX domain: export the model with "
                              "standard ONNX ops only")
    if node.op_type not in signatures:
        raise OnnxImportError(f"onnx.load: ONNX op {quote(node.op_type)} ({label}) has no "
                              f"ember import; ember imports {', '.join(sorted(signatures))}: "
                              "export the model with these ops, or run it with onnxruntime")
    low, high, most, spec = _signature(signatures[node.op_type])
    ins = _texts(node.input, f"an input of {label}")
    outs = _texts(node.output, f"an output of {label}")
    if len(ins) < low or (high is not None and len(ins) > high):
        want = f"{low}" if low == high else f"{low} to {high}" if high is not None else \
            f"{low} or more"
        raise OnnxImportError(f"onnx.load: {label} has {len(ins)} inputs; {node.op_type} "
                              f"takes {want}: {_FIX_EXPORT}")
    missing = [k for k in range(low) if not ins[k]]
    if missing:
        raise OnnxImportError(f"onnx.load: {label} leaves its required input #{missing[0]} "
                              f"empty; {_FIX_EXPORT}")
    if not outs:
        raise OnnxImportError(f"onnx.load: {label} has no outputs; {_FIX_EXPORT}")
    if most is not None and any(outs[most:]):
        raise OnnxImportError(
            f"onnx.load: {label} asks for {len(outs)} outputs; ember's {node.op_type} makes "
            f"{most} (its optional outputs {_names(outs[most:])} are for training or "
            "indices): drop them from the node")
    for out in outs:
        if not out:
            continue
        if out in available or out in made:
            first = "a graph input or initializer" if out in available else made[out]
            raise OnnxImportError(
                f"onnx.load: {label} makes {quote(out)}, which {first} already makes; each "
                f"value is made once (static single assignment): {_FIX_EXPORT}")
        made[out] = label
    attrs = {}
    for a in node.attribute:
        text(a.name, f"an attribute name of {label}")
        if a.name in attrs:
            raise OnnxImportError(f"onnx.load: {label} has two attributes named "
                                  f"{quote(a.name)}; {_FIX_EXPORT}")
        if a.name not in spec:
            known = ", ".join(sorted(spec)) or "none"
            raise OnnxImportError(
                f"onnx.load: {label} has attribute {quote(a.name)}, which ember's "
                f"{node.op_type} does not read (it reads: {known}); ember would run the op "
                "without it, so it refuses: drop the attribute or export the model without "
                "it")
        attrs[a.name] = attribute_value(a, spec[a.name][0], label, source)
    absent = [name for name, (_, required) in spec.items() if required and name not in attrs]
    if absent:
        raise OnnxImportError(f"onnx.load: {label} lacks its required attribute "
                              f"{quote(absent[0])}; {_FIX_EXPORT}")
    return node.op_type, ins, outs, attrs, label


def _order(nodes: list, available: set, inputs: list) -> list:
    """nodes in an order where every input is made before it is read (the file's order
    when it already is one); an OnnxImportError for a dangling input or a cycle."""
    ready = set(available) | {""}
    for _, ins, outs, _, _ in nodes:
        if not all(i in ready for i in ins):
            break
        ready.update(outs)
    else:
        return nodes
    producer = {out: k for k, node in enumerate(nodes) for out in node[2] if out}
    waiting = [0] * len(nodes)
    readers: dict = {}
    for k, (_, ins, _, _, label) in enumerate(nodes):
        for name in set(ins):
            if name in available or name == "":
                continue
            if name not in producer:
                raise OnnxImportError(
                    f"onnx.load: {label} reads {quote(name)}, which no node, graph input or "
                    f"initializer makes (the graph inputs are {_names(inputs)}); the model "
                    f"lost a node or initializer: {_FIX_EXPORT}")
            waiting[k] += 1
            readers.setdefault(name, []).append(k)
    heap = [k for k in range(len(nodes)) if not waiting[k]]
    heapq.heapify(heap)
    order = []
    while heap:
        k = heapq.heappop(heap)
        order.append(nodes[k])
        for out in nodes[k][2]:
            for r in readers.get(out, ()):
                waiting[r] -= 1
                if not waiting[r]:
                    heapq.heappush(heap, r)
    if len(order) < len(nodes):
        # walk from a stuck node to a stuck node that makes one of its inputs until a node
        # comes round again: that node is on a cycle
        k, seen = next(k for k in range(len(nodes)) if waiting[k]), {}
        while k not in seen:
            seen[k] = next(i for i in nodes[k][1] if i in producer and waiting[producer[i]])
            k = producer[seen[k]]
        name = seen[k]
        raise OnnxImportError(
            f"onnx.load: the graph has a cycle: {nodes[k][4]} reads {quote(name)}, made by "
            f"{nodes[producer[name]][4]}, which depends on {nodes[k][4]}'s own outputs "
            f"(nodes that cannot run: {len(nodes) - len(order)}); an ONNX graph is acyclic: "
            f"{_FIX_EXPORT}")
    return order
