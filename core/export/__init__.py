"""ember.export: a model's forward as a self-contained program (graph + weights), torch.export's
counterpart.

    program = ember.export(model, (x,), dynamic_shapes={"x": {0: ember.export.Dim("batch")}})
    program(x2)                      # runs the graph, any batch size
    program.save("model.ember")      # one zip: JSON graph, safetensors weights, examples
    ember.export.load("model.ember").to("opencl:0").verify()

`ember.export(...)` and `ember.export.export(...)` are the same function.  The capture is
ember.graph's (one IR for compile, export and onnx); trace.py makes it a Spec, program.py
runs it, format.py writes and reads files.  docs/export.md describes it all.
"""
from __future__ import annotations

import sys
import types

from .program import MAX_VALUE_BYTES, ExportedProgram, ExportVerificationError
from .symbolic import Dim, Expr
from .trace import ExportError

__all__ = ["export", "load", "save", "Dim", "Expr", "ExportedProgram", "ExportError",
           "ExportFormatError", "ExportVerificationError", "MAX_VALUE_BYTES", "FORMAT_VERSION"]


def export(model, args=(), kwargs: dict | None = None, *, dynamic_shapes=None,
           strict: bool = False) -> ExportedProgram:
    """Capture model(*args, **kwargs) (a Module or a function) as an ExportedProgram.

    args: the example inputs (a tuple; a single tensor is taken as one argument).
    dynamic_shapes: per argument (a dict by parameter name, or a tuple by position) a dict
    {axis: Dim or name} of the axes whose size may change between calls (torch.export's
    form).  The module runs in its current mode (call model.eval() first: dropout in
    training mode is refused, as the program must be deterministic).
    strict: torch's strict=True traces the bytecode with TorchDynamo (refusing Python it
    cannot trace soundly); ember's capture runs the Python code and records the ember ops
    it calls, which is torch's non-strict mode, strict=False (torch's default since 2.9).
    strict=True raises NotInEmberError rather than being accepted and ignored.

    PyTorch
    -------
    ``torch.export.export``
    """
    from ..graph.ir import flatten
    from ..tensor import Tensor
    from .trace import build, input_names
    if strict:
        from ..errors import NotInEmberError
        raise NotInEmberError(
            "export(strict=True): torch's strict mode traces the forward's bytecode with "
            "TorchDynamo; ember has no bytecode tracer, and its capture runs the Python code "
            "recording the ember ops it calls, as torch's non-strict mode does. Pass "
            "strict=False (torch's default)")
    if not callable(model):
        raise ExportError(f"export: expected a Module or a function, got "
                          f"{type(model).__name__}")
    if type(args) is Tensor:
        args = (args,)
    if not isinstance(args, tuple):
        raise ExportError(f"export: args must be a tuple of example inputs, got "
                          f"{type(args).__name__}")
    kwargs = dict(kwargs or {})
    names = input_names(model, args, kwargs)
    spec, weights = build(model, args, kwargs, dynamic_shapes, names)
    program = ExportedProgram(spec, {k: t.detach() for k, t in weights.items()})
    consts = {k: _constant(a, program.device) for k, a in spec.constants.items()}
    program._weights.update(consts)
    inputs = [t.detach().to("cpu") for t in flatten(list(args) + list(kwargs.values()))
              if type(t) is Tensor]
    from ..autograd.grad_mode import no_grad
    with no_grad():
        result = model(*args, **kwargs)
    outputs = [t.detach().to("cpu") for t in flatten(result) if type(t) is Tensor]
    program.examples = (inputs, outputs)
    return program


def _constant(array, device):
    from ..ops.creation import tensor
    return tensor(array, device=device)


def save(program: ExportedProgram, path) -> None:
    """torch.export.save's form of program.save(path).

    PyTorch
    -------
    ``torch.export.save``
    """
    program.save(path)


def load(path, *, device=None) -> ExportedProgram:
    """Read a program that ExportedProgram.save wrote; its weights go to `device` (default:
    the cpu).  Nothing in the file is executed; a broken or hostile file raises
    ExportFormatError.

    PyTorch
    -------
    ``torch.export.load``
    """
    from .program import load as _load
    program = _load(path)
    return program if device is None else program.to(device)


def __getattr__(name):
    if name in ("ExportFormatError", "FORMAT_VERSION"):
        from . import format as _format
        return getattr(_format, name)
    raise AttributeError(f"module 'ember.export' has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    """ember.export is both the module and its main function (ember.export(model, args))."""

    def __call__(self, *args, **kwargs):
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
