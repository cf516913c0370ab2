"""ember.nn is built from one module per torch.nn.modules family: each name comes from exactly
one family, and every functional form a family defines is in nn.functional.

A new family module is found by listing the package, so it is checked without being named
here; a class or function added to a family and forgotten in an export fails below.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import ember.nn as nn
import ember.nn.functional as F
import pytest

# modules of the package that are not layer families: the namespaces of their own, and the
# shared helpers
NOT_FAMILIES = {"functional", "init", "_util", "utils", "parallel",
                "_torch_names"}     # torch.* spellings of nn functions (torch.conv2d, ...)
# modules whose classes ember.nn exports but whose functions are not functional forms
BASE = {"module", "parameter"}
# public classes a family defines that torch.nn does not export either
UNEXPORTED = {"NonDynamicallyQuantizableLinear",   # torch.nn.modules.linear's, MHA's out_proj
              "LazyModuleMixin"}                   # torch.nn.modules.lazy's


def _families():
    names = sorted(m.name for m in pkgutil.iter_modules(nn.__path__)
                   if m.name not in NOT_FAMILIES)
    return [importlib.import_module(f"ember.nn.{name}") for name in names]


def _defined(module, kind):
    return {name: obj for name, obj in vars(module).items()
            if kind(obj) and obj.__module__ == module.__name__ and not name.startswith("_")}


FAMILIES = _families()


def test_no_name_comes_from_two_families():
    owner = {}
    for module in FAMILIES:
        assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"
        for name in module.__all__:
            assert name not in owner, f"{name} is exported by {owner[name]} and {module.__name__}"
            owner[name] = module.__name__


def test_ember_nn_is_the_families_exports():
    exported = {name for module in FAMILIES for name in module.__all__}
    assert set(nn.__all__) == exported | {"functional", "init", "utils"}
    for module in FAMILIES:
        for name in module.__all__:
            assert getattr(nn, name) is getattr(module, name), f"nn.{name}"


@pytest.mark.parametrize("module", FAMILIES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_public_class_is_exported(module):
    missing = set(_defined(module, inspect.isclass)) - set(module.__all__) - UNEXPORTED
    assert not missing, f"{module.__name__} defines {sorted(missing)} outside its __all__"


@pytest.mark.parametrize("module", [m for m in FAMILIES if m.__name__.rsplit(".", 1)[1]
                                    not in BASE], ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_functional_form_is_in_nn_functional(module):
    for name, fn in _defined(module, inspect.isfunction).items():
        assert getattr(F, name, None) is fn, f"nn.functional.{name} is not {module.__name__}'s"
        assert name in F.__all__, f"{name} is missing from nn.functional.__all__"


def test_nn_functional_defines_nothing():
    for name in F.__all__:
        obj = getattr(F, name)
        assert getattr(obj, "__module__", None) != F.__name__, f"{name} is defined in F"
    assert set(_defined(F, inspect.isfunction)) == set()
