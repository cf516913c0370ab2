"""`import torch` gives ember: run a PyTorch program unchanged on ember.

    import ember.torch_alias; ember.torch_alias.install()     # then: import torch ...

or `python -m ember.torch_alias program.py [args...]`.  A meta-path finder maps `torch`
to `ember` and `torch.X.Y` to `ember.X.Y` (with the few renames in RENAMES); a module
ember lacks fails with ModuleNotFoundError naming it as an ember gap.  Each ember module
keeps its own name and spec: `torch.nn is ember.nn` afterwards.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from .errors import EmberError

# torch module paths whose ember counterpart lives elsewhere
RENAMES = {
    "torch.nn.modules": "ember.nn", "torch.nn.modules.module": "ember.nn.module",
    "torch.nn.parameter": "ember.nn.parameter", "torch.nn.modules.loss": "ember.nn.loss",
    "torch.nn.modules.linear": "ember.nn.linear", "torch.nn.modules.conv": "ember.nn.conv",
    "torch.nn.modules.activation": "ember.nn.activation",
    "torch.nn.modules.container": "ember.nn.containers",
    "torch.nn.modules.normalization": "ember.nn.normalization",
    "torch.nn.modules.batchnorm": "ember.nn.normalization",
    "torch.nn.modules.dropout": "ember.nn.dropout", "torch.nn.modules.rnn": "ember.nn.rnn",
    "torch.nn.modules.sparse": "ember.nn.sparse",
    "torch.nn.modules.transformer": "ember.nn.transformer",
    "torch.optim.optimizer": "ember.optim.optimizer",
    "torch.serialization": "ember.io",
}


class ModuleGapError(EmberError, ModuleNotFoundError):
    """`import torch.X` where ember has no X."""


def ember_name(fullname: str) -> str:
    return RENAMES.get(fullname) or "ember" + fullname[len("torch"):]


class _Loader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target
        # module_from_spec stamps torch's spec on the ember module: exec gives it back
        self.own_spec = getattr(target, "__spec__", None)

    def create_module(self, spec):
        return self.target

    def exec_module(self, module) -> None:
        if self.own_spec is not None:
            module.__spec__ = self.own_spec


class TorchFinder(importlib.abc.MetaPathFinder):
    """Finds `torch` and `torch.*` in ember."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target = resolve(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(target),
                                              is_package=isinstance(target, types.ModuleType)
                                              and hasattr(target, "__path__"))


def resolve(fullname: str):
    """The ember module (or namespace object, e.g. ember.cuda) for a torch module path."""
    name = ember_name(fullname)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise                 # something the ember module itself imports is missing
    parent, _, child = name.rpartition(".")
    try:
        obj = getattr(importlib.import_module(parent), child)
    except (ImportError, AttributeError):
        obj = None
    if obj is not None:
        return obj                # a namespace object: ember.cuda, ember.backends.mps, ...
    raise ModuleGapError(f"ember has no {fullname} yet (looked for {name}); see `ember "
                         "torch-api` for what ember covers", name=fullname)


_FINDER = TorchFinder()


def install() -> None:
    """Make `import torch` (and its submodules) import ember from now on."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]         # a torch imported earlier would shadow the alias


def uninstall() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n, m in sys.modules.items() if (n == "torch" or n.startswith("torch."))
                 and getattr(m, "__name__", "").startswith("ember")]:
        del sys.modules[name]


def main(argv=None) -> int:
    """python -m ember.torch_alias program.py [args...]: run program.py with torch = ember."""
    import runpy
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m ember.torch_alias program.py [args...]", file=sys.stderr)
        return 2
    install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
