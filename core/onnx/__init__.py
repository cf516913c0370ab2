"""ember.onnx: ONNX models from ember models (torch.onnx.export's signature), checked with
onnxruntime, and ONNX models run on any ember device.

    ember.onnx.export(model, (x,), "model.onnx", dynamic_axes={"input": {0: "batch"}})
    ember.onnx.verify(model, (x,), "model.onnx")    # onnxruntime vs ember eager
    net = ember.onnx.load("model.onnx").to("opencl:0")

export captures the forward with ember.export (one graph for compile, export and onnx)
and lowers it op by op (lower.py); load reads an ONNX graph into an ember Module that runs
its nodes with ember ops (importer.py).  The `onnx` and `onnxruntime` packages are
imported only here, when used: `pip install onnx onnxruntime`.
"""
from __future__ import annotations

import contextlib
import enum
import os

import numpy as np

from ..errors import EmberError
from .lower import MAX_OPSET, MIN_OPSET, OnnxExportError

__all__ = ["export", "verify", "load", "is_in_onnx_export", "TrainingMode", "OperatorExportTypes",
           "OnnxExportError", "OnnxVerificationError",
           "OnnxImportError", "MIN_OPSET", "MAX_OPSET"]


class OnnxVerificationError(EmberError, AssertionError):
    """An ONNX runtime's outputs disagree with ember's.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


def __getattr__(name):
    if name == "OnnxImportError":
        from .importer import OnnxImportError
        return OnnxImportError
    raise AttributeError(f"module 'ember.onnx' has no attribute {name!r}")


def _require(package: str):
    import importlib
    try:
        return importlib.import_module(package)
    except ImportError:
        raise EmberError(f"ember.onnx needs the {package!r} package: pip install onnx "
                         "onnxruntime") from None


class TrainingMode(enum.IntEnum):
    """The mode export() exports a model in: EVAL (the default), PRESERVE, TRAINING.

    PyTorch
    -------
    ``torch.onnx.TrainingMode``
    """
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """export()'s operator_export_type: ember writes standard ONNX operators only (ONNX);
    the others are refused.

    PyTorch
    -------
    ``torch.onnx.OperatorExportTypes``
    """
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


# torch.onnx.export keywords that choose how torch's own exporters build or tidy the graph,
# not what it computes: ember has one exporter (ember.export's graph, lowered op by op) and
# writes the same model for either value, so each is taken as torch's default and a value
# that would ask for something else is refused
_SAME_MODEL = {"dynamo": None, "optimize": None, "do_constant_folding": None,
               "external_data": None, "autograd_inlining": True}
_REFUSED = {"custom_translation_table": "custom translation tables (ember lowers its own ops)",
            "custom_opsets": "custom opsets", "report": "a markdown export report",
            "profile": "a profile of the export", "dump_exported_program":
            "a dump of the exported program (use ember.export(...).save)",
            "export_modules_as_functions": "modules as ONNX functions"}


def export(model, args=(), f=None, *, kwargs: dict | None = None, verbose: bool | None = None,
           input_names=None, output_names=None, opset_version: int | None = None,
           dynamic_axes: dict | None = None, dynamic_shapes=None,
           export_params: bool = True, keep_initializers_as_inputs: bool = False,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           verify: bool = False, artifacts_dir=".", **options):
    """Write model(*args) as an ONNX model to f (a path or a binary file object; None: not
    written) and return its ModelProto.

    input_names / output_names name the graph's tensors (default: the forward's parameter
    names, and output / output_0, output_1...); dynamic_axes (torch's TorchScript-exporter
    form) maps those names to {axis: name} or [axis, ...] for the sizes that may change, or
    dynamic_shapes (torch.export's form, per argument); opset_version: 17 by default, 14 to
    21.  training: TrainingMode.EVAL (default: the model is exported in eval mode and put
    back), PRESERVE (its current mode) or TRAINING.  verify=True runs the written model with
    onnxruntime and compares it with ember (ember.onnx.verify).  keep_initializers_as_inputs
    also lists the weights as graph inputs.  verbose prints the graph.
    dynamo, optimize, do_constant_folding, external_data and autograd_inlining choose
    between torch's exporters and their graph tidying, not what the model computes: ember
    has one exporter and writes the same, unoptimised graph for any value (it never needs
    external data below protobuf's 2 GB).  Options ember cannot honour (a custom
    translation table or opsets, ATen operators, export reports, modules as functions)
    raise UnsupportedError.

    PyTorch
    -------
    ``torch.onnx.export``
    """
    del artifacts_dir                  # where torch writes report/profile files: refused below
    _require("onnx")
    from .. import export as ember_export
    from ..errors import EmberTypeError, UnsupportedError
    from ..tensor import Tensor
    from .lower import to_model
    for name, value in options.items():
        if name in _REFUSED:
            if value:
                raise UnsupportedError(f"onnx.export: {name}={value!r} asks for "
                                       f"{_REFUSED[name]}, which ember does not write; "
                                       f"leave {name} out")
        elif name in _SAME_MODEL:
            if _SAME_MODEL[name] is not None and value != _SAME_MODEL[name]:
                raise UnsupportedError(f"onnx.export: {name}={value!r} is not supported; "
                                       f"ember exports as with {name}="
                                       f"{_SAME_MODEL[name]!r}")
        else:
            raise EmberTypeError(f"onnx.export() got an unexpected keyword argument {name!r}")
    if not export_params:
        raise OnnxExportError("onnx.export: export_params=False is not supported; ember "
                              "writes the weights into the model")
    if OperatorExportTypes(operator_export_type) is not OperatorExportTypes.ONNX:
        raise UnsupportedError(f"onnx.export: operator_export_type="
                               f"{OperatorExportTypes(operator_export_type).name} is not "
                               "supported; ember writes standard ONNX operators only")
    if dynamic_axes and dynamic_shapes is not None:
        raise OnnxExportError("onnx.export: give dynamic_axes or dynamic_shapes, not both")
    if type(args) is Tensor:
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    from ..export.trace import input_names as leaf_names
    names = leaf_names(model, args, kwargs)
    tensor_names = [n for n, leaf in zip(names, _leaves(args, kwargs)) if type(leaf) is Tensor]
    if input_names is not None:
        input_names = list(input_names)
        if len(input_names) > len(tensor_names):
            raise OnnxExportError(f"onnx.export: {len(input_names)} input_names for "
                                  f"{len(tensor_names)} tensor inputs")
        tensor_names[:len(input_names)] = input_names
    output_names = list(output_names or [])
    output_axes: dict = {}
    if dynamic_shapes is None:
        dynamic_shapes, output_axes = _dynamic(dynamic_axes or {}, tensor_names,
                                               output_names, args, kwargs)
    mode = TrainingMode(training)
    with _in_mode(model, mode), _exporting():
        program = ember_export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
    weights = {name: t.numpy() for name, t in program.state_dict.items()}
    model_proto = to_model(program.spec, weights, opset=17 if opset_version is None
                           else int(opset_version), input_names=tensor_names,
                           output_names=output_names, output_axes=output_axes)
    if keep_initializers_as_inputs:
        _initializers_as_inputs(model_proto)
    if verbose:
        import onnx
        print(onnx.printer.to_text(model_proto.graph))
    if f is not None:
        data = model_proto.SerializeToString()
        if hasattr(f, "write"):
            f.write(data)
        else:
            with open(os.fspath(f), "wb") as fh:
                fh.write(data)
    if verify:
        with _in_mode(model, mode):
            _compare(model, args, model_proto, kwargs=kwargs)
    return model_proto


# how many export() calls are running their model (torch's flag is process-wide too)
_EXPORTS = 0


def is_in_onnx_export() -> bool:
    """True while ember.onnx.export runs the model to capture it (a model may take another
    path for export), False otherwise.

    PyTorch
    -------
    ``torch.onnx.is_in_onnx_export``
    """
    return _EXPORTS > 0


@contextlib.contextmanager
def _exporting():
    global _EXPORTS
    _EXPORTS += 1
    try:
        yield
    finally:
        _EXPORTS -= 1


@contextlib.contextmanager
def _in_mode(model, mode: TrainingMode):
    """The model in export()'s training mode (a function, or PRESERVE: as it is), and back
    in its own mode after."""
    was_training = getattr(model, "training", None)
    if was_training is not None and mode is not TrainingMode.PRESERVE:
        model.train(mode is TrainingMode.TRAINING)
    try:
        yield
    finally:
        if was_training is not None:
            model.train(was_training)


def _initializers_as_inputs(model_proto) -> None:
    """torch's keep_initializers_as_inputs=True: every weight is also a graph input (its
    initializer the default value), after the model's own inputs."""
    from onnx import helper
    have = {i.name for i in model_proto.graph.input}
    for init in model_proto.graph.initializer:
        if init.name not in have:
            model_proto.graph.input.append(helper.make_tensor_value_info(
                init.name, init.data_type, list(init.dims)))


