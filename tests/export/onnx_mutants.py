"""A seeded corpus of malformed ONNX models for ember.onnx.load: three valid models (one
ember exports, two written with onnx.helper, one of them also with external data), each
mutated systematically: its bytes truncated and flipped, its initializers, nodes,
attributes, outputs and external-data references broken one way at a time.

Each Case is a model (bytes, or a file in a folder beside its data files) and what ember
must do with it: refuse it with an OnnxImportError whose message holds `expect`, load it
and agree with onnxruntime (`expect="ok"`), or either (`expect=None`: a flipped byte may
be harmless).  test_onnx_hostile.py runs the corpus in a child process under a time and
memory limit."""
from __future__ import annotations

import copy
import os
import random
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


@dataclass
class Case:
    name: str
    data: bytes | None = None          # loaded as bytes ...
    path: str | None = None            # ... or from this file (external data beside it)
    expect: str | None = None          # substring of the OnnxImportError, "ok", or None
    inputs: tuple = ()                 # the arrays the loaded model is called with
    reference: bytes | str | None = None   # what onnxruntime runs to check a load
    #                                            (default: the case's own bytes or path)
    base_dir: str | None = None        # ember.onnx.load(data, base_dir=...)

    def size(self) -> int:
        """Bytes of the model and every file in its folder."""
        if self.path is None:
            return len(self.data)
        folder = os.path.dirname(self.path)
        return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                   if os.path.isfile(os.path.join(folder, f)))


# --- the valid models ----------------------------------------------------------------------

def _ember_model() -> tuple:
    """What ember.onnx.export writes for a small CNN (Conv, Relu, MaxPool, Flatten, Gemm,
    Softmax), with a dynamic batch."""
    import io

    import ember
    import ember.nn as nn
    ember.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(2 * 2 * 2, 3), nn.Softmax(1)).eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype("f4")
    buf = io.BytesIO()
    ember.onnx.export(model, (ember.tensor(x),), buf, dynamic_axes={"input": {0: "batch"}})
    return buf.getvalue(), (x,)


def _conv_model() -> onnx.ModelProto:
    """Conv, BatchNormalization, AveragePool, Flatten, Gemm, LayerNormalization, Gelu as
    torch's exporter writes them; every node named."""
    rng = np.random.default_rng(7)

    def init(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    inits = [init("w", 3, 2, 3, 3), init("b", 3), init("scale", 3), init("bias", 3),
             init("mean", 3), numpy_helper.from_array(rng.uniform(0.5, 2, 3).astype("f4"),
                                                      "var"),
             init("fc", 4, 12), init("fcb", 4), init("ln_s", 4), init("ln_b", 4)]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1],
                              strides=[2, 2]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"],
                              ["n"], "bn", epsilon=1e-3),
             helper.make_node("AveragePool", ["n"], ["p"], "pool", kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"], "flatten", axis=1),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["g"], "gemm", transB=1),
             helper.make_node("LayerNormalization", ["g", "ln_s", "ln_b"], ["l"], "ln",
                              axis=-1),
             helper.make_node("Gelu", ["l"], ["y"], "gelu")]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, ["n", 2, 8, 8])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, ["n", 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)],
                             ir_version=9)


