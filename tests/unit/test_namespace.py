"""ember.* is written out once: no name bound twice, no namespace built by globals().update,
and Tensor's methods come from one table where a second binding is an error."""
from __future__ import annotations

import collections
import re
from pathlib import Path

import ember
import pytest
from ember import functional, legacy, methods, ops, settings

ROOT = Path(__file__).resolve().parents[2]


def test_ember_all_has_no_duplicates_and_every_name_resolves():
    counts = collections.Counter(ember.__all__)
    assert [n for n, c in counts.items() if c > 1] == []
    assert [n for n in ember.__all__ if not hasattr(ember, n)] == []


def test_each_public_name_comes_from_one_family_module():
    # every module whose __all__ feeds ember.* (through ops, functional, settings, legacy)
    sources = [*(getattr(ops, m) for m in ("creation", "elementwise", "index", "linalg",
                                           "movement", "nn", "reduce", "sampling", "scan",
                                           "sorting")),
               *(getattr(functional, m) for m in ("activation", "complexes", "creation",
                                                  "elementwise", "histograms", "index", "linalg",
                                                  "movement", "nn",
                                                  "products", "random", "reduce", "special",
                                                  "spectral")),
               settings, legacy]
    assert sorted(ops.__all__ + functional.__all__) == sorted(
        n for m in sources[:-2] for n in m.__all__)
    owners = collections.defaultdict(list)
    for module in sources:
        for name in module.__all__:
            owners[name].append(module.__name__)
            assert getattr(ember, name) is getattr(module, name), name
    assert {n: m for n, m in owners.items() if len(m) > 1} == {}


def test_no_namespace_is_built_by_globals_update():
    found = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "core").rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"globals\(\)\.update|globals\(\)\[[^]]*\]\s*=[^=]", line)]
    assert found == []


def test_a_tensor_method_bound_twice_is_an_error():
    with pytest.raises(ImportError, match="Tensor.sum is bound twice"):
        methods.method("sum", lambda self: self)
    with pytest.raises(ImportError, match="Tensor.numel is bound twice"):
        methods.method("numel", lambda self: 0)      # Tensor defines it itself


def test_every_method_in_the_table_is_what_tensor_has():
    for name, fn in methods.METHODS.items():
        assert ember.Tensor.__dict__[name] is fn, name