def _leaves(args, kwargs) -> list:
    from ..graph.ir import flatten
    return flatten(list(args) + list(kwargs.values()))


def _dynamic(dynamic_axes: dict, input_names: list, output_names: list, args, kwargs):
    """torch's dynamic_axes -> (ember.export dynamic_shapes by leaf, {output: {axis: name}})."""
    from ..export.symbolic import Dim
    from ..tensor import Tensor
    known = set(input_names) | set(output_names)
    unknown = set(dynamic_axes) - known
    if unknown:
        raise OnnxExportError(f"onnx.export: dynamic_axes names {sorted(unknown)}, which are "
                              f"neither inputs {input_names} nor outputs {output_names}")

    def axes(name, spec):
        if isinstance(spec, dict):
            return {int(a): str(d) for a, d in spec.items()}
        return {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(spec)}
    per_leaf = []
    k = 0
    dims: dict = {}
    for leaf in _leaves(args, kwargs):
        if type(leaf) is not Tensor:
            per_leaf.append(None)
            continue
        name = input_names[k]
        k += 1
        spec = axes(name, dynamic_axes[name]) if name in dynamic_axes else None
        per_leaf.append(None if spec is None else {
            a: dims.setdefault(d, Dim(_identifier(d))) for a, d in spec.items()})
    outputs = {n: axes(n, s) for n, s in dynamic_axes.items() if n in output_names}
    if not any(per_leaf):
        return None, outputs
    # ember.export takes dynamic shapes per argument: rebuild the argument structure
    it = iter(per_leaf)

    def walk(value):
        if isinstance(value, (tuple, list)):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {key: walk(v) for key, v in value.items()}
        return next(it)
    return [walk(a) for a in list(args) + list(kwargs.values())], outputs