def _shape_model() -> onnx.ModelProto:
    """Size arithmetic on the host (Shape, Gather, Unsqueeze, Concat, Reshape), small int64
    initializers, a Constant, Split, ReduceMean, Cast, Transpose, Slice, Pad, Where, Max."""
    def ints(name, values):
        return numpy_helper.from_array(np.array(values, np.int64), name)
    inits = [ints("zero_i", 0), ints("axis0", [0]), ints("minus1", [-1]),
             ints("sizes", [5, 7]), ints("axis1", [1]), ints("starts", [1]),
             ints("ends", [6]), ints("pads", [0, 1, 0, 1]),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(0.25, np.float32), "quarter")]
    scale = numpy_helper.from_array(np.linspace(-1, 1, 12).astype(np.float32), "scale_t")
    nodes = [helper.make_node("Shape", ["x"], ["s"], "shape"),
             helper.make_node("Gather", ["s", "zero_i"], ["b"], "gather"),
             helper.make_node("Unsqueeze", ["b", "axis0"], ["b1"], "unsqueeze"),
             helper.make_node("Concat", ["b1", "minus1"], ["shp"], "concat", axis=0),
             helper.make_node("Reshape", ["x", "shp"], ["r"], "reshape"),
             helper.make_node("Constant", [], ["k"], "constant", value=scale),
             helper.make_node("Mul", ["r", "k"], ["m"], "mul"),
             helper.make_node("Split", ["m", "sizes"], ["p", "q"], "split", axis=1),
             helper.make_node("ReduceMean", ["p", "axis1"], ["pm"], "mean", keepdims=1),
             helper.make_node("Sub", ["q", "pm"], ["d"], "sub"),
             helper.make_node("Cast", ["d"], ["dd"], "to_double", to=TensorProto.DOUBLE),
             helper.make_node("Cast", ["dd"], ["d2"], "to_float", to=TensorProto.FLOAT),
             helper.make_node("Transpose", ["d2"], ["t"], "transpose", perm=[1, 0]),
             helper.make_node("Slice", ["t", "starts", "ends", "axis0"], ["sl"], "slice"),
             helper.make_node("Pad", ["sl", "pads"], ["pd"], "pad"),
             helper.make_node("Greater", ["pd", "zero"], ["pos"], "greater"),
             helper.make_node("Neg", ["pd"], ["neg"], "neg"),
             helper.make_node("Where", ["pos", "pd", "neg"], ["ab"], "where"),
             helper.make_node("Max", ["ab", "pd", "quarter"], ["y"], "max")]
    graph = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3, 4])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [5, 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=8)


def _conv_input():
    return (np.random.default_rng(3).standard_normal((3, 2, 8, 8)).astype(np.float32),)


def _shape_input():
    return (np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32),)


# --- byte mutations ------------------------------------------------------------------------

def _byte_cases(name: str, data: bytes, inputs: tuple, seed: int) -> list:
    n = len(data)
    cuts = sorted({1, 2, 7, n // 8, n // 4, n // 3, n // 2, 2 * n // 3, 7 * n // 8, n - 3,
                   n - 1} - {0, n})
    cases = [Case(f"{name}/truncated@{k}", data[:k], inputs=inputs) for k in cuts]
    rnd = random.Random(seed)
    for _ in range(16):
        at = rnd.randrange(n)
        flipped = bytearray(data)
        flipped[at] ^= rnd.randrange(1, 256)
        cases.append(Case(f"{name}/flip@{at}", bytes(flipped), inputs=inputs))
    return cases


# --- structural mutations ------------------------------------------------------------------

def _init(model, name):
    return next(t for t in model.graph.initializer if t.name == name)


def _node(model, name):
    return next(n for n in model.graph.node if n.name == name)


def _set_attr(node, attribute):
    kept = [a for a in node.attribute if a.name != attribute.name]
    del node.attribute[:]
    node.attribute.extend(kept + [attribute])


