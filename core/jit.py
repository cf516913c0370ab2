"""ember.jit (torch.jit): TorchScript's Python-side API, as PyTorch runs it with its JIT
switched off (``PYTORCH_JIT=0``, torch's own documented mode for debugging scripted code).

``script`` and ``trace`` return the Python code itself (a module's class gains the
ScriptModule methods that have an ember meaning), so a program that scripts a function or a
module for speed computes exactly what it computed before; ``trace`` runs the example
inputs once, as torch's does, so a call that fails fails here too. The decorators
(``ignore``, ``unused``, ``export``, ``script_method``, ``_overload_method``) leave their
function as it is, ``annotate``/``Attribute``/``Final`` are the plain values and types,
``fork`` runs the call at once and ``wait`` returns its result (torch's eager semantics).

What has no ember meaning is refused with NotInEmberError naming the fix: TorchScript
archives (``jit.save``/``jit.load``, ``ScriptModule.save``) — save the ``state_dict`` with
``ember.save`` or export with ``ember.onnx.export`` — and TorchScript's IR (``.graph``,
``.code``) — ``ember.export`` captures ember's graph.  For a compiled, replayed step use
``ember.compile``.
"""
from __future__ import annotations

import typing
import warnings
from collections.abc import Callable
from typing import Any

from .autograd.grad_mode import no_grad
from .errors import NotInEmberError
from .nn.module import Module
from .tensor import Tensor

__all__ = ["TracerWarning", "script", "trace", "ignore", "unused", "export", "script_method",
           "ScriptModule",
           "ScriptFunction", "is_scripting", "is_tracing", "annotate", "Attribute", "Final",
           "fork", "wait", "Future", "save", "load"]

Final = typing.Final

_ARCHIVE_FIX = ("save the weights with ember.save(model.state_dict(), path) (torch.load "
                "reads them back into the same model class), or export the model with "
                "ember.onnx.export")


class TracerWarning(Warning):
    """The warning torch.jit.trace gives about a trace that may not generalise; ember's
    trace captures through ember.export and reports such cases as errors, so it never
    warns with it, but programs filter it by name.

    PyTorch
    -------
    ``torch.jit.TracerWarning``
    """

    @staticmethod
    def ignore_lib_warnings() -> None:
        """Ignore TracerWarnings raised from inside ember's own modules (torch's ignore
        those from torch's)."""
        warnings.filterwarnings("ignore", category=TracerWarning, module=r"ember\.(?!jit)")


def _refuse(what: str, fix: str) -> NotInEmberError:
    return NotInEmberError(f"ember has no {what}: TorchScript is not in ember (ember.jit "
                           f"runs scripted code as plain Python, as torch with PYTORCH_JIT=0); "
                           f"{fix}")


class _ScriptMethods:
    """What script()/trace() add to a module's class: TorchScript's own members refuse
    with the fix; everything else is the module's."""

    def save(self, f, _extra_files=None) -> None:
        """TorchScript archives are not in ember: refused with the fix.

        PyTorch
        -------
        ``torch.jit.ScriptModule.save``
        """
        raise _refuse("ScriptModule.save", _ARCHIVE_FIX)

    def __getattr__(self, name: str):
        # .graph/.code are properties in torch; a property raising NotInEmberError (an
        # AttributeError) would fall through to Module.__getattr__, so they are answered here
        if name in ("graph", "code", "inlined_graph", "_c"):
            raise _refuse(f"ScriptModule.{name}",
                          "ember.export(model, args) captures ember's graph")
        return super().__getattr__(name)


class ScriptModule(_ScriptMethods, Module):
    """Base class of modules written for TorchScript (``class M(torch.jit.ScriptModule)``
    with ``@torch.jit.script_method``): an ``nn.Module`` whose script methods are plain
    methods.

    PyTorch
    -------
    ``torch.jit.ScriptModule``
    """


class ScriptFunction:
    """What ``script(fn)`` returns in torch; here script returns ``fn`` itself, so this
    class only answers isinstance checks for objects built from it.

    PyTorch
    -------
    ``torch.jit.ScriptFunction``
    """