def _identifier(name: str) -> str:
    text = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return text if text.isidentifier() else f"d_{text}"


def verify(model, args, f, *, rtol: float = 1e-4, atol: float = 1e-5,
           kwargs: dict | None = None) -> dict:
    """Run the ONNX model in f on args with onnxruntime (onnx's ReferenceEvaluator where
    onnxruntime lacks an op) and compare with model(*args) run eagerly by ember; raise
    OnnxVerificationError where they differ.  Returns {"runtime", "outputs",
    "max_abs_diff"}.

    PyTorch
    -------
    None: PyTorch's ``torch.onnx.verification`` is the nearest.
    """
    return _compare(model, args, f, rtol=rtol, atol=atol, kwargs=kwargs)


def _compare(model, args, f, *, rtol: float = 1e-4, atol: float = 1e-5,
             kwargs: dict | None = None) -> dict:
    onnx = _require("onnx")
    from ..autograd.grad_mode import no_grad
    from ..export.program import mismatch
    from ..tensor import Tensor
    if type(args) is Tensor:
        args = (args,)
    kwargs = dict(kwargs or {})
    with no_grad():
        expected = [t.numpy() for t in _leaves([model(*args, **kwargs)], {})
                    if type(t) is Tensor]
    inputs = [t.numpy() for t in _leaves(args, kwargs) if type(t) is Tensor]
    model_proto = onnx.load(f) if not isinstance(f, onnx.ModelProto) else f
    got, runtime = _run(model_proto, inputs)
    if len(got) != len(expected):
        raise OnnxVerificationError(f"onnx.verify: the model has {len(got)} outputs; ember "
                                    f"made {len(expected)}")
    worst = 0.0
    for k, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            raise OnnxVerificationError(f"onnx.verify: output {k} has shape {g.shape} in "
                                        f"{runtime}, {e.shape} in ember")
        bad, diff = mismatch(np.asarray(g), e, rtol, atol)
        worst = max(worst, diff)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise OnnxVerificationError(
                f"onnx.verify: output {k} differs at {at}: {runtime} gives {g[at]!r}, ember "
                f"{e[at]!r} ({int(bad.sum())} of {bad.size} elements outside rtol={rtol}, "
                f"atol={atol})")
    return {"runtime": runtime, "outputs": len(got), "max_abs_diff": worst}


