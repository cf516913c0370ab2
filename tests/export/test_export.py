"""ember.export: every model family exports with dynamic sizes, runs at other sizes like eager,
saves, reloads (here and in a fresh process without the model classes) and verifies on
cpu and opencl:0; what cannot be exported says why."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import ember
import ember.nn as nn
import numpy as np
import pytest
from ember.export import Dim, ExportError, ExportFormatError
from export_models import DEVICES, eager, families

FAMILIES = {f.name: f for f in families()}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each family exported on each device, saved: {(name, device): (path, program)}."""
    folder = tmp_path_factory.mktemp("programs")
    out = {}
    for name, family in FAMILIES.items():
        for device in DEVICES:
            args, _ = family.on(device)
            program = ember.export(family.model, args, dynamic_shapes=family.dynamic)
            path = folder / f"{name}-{device.replace(':', '')}.ember"
            program.save(path)
            out[(name, device)] = (path, program)
        family.model.to("cpu")
    return out


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(FAMILIES))
def test_program_runs_like_eager_at_other_sizes(saved, name, device):
    family = FAMILIES[name]
    _, program = saved[(name, device)]
    args, other = family.on(device)
    try:
        for inputs in (args, other):
            got = program(*inputs)
            got = [t.numpy() for t in (got if isinstance(got, tuple) else (got,))]
            for g, want in zip(got, eager(family.model, inputs)):
                assert g.shape == want.shape
                # on the CPU the program calls the very kernels eager calls
                np.testing.assert_allclose(g, want, rtol=0 if device == "cpu" else 1e-5,
                                           atol=0 if device == "cpu" else 1e-6)
    finally:
        family.model.to("cpu")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(FAMILIES))
def test_reloaded_program_verifies_on_every_device(saved, name, device):
    path, _ = saved[(name, device)]
    program = ember.export.load(path)
    for target in DEVICES:
        report = program.to(target).verify()
        assert report["device"] == target and report["outputs"] >= 1


