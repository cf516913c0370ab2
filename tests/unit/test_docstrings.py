"""Every public callable of every documented namespace has a docstring in the one style
(NumPy; CONTRIBUTING.md, "Habits") with its PyTorch section: the counterpart (``torch.name``, which
must exist in the installed PyTorch) or a sentence starting "None:" saying why there is none.
Every example in those docstrings (``>>>``) runs and prints what it says."""
from __future__ import annotations

import doctest
import importlib
import inspect
import re

import pytest

# the namespaces the API reference documents (docs/api/)
NAMESPACES = ("ember", "ember.nn", "ember.nn.functional", "ember.optim", "ember.utils.data",
              "ember.linalg", "ember.fft", "ember.special", "ember.distributed", "ember.graph",
              "ember.export", "ember.onnx", "ember.array_api", "ember.backend")
SECTION = re.compile(r"^PyTorch\n-------\n(.+?)(?:\n\n|\Z)", re.M | re.S)
TORCH_NAME = re.compile(r"``(torch(?:\.\w+)+)``")


def _public():
    seen = {}
    for ns in NAMESPACES:
        module = importlib.import_module(ns)
        assert hasattr(module, "__all__"), f"{ns} has no __all__"
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj):
                seen.setdefault(id(obj), (f"{ns}.{name}", obj))
    return list(seen.values())


def _own_doc(obj) -> str | None:
    doc = obj.__doc__               # a class's own docstring, never its base's
    if inspect.isclass(obj) and "__doc__" not in vars(obj):
        return None
    return inspect.cleandoc(doc) if doc and doc.strip() else None


def _resolve(path: str):
    parts = path.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[:i + 1]))
            except ImportError:
                return None
    return obj


def test_every_public_callable_has_a_docstring_with_its_pytorch_counterpart():
    missing, no_section, empty = [], [], []
    for where, obj in _public():
        doc = _own_doc(obj)
        if doc is None:
            missing.append(where)
            continue
        found = SECTION.search(doc)
        if found is None:
            no_section.append(where)
        elif not (found.group(1).startswith("None") or TORCH_NAME.search(found.group(1))):
            empty.append(where)
    assert missing == [], f"{len(missing)} public callables without a docstring: {missing}"
    assert no_section == [], (f"{len(no_section)} docstrings without a 'PyTorch' section "
                              f"(its counterpart, or None: why): {no_section}")
    assert empty == [], f"PyTorch sections naming no ``torch.*`` and not 'None: ...': {empty}"


def test_named_pytorch_counterparts_exist():
    pytest.importorskip("torch")
    wrong = []
    for where, obj in _public():
        found = SECTION.search(_own_doc(obj) or "")
        for name in TORCH_NAME.findall(found.group(1) if found else ""):
            if _resolve(name) is None:
                wrong.append(f"{where}: {name}")
    assert wrong == [], f"counterparts PyTorch does not have: {wrong}"


def _examples():
    finder, out = doctest.DocTestFinder(recurse=False), []
    for where, obj in _public():
        for test in finder.find(obj, where, globs={}):
            if test.examples:
                out.append(test)
    return out


EXAMPLES = _examples()


def test_there_are_examples():
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("test", EXAMPLES, ids=[t.name for t in EXAMPLES])
def test_docstring_example_runs(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_every_tensor_method_has_a_docstring():
    """help(ember.Tensor.view) says what it does: each public member of the method table
    and each of Tensor's own (slots and PyTorch-gap placeholders aside)."""
    import ember
    from ember.methods import METHODS
    missing = []
    for name, member in {**vars(ember.Tensor), **METHODS}.items():
        if name.startswith("_") or type(member).__name__ in ("_Gap", "member_descriptor"):
            continue
        target = member.__func__ if isinstance(member, staticmethod) else member
        if not callable(target) and not isinstance(target, property):
            continue
        if not (getattr(target, "__doc__", None) or "").strip():
            missing.append(name)
    assert missing == [], f"Tensor members without a docstring: {missing}"