def _run(model_proto, inputs: list) -> tuple:
    """(outputs, which runtime ran them)."""
    ort = _require("onnxruntime")
    names = [i.name for i in model_proto.graph.input
             if i.name not in {init.name for init in model_proto.graph.initializer}]
    feeds = dict(zip(names, inputs))
    try:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(model_proto.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001  (onnxruntime's own classes; NOT_IMPLEMENTED...)
        if "NOT_IMPLEMENTED" not in str(exc) and "not implemented" not in str(exc).lower():
            raise OnnxVerificationError(f"onnx.verify: onnxruntime refuses the model: "
                                        f"{exc}") from None
        from onnx.reference import ReferenceEvaluator
        return [np.asarray(o) for o in ReferenceEvaluator(model_proto).run(None, feeds)], \
            "onnx.reference"
    return session.run(None, feeds), "onnxruntime"


def load(f, *, base_dir=None):
    """An ONNX model (a path, a binary file object, bytes or a ModelProto) as an ember Module
    that runs on any device: `ember.onnx.load(path).to("opencl:0")(x)`.

    The model is checked whole before it is returned: a malformed one (unreadable bytes, a
    tensor whose data disagrees with its shape, a node reading a value nothing makes, an
    output never produced, an op or attribute ember does not import) is an OnnxImportError
    naming the initializer, node or output.  External data is read from the model's folder
    (base_dir, where the model comes as bytes or a ModelProto) after ember's own path check:
    a relative path that stays inside that folder, symlinks resolved, to an existing file
    that holds the bytes the tensor needs.

    PyTorch
    -------
    None: PyTorch cannot run ONNX models; ember's importer runs one as ember ops.
    """
    onnx = _require("onnx")
    from .importer import OnnxModule
    from .reader import parse
    if isinstance(f, onnx.ModelProto):
        proto = f
    elif isinstance(f, (bytes, bytearray, memoryview)):
        proto = parse(bytes(f), "the bytes given")
    elif hasattr(f, "read"):
        name = getattr(f, "name", None)
        proto = parse(f.read(), f"file {name!r}" if isinstance(name, str) else "the file")
        if base_dir is None and isinstance(name, str) and os.path.isfile(name):
            base_dir = os.path.dirname(os.path.abspath(name))
    else:
        path = os.fspath(f)
        with open(path, "rb") as fh:
            proto = parse(fh.read(), repr(path))
        if base_dir is None:
            base_dir = os.path.dirname(os.path.abspath(path))
    return OnnxModule(proto, base_dir=base_dir)