def _structural(conv: onnx.ModelProto, shape: onnx.ModelProto) -> list:
    """(name, mutate(model) on a copy of the conv model or the shape model, expected
    substring)."""
    def on(base, fn):
        def run():
            model = copy.deepcopy(base)
            fn(model)
            return model
        return run

    def raw(name, data):
        return lambda m: setattr(_init(m, name), "raw_data", data)

    def value(name, array):                  # a well-formed initializer with other values
        def fn(m):
            _init(m, name).CopyFrom(numpy_helper.from_array(np.asarray(array), name))
        return fn

    def dims(name, values):
        def fn(m):
            t = _init(m, name)
            del t.dims[:]
            t.dims.extend(values)
        return fn

    def no_data(m):
        t = _init(m, "w")
        t.ClearField("raw_data")
        del t.dims[:]
        t.dims.extend([2 ** 40])

    def dtype(code):
        return lambda m: setattr(_init(m, "w"), "data_type", code)

    def both_fields(m):
        _init(m, "b").float_data.extend([1.0, 2.0, 3.0])

    def typed(field, values, name="b"):
        def fn(m):
            t = _init(m, name)
            t.ClearField("raw_data")
            getattr(t, field).extend(values)
        return fn

    def drop_init(name):
        def fn(m):
            kept = [t for t in m.graph.initializer if t.name != name]
            del m.graph.initializer[:]
            m.graph.initializer.extend(kept)
        return fn

    def node_input(node, k, value):
        def fn(m):
            _node(m, node).input[k] = value
        return fn

    def node_output(node, k, value):
        def fn(m):
            _node(m, node).output[k] = value
        return fn

    def graph_output(value):
        def fn(m):
            m.graph.output[0].name = value
        return fn

    def no_outputs(m):
        del m.graph.output[:]

    def dup_init(m):
        m.graph.initializer.append(copy.deepcopy(_init(m, "b")))

    def dup_input(m):
        m.graph.input.append(copy.deepcopy(m.graph.input[0]))

    def reverse_nodes(m):
        nodes = list(m.graph.node)[::-1]
        del m.graph.node[:]
        m.graph.node.extend(nodes)

    def op(node, op_type, domain=""):
        def fn(m):
            _node(m, node).op_type = op_type
            _node(m, node).domain = domain
        return fn

    def attr(node, **kwargs):
        def fn(m):
            for key, value in kwargs.items():
                _set_attr(_node(m, node), helper.make_attribute(key, value))
        return fn

    def raw_attr(node, name, kind, **fields):
        def fn(m):
            a = onnx.AttributeProto(name=name, type=kind, **fields)
            _set_attr(_node(m, node), a)
        return fn

    def inputs(node, values):
        def fn(m):
            del _node(m, node).input[:]
            _node(m, node).input.extend(values)
        return fn

    def outputs(node, values):
        def fn(m):
            del _node(m, node).output[:]
            _node(m, node).output.extend(values)
        return fn

    def opset(*versions):
        def fn(m):
            del m.opset_import[:]
            m.opset_import.extend(helper.make_opsetid("", v) for v in versions)
        return fn

    def sparse(m):
        values = numpy_helper.from_array(np.array([1.0], np.float32), "sp")
        index = numpy_helper.from_array(np.array([0], np.int64), "sp_i")
        m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, index, [3]))

    def segment(m):
        t = _init(m, "b")
        t.segment.begin, t.segment.end = 0, 3

    def constant_attrs(m):
        _set_attr(_node(m, "constant"), helper.make_attribute("value_float", 1.0))

    w = "initializer 'w'"
    return [
        ("raw_data short", on(conv, raw("w", _init(conv, "w").raw_data[:-4])),
         "initializer 'w' has dims [3, 2, 3, 3] of FLOAT, which need 216 bytes; its "
         "raw_data holds 212"),
        ("raw_data long", on(conv, raw("w", _init(conv, "w").raw_data + b"\0")), w),
        ("raw_data empty", on(conv, raw("w", b"")), "raw_data holds 0"),
        ("dims negative", on(conv, dims("w", [-3, 2, 3, 3])), "every dim must be 0 or more"),
        ("dims 2**40 with data", on(conv, dims("w", [2 ** 40])), w),
        ("dims 2**40 without data", on(conv, no_data), "float_data holds 0"),
        ("dims overflow", on(conv, dims("w", [2 ** 62] * 3)), w),
        ("dims 40 of them", on(conv, dims("w", [1] * 40)), "40 dimensions"),
        ("dims disagree", on(conv, dims("w", [3, 2, 3, 2])), w),
        ("dtype undefined", on(conv, dtype(0)), "element type UNDEFINED"),
        ("dtype unknown", on(conv, dtype(99)), "element type type code 99"),
        ("dtype string", on(conv, dtype(TensorProto.STRING)), "element type STRING"),
        ("dtype complex", on(conv, dtype(TensorProto.COMPLEX64)), "COMPLEX64"),
        ("dtype float8", on(conv, dtype(TensorProto.FLOAT8E4M3FN)), "FLOAT8E4M3FN"),
        ("dtype int64 on float bytes", on(conv, dtype(TensorProto.INT64)), w),
        ("raw_data and float_data", on(conv, both_fields), "raw_data"),
        ("float_data short", on(conv, typed("float_data", [1.0, 2.0])),
         "float_data holds 2"),
        ("int64_data on a float", on(conv, typed("int64_data", [1, 2, 3])),
         "holds its data in int64_data"),
        ("float_data right", on(conv, typed("float_data", [0.5, -1.0, 2.0])), "ok"),
        ("segment", on(conv, segment), "segment"),
        ("sparse initializer", on(conv, sparse), "sparse initializers"),
        ("initializer dropped", on(conv, drop_init("fcb")),
         "node 'gemm' (Gemm) reads 'fcb', which no node, graph input or initializer makes"),
        ("dangling input", on(conv, node_input("ln", 0, "nothing")), "reads 'nothing'"),
        ("output never produced", on(conv, graph_output("z")),
         "graph output 'z' is never produced"),
        ("no outputs", on(conv, no_outputs), "no outputs"),
        ("duplicate initializer", on(conv, dup_init), "two initializers are named 'b'"),
        ("duplicate graph input", on(conv, dup_input), "two graph inputs are named 'x'"),
        ("duplicate node output", on(conv, node_output("bn", 0, "c")),
         "node 'bn' (BatchNormalization) makes 'c', which node 'conv' (Conv) already "
         "makes"),
        ("node output is a graph input", on(conv, node_output("gelu", 0, "x")),
         "makes 'x', which a graph input or initializer already makes"),
        ("node output is an initializer", on(conv, node_output("conv", 0, "fc")),
         "makes 'fc'"),
        ("cycle", on(conv, node_input("conv", 0, "l")), "the graph has a cycle"),
        ("self loop", on(conv, node_input("gelu", 0, "y")), "the graph has a cycle"),
        ("nodes out of order", on(conv, reverse_nodes), "ok"),
        ("unsupported op", on(conv, op("gelu", "Einsum")),
         "ONNX op 'Einsum' (node 'gelu' (Einsum)) has no ember import"),
        ("other domain", on(conv, op("gelu", "Gelu", "com.microsoft")),
         "in domain 'com.microsoft'"),
        ("unknown attribute", on(conv, attr("conv", foo=1)),
         "node 'conv' (Conv) has attribute 'foo', which ember's Conv does not read"),
        ("attribute of the wrong type", on(conv, attr("gemm", transB=1.0)),
         "attribute 'transB' of node 'gemm' (Gemm) is a float; expected an int"),
        ("attribute not utf-8", on(conv, raw_attr("gelu", "approximate", 3, s=b"\xff\xfe")),
         "not UTF-8"),
        ("attribute of a function", on(conv, raw_attr("gelu", "approximate", 3,
                                                      ref_attr_name="a")),
         "function attribute"),
        ("attribute twice", on(conv, lambda m: _node(m, "flatten").attribute.append(
            helper.make_attribute("axis", 1))), "two attributes named 'axis'"),
        ("required attribute missing", on(conv, lambda m: _node(m, "pool").ClearField(
            "attribute")), "lacks its required attribute 'kernel_shape'"),
        ("auto_pad SAME", on(conv, attr("conv", auto_pad="SAME_UPPER")),
         "node 'conv' (Conv): Conv with uneven or automatic padding"),
        ("kernel_shape disagrees", on(conv, attr("conv", kernel_shape=[5, 5])),
         "kernel_shape [5, 5] disagrees"),
        ("training batch norm", on(conv, attr("bn", training_mode=1)), "training_mode=1"),
        ("training outputs", on(conv, outputs("bn", ["n", "rm", "rv"])),
         "asks for 3 outputs"),
        ("unknown gelu", on(conv, attr("gelu", approximate="cubic")), "node 'gelu' (Gelu)"),
        ("axis out of range", on(conv, attr("flatten", axis=9)),
         "Flatten's axis 9 is out of range for a 4-d input"),
        ("shape: Softmax axis out of range", on(shape, lambda m: (
            _node(m, "neg").CopyFrom(helper.make_node("Softmax", ["pd"], ["neg"], "neg",
                                                      axis=-3)))),
         "Softmax's axis -3 is out of range"),
        ("shape: ReduceMean axis out of range", on(shape, value("axis1", [5])),
         "node 'mean' (ReduceMean): ReduceMean's axis 5 is out of range"),
        ("shape: ReduceMean axes repeat", on(shape, value("axis1", [1, -1])), "repeat"),
        ("shape: Unsqueeze axis out of range", on(shape, value("axis0", [4])),
         "Unsqueeze's axis 4 is out of range"),
        ("shape: Concat axis out of range", on(shape, attr("concat", axis=1)),
         "Concat's axis 1 is out of range for a 1-d input"),
        ("shape: Transpose perm wrong", on(shape, attr("transpose", perm=[1, 1])),
         "Transpose's perm [1, 1]"),
        ("shape: Gather axis out of range", on(shape, attr("gather", axis=-2)),
         "Gather's axis -2 is out of range"),
        ("shape: Split axis out of range", on(shape, attr("split", axis=2)),
         "Split's axis 2 is out of range"),
        ("shape: Slice step 0", on(shape, lambda m: (
            m.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64),
                                                               "step0")),
            _node(m, "slice").input.append("step0"))), "step of 0"),
        ("shape: Pad with axes", on(shape, lambda m: (
            m.graph.initializer.append(numpy_helper.from_array(np.array([2, 1], np.int64),
                                                               "pads2")),
            inputs("pad", ["sl", "pads2", "", "axis1"])(m))), "ok"),
        ("shape: Pad with more pads than axes", on(shape, lambda m: (
            inputs("pad", ["sl", "pads", "", "axis1"])(m))), "expected 2 per axis"),
        ("too few inputs", on(conv, inputs("gemm", ["f"])), "has 1 inputs; Gemm takes 2 to 3"),
        ("too many inputs", on(conv, inputs("gelu", ["l", "l"])), "has 2 inputs"),
        ("required input empty", on(conv, inputs("gemm", ["", "fc", "fcb"])),
         "required input #0 empty"),
        ("opset missing", on(conv, opset()), "names no opset"),
        ("opset 9", on(conv, opset(9)), "uses opset 9"),
        ("two opsets", on(conv, opset(17, 18)), "names opsets [17, 18]"),
        ("shape: Reshape to a wrong size", on(shape, value("minus1", np.array([7], np.int64))),
         "node 'reshape' (Reshape) fails on its inputs"),
        ("shape: Split sizes wrong", on(shape, value("sizes", np.array([5, 5], np.int64))),
         "node 'split' (Split)"),
        ("shape: Gather index out of range", on(shape, value("zero_i", np.array(9, np.int64))),
         "node 'gather' (Gather)"),
        ("shape: Cast to string", on(shape, attr("to_double", to=TensorProto.STRING)),
         "node 'to_double' (Cast)"),
        ("shape: Cast to nothing", on(shape, attr("to_double", to=12345)),
         "node 'to_double' (Cast)"),
        ("shape: Constant with two values", on(shape, constant_attrs),
         "node 'constant' (Constant)"),
        ("shape: Split outputs more than sizes", on(shape, outputs("split", ["p", "q", "o"])),
         "node 'split' (Split)"),
        ("shape: Pad with odd pads", on(shape, value("pads", np.array([0, 1, 0], np.int64))),
         "node 'pad' (Pad)"),
        ("shape: Reshape to 2**40", on(shape, value("minus1", np.array([2 ** 40], np.int64))),
         "node 'reshape' (Reshape)"),
        ("shape: Max of one input", on(shape, inputs("max", ["ab"])), "ok"),
    ]


