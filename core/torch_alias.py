"""`import torch` gives ember: run a PyTorch program unchanged on ember.

    import ember.torch_alias; ember.torch_alias.install()     # then: import torch ...

or `python -m ember.torch_alias program.py [args...]` (`-m module [args...]` runs a module
as `python -m` does: `-m unittest test_x`, `-m pytest -q test_x.py`).  A meta-path finder
maps `torch` to `ember` and `torch.X.Y` to `ember.X.Y` (with the few renames in RENAMES); a
module ember lacks fails with ModuleNotFoundError naming it as an ember gap.  Each ember module
keeps its own name and spec: `torch.nn is ember.nn` afterwards.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

from .errors import ModuleGapError

# torch module paths whose ember counterpart lives elsewhere; torch.nn.modules.X is
# ember.nn.X otherwise (ember's nn families are named after torch.nn.modules' files)
RENAMES = {
    "torch.nn.modules": "ember.nn",
    "torch.nn.modules.container": "ember.nn.containers",
    "torch.nn.modules.batchnorm": "ember.nn.normalization",
    "torch.nn.modules.instancenorm": "ember.nn.normalization",
    "torch.nn.modules.flatten": "ember.nn.linear",
    "torch.nn.modules.utils": "ember.nn._util",      # _single, _pair, _triple, _ntuple
    "torch.nn.parameter": "ember.nn.parameter",
    "torch.optim.optimizer": "ember.optim.optimizer",
    "torch.serialization": "ember.io",
    # the legacy profiler's record_function and profile are torch.profiler's
    "torch.autograd.profiler": "ember.profiler",
    # torch.amp's modules are one module in ember
    "torch.amp.grad_scaler": "ember.amp",
    "torch.amp.autocast_mode": "ember.amp",
    # the DataLoader's helpers: collation lives in one module of ember.utils.data
    "torch.utils.data._utils": "ember.utils.data",
    "torch.utils.data._utils.collate": "ember.utils.data._collate",
}
_NN_MODULES = "torch.nn.modules."
# torch packages whose ember counterpart is a module (torch.amp: ember.amp): a renamed
# child (torch.amp.grad_scaler) is imported through them, so they load as packages
_RENAMED_PARENTS = frozenset(name.rpartition(".")[0] for name in RENAMES)


def ember_name(fullname: str) -> str:
    """The ember module path a torch module path means."""
    if fullname in RENAMES:
        return RENAMES[fullname]
    if fullname.startswith(_NN_MODULES):
        return "ember.nn." + fullname[len(_NN_MODULES):]
    return "ember" + fullname[len("torch"):]


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
        # a package: an ember package, or a namespace object (ember.cuda, whose amp is
        # reached as `import torch.cuda.amp`)
        package = (hasattr(target, "__path__") if isinstance(target, types.ModuleType)
                   else not callable(target)) or fullname in _RENAMED_PARENTS
        return importlib.machinery.ModuleSpec(fullname, _Loader(target), is_package=package)


def resolve(fullname: str):
    """The ember module (or namespace object, e.g. ember.cuda) for a torch module path."""
    name = ember_name(fullname)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if not exc.name or not (name == exc.name or name.startswith(exc.name + ".")):
            raise                 # something the ember module itself imports is missing
    parent, _, child = fullname.rpartition(".")
    try:
        obj = getattr(resolve(parent), child) if parent else None
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


_USAGE = ("usage: python -m ember.torch_alias program.py [args...]\n"
          "       python -m ember.torch_alias -m module [args...]")


def main(argv=None) -> int:
    """python -m ember.torch_alias program.py [args...] (or -m module [args...]): run the
    program, or the module as `python -m module` does, with torch = ember.

    As the interpreter does: a script runs as __main__ with sys.argv[0] its path and its
    folder first on sys.path; a module (`-m unittest test_x`, `-m pytest -q file.py`) runs
    through runpy.run_module(alter_sys=True) with sys.argv[0] the module's file and the
    current folder first on sys.path.  A SystemExit the program raises is its exit status.
    """
    import os
    import runpy
    argv = list(sys.argv[1:] if argv is None else argv)
    module = None
    if argv and argv[0] == "-m":
        if len(argv) < 2:
            print("ember.torch_alias: -m needs a module name\n" + _USAGE, file=sys.stderr)
            return 2
        module, argv = argv[1], argv[1:]
    elif argv and argv[0].startswith("-m") and len(argv[0]) > 2:     # -mpytest, as python
        module, argv = argv[0][2:], [argv[0][2:]] + argv[1:]
    if not argv or (module is None and argv[0].startswith("-")):
        print(_USAGE, file=sys.stderr)
        return 2
    install()
    if module is not None:
        # python -m puts the current folder first on sys.path; runpy sets sys.argv[0] to
        # the module's file (alter_sys) once it has found it
        sys.path.insert(0, os.getcwd())
        sys.argv = argv
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