def _as_script_module(module):
    """module, its class gaining _ScriptMethods (in place, once; parameters shared as
    torch's scripted module shares them)."""
    cls = type(module)
    if issubclass(cls, _ScriptMethods):
        return module
    module.__class__ = type(f"RecursiveScriptModule_{cls.__name__}", (_ScriptMethods, cls),
                            {"__module__": cls.__module__})
    return module


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """The function, class or module itself (a module gains ScriptModule's members), as
    torch.jit.script with PYTORCH_JIT=0: the results are the Python code's.

    PyTorch
    -------
    ``torch.jit.script``
    """
    if optimize is not None:
        raise NotInEmberError("ember.jit.script: optimize= is deprecated in torch and "
                              "has no meaning here; drop it (ember.compile optimizes a step)")
    if isinstance(obj, Module):
        return _as_script_module(obj)
    if not callable(obj):
        raise TypeError(f"ember.jit.script: expected a function, class or nn.Module, got "
                        f"{type(obj).__name__}")
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True,
          check_inputs=None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs: bool = True):
    """Run ``func`` once on the example inputs (errors surface as in torch's trace) and
    return it (a module gains ScriptModule's members).  Unlike a real trace, later calls
    follow the Python code, so data-dependent branches are taken as the data says (torch
    freezes the branch the example took, and warns).

    PyTorch
    -------
    ``torch.jit.trace``
    """
    if optimize is not None:
        raise NotInEmberError("ember.jit.trace: optimize= is deprecated in torch; drop it")
    if example_inputs is None and example_kwarg_inputs is None:
        raise TypeError("ember.jit.trace: expected example_inputs (a tensor or a tuple of "
                        "them) or example_kwarg_inputs")
    args = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(
        example_inputs or ())
    with no_grad():
        func(*args, **(example_kwarg_inputs or {}))
    return _as_script_module(func) if isinstance(func, Module) else func


def _decorator(name: str):
    def deco(fn=None, **kwargs):
        if fn is None:                         # @ignore(drop=True)
            return lambda f: f
        return fn
    deco.__name__ = deco.__qualname__ = name
    deco.__doc__ = (f"Leaves the function as it is (TorchScript's ``{name}`` marker; "
                    f"ember runs Python).\n\nPyTorch\n-------\n``torch.jit.{name}``\n")
    return deco


ignore = _decorator("ignore")
unused = _decorator("unused")
export = _decorator("export")
script_method = _decorator("script_method")
_overload_method = _decorator("_overload_method")
_script_if_tracing = _decorator("_script_if_tracing")


def is_scripting() -> bool:
    """False: ember never runs code as TorchScript.

    PyTorch
    -------
    ``torch.jit.is_scripting``
    """
    return False


def is_tracing() -> bool:
    """False: ember's trace runs the Python code (see :func:`trace`).

    PyTorch
    -------
    ``torch.jit.is_tracing``
    """
    return False


def annotate(the_type, the_value):
    """``the_value`` (a type hint for TorchScript's compiler).

    PyTorch
    -------
    ``torch.jit.annotate``
    """
    return the_value


def Attribute(value, type):          # noqa: N802, A002  (torch's names)
    """``value`` (a type hint for TorchScript's compiler).

    PyTorch
    -------
    ``torch.jit.Attribute``
    """
    return value


class Future:
    """The result of :func:`fork`, already complete (torch's eager semantics).

    PyTorch
    -------
    ``torch.jit.Future``
    """

    def __init__(self, value: Any = None, error: BaseException | None = None):
        self._value, self._error = value, error

    def wait(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def done(self) -> bool:
        return True


def fork(func: Callable, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)`` now and return a completed :class:`Future` (torch runs
    forks synchronously outside TorchScript too).

    PyTorch
    -------
    ``torch.jit.fork``
    """
    try:
        return Future(func(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001  (raised again by wait(), as torch's future)
        return Future(error=exc)


def wait(future: Future) -> Any:
    """The forked call's result (its exception, raised).

    PyTorch
    -------
    ``torch.jit.wait``
    """
    return future.wait()


def save(m, f, _extra_files=None) -> None:
    """TorchScript archives are not in ember: refused with the fix.

    PyTorch
    -------
    ``torch.jit.save``
    """
    raise _refuse("torch.jit.save", _ARCHIVE_FIX)


def load(f, map_location=None, _extra_files=None, _restore_shapes: bool = False):
    """TorchScript archives are not in ember: refused with the fix.

    PyTorch
    -------
    ``torch.jit.load``
    """
    raise _refuse("torch.jit.load", "load a state_dict saved by torch.save with ember.load, "
                  "or an ONNX file with ember.onnx.load")
