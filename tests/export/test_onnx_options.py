"""torch.onnx.export's keywords on ember.onnx.export: each one either does what torch's does
or is refused by name (none is accepted and ignored)."""
from __future__ import annotations

import ember
import ember.nn as nn
import numpy as np
import onnx
import pytest
from ember.errors import EmberTypeError, UnsupportedError
from ember.onnx import OperatorExportTypes, TrainingMode


def _bn_model():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with ember.no_grad():                   # running statistics unlike a batch's own
        model[1].running_mean.fill_(0.5)
        model[1].running_var.fill_(2.0)
    return model


def _run(proto, x):
    import onnxruntime as ort
    session = ort.InferenceSession(proto.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    feeds = {session.get_inputs()[0].name: x}
    return session.run(None, feeds)[0]


def test_training_mode_as_torch():
    """EVAL (torch's default) exports the eval-mode model even from a model in train mode,
    and puts the mode back; PRESERVE keeps the mode the model is in."""
    model = _bn_model().train()
    x = ember.randn(5, 3)
    proto = ember.onnx.export(model, (x,))                      # f=None: not written
    assert model.training
    with ember.no_grad():
        want_eval = model.eval()(x).numpy()
        model.train()
    np.testing.assert_allclose(_run(proto, x.numpy()), want_eval, rtol=1e-5, atol=1e-6)
    model.eval()
    proto = ember.onnx.export(model, (x,), training=TrainingMode.PRESERVE)
    np.testing.assert_allclose(_run(proto, x.numpy()), want_eval, rtol=1e-5, atol=1e-6)
    assert not model.training


def test_initializers_as_inputs_verify_and_verbose(tmp_path, capsys):
    model = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    x = ember.randn(4, 3)
    plain = ember.onnx.export(model, (x,), tmp_path / "a.onnx")
    kept = ember.onnx.export(model, (x,), tmp_path / "b.onnx",
                             keep_initializers_as_inputs=True, verify=True, verbose=True)
    weights = sorted(i.name for i in kept.graph.initializer)
    assert [i.name for i in plain.graph.input] == ["input"]
    assert [i.name for i in kept.graph.input][0] == "input"
    assert sorted(i.name for i in kept.graph.input[1:]) == weights == ["0.bias", "0.weight"]
    onnx.checker.check_model(kept)
    np.testing.assert_allclose(_run(kept, x.numpy()), model(x).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    printed = capsys.readouterr().out                       # verbose prints the graph
    assert "Tanh" in printed and "0.weight" in printed
    assert (tmp_path / "b.onnx").read_bytes() == kept.SerializeToString()


def test_dynamic_shapes_in_torch_export_form():
    model = nn.Linear(3, 2)
    batch = ember.export.Dim("batch")
    proto = ember.onnx.export(model, (ember.randn(4, 3),), dynamic_shapes=({0: batch},))
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", 3]
    with pytest.raises(ember.onnx.OnnxExportError, match="not both"):
        ember.onnx.export(model, (ember.randn(4, 3),), dynamic_shapes=({0: batch},),
                          dynamic_axes={"input": [0]})


def test_options_that_change_nothing_are_torch_defaults_and_the_rest_refused():
    model = nn.Linear(3, 2)
    x = ember.randn(2, 3)
    base = ember.onnx.export(model, (x,))
    for name, value in (("dynamo", False), ("optimize", False), ("do_constant_folding", False),
                        ("external_data", False), ("autograd_inlining", True)):
        same = ember.onnx.export(model, (x,), **{name: value})
        assert same.graph == base.graph, name
    for name, value in (("custom_opsets", {"my": 1}), ("report", True),
                        ("export_modules_as_functions", True), ("profile", True),
                        ("custom_translation_table", {len: len}),
                        ("dump_exported_program", True), ("autograd_inlining", False),
                        ("operator_export_type", OperatorExportTypes.ONNX_ATEN)):
        with pytest.raises(UnsupportedError, match=name):
            ember.onnx.export(model, (x,), **{name: value})
    with pytest.raises(EmberTypeError, match="unexpected keyword argument 'opset'"):
        ember.onnx.export(model, (x,), opset=17)