# --- external data -------------------------------------------------------------------------

def _external(folder: str, conv: onnx.ModelProto, x: tuple) -> list:
    """The conv model with its initializers in w.bin beside it, then each reference bent."""
    outside = os.path.join(folder, "outside.bin")
    with open(outside, "wb") as fh:       # bytes a climbing path would reach
        fh.write(b"\0" * 4096)
    cases = []

    def save(name, mutate=None, data_file="w.bin", expect=None, extra=None):
        where = os.path.join(folder, name)
        os.makedirs(where)
        model = copy.deepcopy(conv)
        onnx.save_model(model, os.path.join(where, "m.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data_file, size_threshold=0)
        model = onnx.load(os.path.join(where, "m.onnx"), load_external_data=False)
        if mutate is not None:
            mutate(model, where)
        with open(os.path.join(where, "m.onnx"), "wb") as fh:
            fh.write(model.SerializeToString())
        cases.append(Case(f"external/{name}", path=os.path.join(where, "m.onnx"),
                          expect=expect, inputs=x, **(extra or {})))
        return where

    def entry(model, tensor, key):
        t = _init(model, tensor)
        return next(e for e in t.external_data if e.key == key)

    def set_key(key, value, tensor="w"):
        def fn(model, where):
            found = [e for e in _init(model, tensor).external_data if e.key == key]
            if found:
                found[0].value = value
            else:
                e = _init(model, tensor).external_data.add()
                e.key, e.value = key, value
        return fn

    def symlink(model, where):
        os.symlink(outside, os.path.join(where, "evil.bin"))
        entry(model, "w", "location").value = "evil.bin"

    def truncate(model, where):
        path = os.path.join(where, "w.bin")
        os.truncate(path, os.path.getsize(path) - 8)

    def share(model, where):                 # two tensors of 3 floats read the same bytes
        for key in ("offset", "length"):
            entry(model, "mean", key).value = entry(model, "scale", key).value

    def reuse(model, where):                 # 30 more tensors read w's 216 bytes again
        for k in range(30):
            t = copy.deepcopy(_init(model, "w"))
            t.name = f"copy{k}"
            model.graph.initializer.append(t)

    def checksum(model, where, good=True):
        import hashlib
        e = _init(model, "b").external_data
        offset, length = (int(next(x.value for x in e if x.key == k)) for k in
                          ("offset", "length"))
        with open(os.path.join(where, "w.bin"), "rb") as fh:
            fh.seek(offset)
            digest = hashlib.sha1(fh.read(length)).hexdigest()
        set_key("checksum", digest if good else "0" * 40, "b")(model, where)

    def directory(model, where):
        os.makedirs(os.path.join(where, "sub"))
        entry(model, "w", "location").value = "sub"

    save("valid", expect="ok")
    save("inner dots", lambda m, w: (os.makedirs(os.path.join(w, "sub")), set_key(
        "location", "./sub/../w.bin")(m, w)), expect="ok")
    save("checksum right", checksum, expect="ok")
    save("absolute", set_key("location", outside), expect="an absolute path")
    save("climbs", set_key("location", "../outside.bin"), expect="climbs out")
    save("climbs after a folder", set_key("location", "sub/../../outside.bin"),
         expect="climbs out")
    save("backslashes climb", set_key("location", "..\\..\\outside.bin"),
         expect="climbs out")
    save("windows drive", set_key("location", "C:\\w.bin"), expect="an absolute path")
    save("symlink out", symlink, expect="through a symbolic link")
    save("missing", set_key("location", "nowhere.bin"), expect="does not exist")
    save("a directory", directory, expect="not a regular file")
    save("nul in name", set_key("location", "w.bin\0x"), expect="NUL")
    save("no location", set_key("location", ""), expect="names no 'location'")
    save("file too short", truncate, expect="holds only")
    save("offset past the end", set_key("offset", str(10 ** 9)), expect="offset 1000000000")
    save("offset negative", set_key("offset", "-4"), expect="non-negative whole number")
    save("offset not a number", set_key("offset", "4e3"), expect="non-negative whole number")
    save("length wrong", set_key("length", "8"), expect="needs 216 bytes")
    save("length huge", set_key("length", str(2 ** 62)), expect="needs 216 bytes")
    save("unknown key", set_key("basepath", "/etc"), expect="external-data keys 'basepath'")
    save("regions shared", share, expect="ok")        # within the file: a correct load
    save("regions reused past the file", reuse, expect="share or overlap")
    save("checksum wrong", lambda m, w: checksum(m, w, good=False), expect="SHA-1")
    where = save("as bytes", expect="ok")
    with open(cases[-1].path, "rb") as fh:
        raw = fh.read()
    reference = cases[-1].path
    cases.append(Case("external/from bytes without a folder", raw, expect="pass base_dir=",
                      inputs=x, reference=reference))
    cases.append(Case("external/from bytes with base_dir", raw, expect="ok", inputs=x,
                      reference=reference, base_dir=where))
    return cases


def _nested(depth: int) -> bytes:
    """A model whose If node holds a subgraph holding an If node ... depth times, written
    byte by byte (onnx.helper would recurse in Python)."""
    def field(number, payload):
        size, varint = len(payload), bytearray()
        while True:
            varint.append((size & 0x7F) | (0x80 if size >> 7 else 0))
            size >>= 7
            if not size:
                break
        return bytes([number << 3 | 2]) + bytes(varint) + payload
    graph = b""
    for _ in range(depth):
        attribute = field(1, b"then_branch") + bytes([0xA0, 0x01, 5]) + field(6, graph)
        node = field(1, b"x") + field(2, b"y") + field(4, b"If") + field(5, attribute)
        graph = field(1, node) + field(11, field(1, b"x")) + field(12, field(1, b"y"))
    return bytes([0x08, 8]) + field(7, graph) + field(8, bytes([0x10, 17]))


def cases(folder: str) -> list:
    """Every case; folder holds the external-data cases' files."""
    ember_bytes, ember_x = _ember_model()
    conv, shape = _conv_model(), _shape_model()
    conv_x, shape_x = _conv_input(), _shape_input()
    out = [Case("ember/valid", ember_bytes, expect="ok", inputs=ember_x),
           Case("conv/valid", conv.SerializeToString(), expect="ok", inputs=conv_x),
           Case("shape/valid", shape.SerializeToString(), expect="ok", inputs=shape_x),
           Case("empty bytes", b"", expect="the model has no graph"),
           Case("garbage", bytes(range(256)) * 4, expect="cannot read an ONNX model"),
           Case("0xff bytes", b"\xff" * 40, expect="protobuf cannot parse"),
           Case("text", b"hello, this is not a model\n" * 8, expect=None),
           Case("subgraphs 3 deep", _nested(3), expect="ONNX op 'If' (node #0 (If))"),
           Case("subgraphs 1000 deep", _nested(1000), expect="protobuf cannot parse")]
    out += _byte_cases("ember", ember_bytes, ember_x, 1)
    out += _byte_cases("conv", conv.SerializeToString(), conv_x, 2)
    out += _byte_cases("shape", shape.SerializeToString(), shape_x, 3)
    for name, make, expect in _structural(conv, shape):
        model = make()
        x = shape_x if name.startswith("shape:") else conv_x
        reference = (shape if name.startswith("shape:") else conv).SerializeToString() \
            if name == "nodes out of order" else None
        out.append(Case(name, model.SerializeToString(), expect=expect, inputs=x,
                        reference=reference))
    out += _external(folder, conv, conv_x)
    return out