def test_reload_in_a_fresh_process_without_the_model_code(saved):
    paths = [str(path) for (_, device), (path, _) in saved.items() if device == "cpu"]
    script = textwrap.dedent(f"""
        import sys, ember
        for path in {paths!r}:
            program = ember.export.load(path)
            for device in {DEVICES!r}:
                report = program.to(device).verify()
                print(path, device, report["max_abs_diff"])
        print("classes:", [m for m in sys.modules if "export_models" in m])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == len(paths) * len(DEVICES) + 1
    assert "classes: []" in done.stdout


def test_graph_specs_and_names(saved):
    _, program = saved[("transformer", "cpu")]
    text = program.format()
    assert "float32[batch,seq,6]" in text and "parameter layer.self_attn.in_proj_weight" in text
    assert set(program.dynamic_dims) == {"batch", "seq"}
    program.graph.verify()                     # the graph at the example sizes
    assert "layer.norm1.weight" in program.state_dict


def test_call_checks_shapes_dtypes_and_devices(saved):
    _, program = saved[("mlp", "cpu")]
    with pytest.raises(ember.errors.ShapeError, match="input 'input' must have shape"):
        program(ember.zeros(3, 11))
    with pytest.raises(TypeError, match="must be float32"):
        program(ember.zeros(3, 12, dtype=ember.float64))
    with pytest.raises(TypeError, match="expected 1 positional"):
        program(ember.zeros(3, 12), ember.zeros(3, 12))
    if len(DEVICES) > 1:
        with pytest.raises(ember.errors.DeviceMismatchError, match="program.to"):
            program(ember.zeros(3, 12, device=DEVICES[1]))


def test_dim_range_is_checked():
    model = nn.Linear(4, 2)
    x = ember.zeros(3, 4)
    program = ember.export(model, (x,), dynamic_shapes=({0: Dim("batch", min=2, max=8)},))
    assert program(ember.zeros(8, 4)).shape == (8, 2)
    with pytest.raises(ember.errors.ShapeError, match=r"'batch' must lie in \[2, 8\]"):
        program(ember.zeros(9, 4))
    with pytest.raises(ExportError, match="outside its range"):
        ember.export(model, (ember.zeros(9, 4),),
                     dynamic_shapes={"input": {0: Dim("batch", max=8)}})


def test_a_graph_break_names_the_op_and_line():
    def forward(x):
        if (x.sum() > 0).item():          # data-dependent Python
            return x * 2
        return x
    with pytest.raises(ExportError, match=r"graph break.*test_export.py:\d+"):
        ember.export(forward, (ember.ones(3),))


def test_random_draws_and_buffer_updates_are_refused():
    dropout = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    with pytest.raises(ExportError, match="random numbers.*model.eval"):
        ember.export(dropout, (ember.ones(2, 4),))
    assert ember.export(dropout.eval(), (ember.ones(2, 4),))(ember.ones(2, 4)).shape == (2, 4)
    bn = nn.BatchNorm1d(4)
    with pytest.raises(ExportError, match="model.eval"):
        ember.export(bn, (ember.ones(2, 4),))


def test_rnn_time_steps_cannot_be_dynamic():
    family = FAMILIES["lstm"]
    # an LSTM layer's steps are one lstm_sequence node (steps=time), but where the last
    # step's rows start ((time - 1) * batch) is no expression export can write
    with pytest.raises(ExportError, match="structure depends on dimension 'time'|depends on "
                       "the dynamic dimensions in a way export cannot express"):
        ember.export(family.model, family.args,
                     dynamic_shapes={"tokens": {0: "batch", 1: "time"}})


def test_sizes_fitted_from_dims_and_python_scalars():
    def forward(x, y):
        n = x.shape[0]
        z = ember.cat([x, y], 0).reshape(n + y.shape[0], -1)     # batch + 3
        return z[: n - 1].sum(0) / n, ember.arange(n) * 2          # batch - 1, 1/batch
    x, y = ember.ones(4, 2), ember.ones(3, 2)
    program = ember.export(forward, (x, y), dynamic_shapes=({0: "batch"}, None))
    for n in (2, 5, 9):
        a, b = ember.tensor(np.arange(2 * n, dtype=np.float32).reshape(n, 2)), ember.ones(3, 2)
        for got, want in zip(program(a, b), forward(a, b)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_file_is_a_zip_of_json_and_safetensors(saved, tmp_path):
    import json
    import zipfile
    path, _ = saved[("cnn", "cpu")]
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["program.json", "weights.safetensors", "examples.safetensors"]
        doc = json.loads(zf.read("program.json"))
    assert doc["format"] == "ember.export" and doc["version"] == 1
    assert "conv2d" in doc["ops"] and doc["dims"] == [["batch", 1, 2**62]]
    from safetensors.numpy import load as st_load  # the weights: plain safetensors
    with zipfile.ZipFile(path) as zf:
        weights = st_load(zf.read("weights.safetensors"))
    assert any(k.endswith("running_var") for k in weights)
    broken = tmp_path / "broken.ember"
    broken.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(ExportFormatError, match="not a valid exported program"):
        ember.export.load(broken)


def test_conv_transpose2d_program_reloads_and_checks_its_input_size(tmp_path):
    """conv_transpose2d records conv2d_input_grad: the reloaded program runs like eager at
    another batch size, and a file whose input_size does not give the recorded gradient's
    size is refused before anything runs."""
    import zipfile
    ember.manual_seed(0)
    model = nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1)
    x = ember.tensor(np.random.default_rng(3).standard_normal((2, 6, 5, 5), dtype=np.float32))
    path = tmp_path / "ct.ember"
    ember.export(model, (x,), dynamic_shapes={"input": {0: "batch"}}).save(path)
    program = ember.export.load(path)
    other = ember.tensor(np.random.default_rng(4).standard_normal((3, 6, 5, 5),
                                                                   dtype=np.float32))
    for inputs in ((x,), (other,)):
        np.testing.assert_array_equal(program(*inputs).numpy(), eager(model, inputs)[0])
    with zipfile.ZipFile(path) as zf:
        files = {name: zf.read(name) for name in zf.namelist()}
    text = files["program.json"].decode()
    assert text.count('"input_size":[10,10]') == 1, text
    # input_size and every recorded (N, 4, 10, 10) shape made 10x40: the graph stays
    # consistent with the declaration's rule, which trusts input_size
    files["program.json"] = text.replace('"input_size":[10,10]', '"input_size":[10,40]')\
        .replace("4,10,10]", "4,10,40]").encode()
    hostile = tmp_path / "hostile.ember"
    with zipfile.ZipFile(hostile, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    with pytest.raises(ExportError, match="input_size .* does not give the 5x5 gradient"):
        ember.export.load(hostile)


def test_export_module_is_also_the_function():
    import ember.export as export_module
    assert export_module is ember.export and callable(ember.export)
    program = ember.export.export(nn.Linear(2, 2), (ember.ones(1, 2),))
    assert program.examples and "ExportedProgram" in repr(program)


def test_cli_inspect_and_verify(saved, capsys, monkeypatch):
    from ember.tools.cli import main
    path, _ = saved[("transformer", "cpu")]
    assert main(["export", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "format version 1" in out and "batch >= 1" in out and "(batch, seq, 6)" in out
    assert main(["export", "verify", str(path), "--device", DEVICES[-1]]) == 0
    assert "agree on" in capsys.readouterr().out
    # on a terminal a status line says what runs meanwhile (rich: TTY_COMPATIBLE=1 forces one)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert main(["export", "verify", str(path)]) == 0
    assert "verifying" in capsys.readouterr().err
    bad = path.with_suffix(".bad")
    bad.write_bytes(b"not a zip")
    assert main(["export", "inspect", str(bad)]) == 2
    assert "not a valid exported program" in capsys.readouterr().out
