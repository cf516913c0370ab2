"""ember.onnx: every model family lowers to a checked ONNX model that onnxruntime runs like
ember eager at the example and other sizes (dynamic axes), on cpu and opencl:0 inputs;
ember.onnx.load runs the file on every ember device with the same outputs."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import onnx
import pytest
from ember.onnx import OnnxExportError
from export_models import DEVICES, eager, families

FAMILIES = {f.name: f for f in families()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    out = {}
    for name, family in FAMILIES.items():
        for device in DEVICES:
            args, _ = family.on(device)
            path = folder / f"{name}-{device.replace(':', '')}.onnx"
            ember.onnx.export(family.model, args, str(path), dynamic_axes=family.axes)
            out[(name, device)] = path
        family.model.to("cpu")
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(FAMILIES))
def test_onnxruntime_agrees_with_eager(exported, name, device):
    family = FAMILIES[name]
    path = exported[(name, device)]
    onnx.checker.check_model(onnx.load(path), full_check=True)
    args, other = family.on(device)
    try:
        for inputs in (args, other):                 # fixed, then other (dynamic) sizes
            report = ember.onnx.verify(family.model, inputs, str(path))
            assert report["runtime"] == "onnxruntime"
    finally:
        family.model.to("cpu")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_onnx_load_round_trips_on_every_device(exported, name):
    family = FAMILIES[name]
    path = exported[(name, "cpu")]
    for device in DEVICES:
        net = ember.onnx.load(str(path)).to(device)
        args, other = family.on(device)
        try:
            for inputs in (args, other):
                got = net(*inputs)
                got = [t.numpy() for t in (got if isinstance(got, tuple) else (got,))]
                for g, want in zip(got, eager(family.model, inputs)):
                    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
        finally:
            family.model.to("cpu")


def test_dynamic_axes_name_the_graph_dims(exported):
    model = onnx.load(exported[("transformer", "cpu")])
    dims = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in model.graph.input]
    assert dims == [["batch", "seq", 6], ["seq", "seq"]]
    assert [o.name for o in model.graph.output] == ["output_0", "output_1"]
    assert model.opset_import[0].version == 17
    assert model.ir_version == onnx.helper.find_min_ir_version_for(list(model.opset_import))


def test_names_and_opsets(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
    x = ember.ones(4, 3)
    path = tmp_path / "m.onnx"
    proto = ember.onnx.export(model, (x,), path, input_names=["features"],
                              output_names=["score"], opset_version=20,
                              dynamic_axes={"features": [0], "score": {0: "n"}})
    assert [i.name for i in proto.graph.input] == ["features"]
    shape = proto.graph.output[0].type.tensor_type.shape
    out_dims = [d.dim_param or d.dim_value for d in shape.dim]
    assert out_dims == ["n", 2]
    assert ember.onnx.verify(model, (ember.ones(9, 3),), path)["outputs"] == 1
    with pytest.raises(OnnxExportError, match="opsets 14 to 21"):
        ember.onnx.export(model, (x,), tmp_path / "old.onnx", opset_version=9)
    with pytest.raises(OnnxExportError, match="neither inputs"):
        ember.onnx.export(model, (x,), tmp_path / "bad.onnx", dynamic_axes={"nope": [0]})


def _folding(cols):
    return nn.functional.fold(cols, (4, 4), kernel_size=2, stride=1)


def test_an_op_without_a_lowering_names_the_opset_that_has_it(tmp_path):
    cols = ember.tensor(np.arange(2 * 8 * 9, dtype=np.float32).reshape(2, 8, 9))
    with pytest.raises(OnnxExportError, match=r"'fold' lowers to ONNX Col2Im.*opset 18"):
        ember.onnx.export(_folding, (cols,), tmp_path / "fold.onnx")
    path = tmp_path / "fold18.onnx"
    ember.onnx.export(_folding, (cols,), path, opset_version=18)
    assert ember.onnx.verify(_folding, (cols,), path)["outputs"] == 1


def test_elementwise_corner_cases_agree(tmp_path):
    def forward(x, k):
        return (x % 3.0, k % -3, k // 2, (-k) // 3, x.floor(), x.abs().log1p(), x.expm1(),
                x.clamp(-1, 1), x.isfinite(), x.flip(0), x.argmax(), x.amax(0), (x > 0).any(1),
                ember.where(x > 0, x, 0.5), x.rsqrt().nan_to_num(0.0) * 0 + x.exp().sqrt())
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((3, 4)).astype(np.float32) * 4)
    k = ember.tensor(rng.integers(-9, 9, (3, 4)))
    path = tmp_path / "ew.onnx"
    try:
        ember.onnx.export(forward, (x, k), path)
    except OnnxExportError as exc:           # an op ember uses here and cannot lower
        pytest.fail(str(exc))
    ember.onnx.verify(forward, (x, k), path)


def test_load_runs_other_exporters_ops():
    """Conv, BatchNormalization, Flatten, Gemm, LayerNormalization, Gelu, AveragePool:
    written with onnx.helper as torch's exporter writes them (the mutation corpus's conv
    model), run by ember like onnxruntime."""
    from onnx_mutants import _conv_model
    model = _conv_model()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 2, 8, 8)).astype(np.float32)
    from ember.onnx import _run
    want = _run(model, [x])[0][0]
    for device in DEVICES:
        got = ember.onnx.load(model).to(device)(ember.tensor(x, device=device)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_load_refuses_unknown_ops():
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Einsum", ["x", "x"], ["y"], equation="ii")],
                              "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                  [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ember.onnx.OnnxImportError, match="'Einsum'.*has no ember import"):
        ember.onnx.load(model)


def test_load_reads_the_attributes_it_used_to_drop():
    """IsInf's detect_negative/detect_positive, Pad's axes input and Max of three inputs
    give onnxruntime's answer; Dropout in training mode is refused, not run as Identity."""
    from ember.onnx import _run
    from onnx import TensorProto, helper, numpy_helper
    x = np.array([[-np.inf, 1.0, np.inf], [2.0, -3.0, np.nan]], np.float32)
    inits = [numpy_helper.from_array(np.array([1, 2], np.int64), "pads"),
             numpy_helper.from_array(np.array([1], np.int64), "axes"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    nodes = [helper.make_node("IsInf", ["x"], ["pos"], detect_negative=0),
             helper.make_node("IsInf", ["x"], ["neg"], detect_positive=0),
             helper.make_node("Pad", ["x", "pads", "", "axes"], ["padded"]),
             helper.make_node("Max", ["x", "half", "x"], ["most"])]
    outs = [("pos", TensorProto.BOOL, [2, 3]), ("neg", TensorProto.BOOL, [2, 3]),
            ("padded", TensorProto.FLOAT, [2, 6]), ("most", TensorProto.FLOAT, [2, 3])]
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(*o) for o in outs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              ir_version=8)
    want, _ = _run(model, [x])
    got = ember.onnx.load(model)(ember.tensor(x))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    dropout = helper.make_model(helper.make_graph(
        [helper.make_node("Dropout", ["x", "", "training"], ["y"], "drop")], "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(True), "training")]),
        opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ember.onnx.OnnxImportError,
                       match="node 'drop' \\(Dropout\\): Dropout with training_mode true"):
        ember.onnx.load(dropout)(ember.tensor(x))


def test_is_in_onnx_export_only_while_exporting(tmp_path):
    # torch.onnx.is_in_onnx_export(): a model may take another path when exported
    class Seen(nn.Module):
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x):
            exporting = ember.onnx.is_in_onnx_export()
            self.seen.append(exporting)
            return x * 2 if exporting else x * 3

    model = Seen()
    assert not ember.onnx.is_in_onnx_export()
    model(ember.ones(2))
    proto = ember.onnx.export(model, (ember.ones(2),), str(tmp_path / "seen.onnx"))
    assert model.seen[0] is False and True in model.seen[1:]
    assert not ember.onnx.is_in_onnx_export()
    import onnxruntime
    session = onnxruntime.InferenceSession(proto.SerializeToString())
    out = session.run(None, {session.get_inputs()[0].name: np.ones(2, np.float32)})[0]
    assert out.tolist() == [2.0, 2.0]                  # the export path was captured
    with pytest.raises(ZeroDivisionError):             # the flag is reset after a failure
        class Failing(nn.Module):
            def forward(self, x):
                return x / 0 if not ember.onnx.is_in_onnx_export() else 1 / 0
        ember.onnx.export(Failing(), (ember.ones(1),))
    assert not ember.onnx.is_in_onnx_export()
