"""The conformance suite covers everything it should: every declared op and kernel, every
nn.functional name, and every decision of docs/semantics.md has a rule."""
from __future__ import annotations

from pathlib import Path

import ember
import ember.nn.functional as F
from ember import ops
from ember.testing import CASES, RULES

DOC = Path(__file__).resolve().parents[2] / "docs" / "semantics.md"


def _covered() -> set:
    return {name for case in CASES for name in case.ops}


def test_every_declared_op_and_kernel_has_a_row():
    covered = _covered()
    # a fused gradient kernel runs in the gradient checks of the op it serves
    missing = sorted(name for name, op in ops.REGISTRY.items() if name not in covered and
                     not (op.kind == "gradient" and op.serves in covered))
    assert not missing, f"declared ops with no conformance row (core/testing/cases/, the " \
                        f"module of the op's family): {missing}"


def test_every_nn_functional_name_has_a_row():
    missing = sorted(set(F.__all__) - _covered())
    assert not missing, f"nn.functional names with no conformance row " \
                        f"(core/testing/cases/nn_*.py): {missing}"


def test_rows_name_real_ops():
    """A row's `ops` names something ember has (a typo would cover nothing)."""
    known = set(ops.REGISTRY) | set(F.__all__) | set(dir(ember)) | {"upsample"}
    def resolves(dotted):           # a namespaced name: ember.signal.windows.hann, ...
        obj = ember
        for part in dotted.split("."):
            obj = getattr(obj, part, None)
        return obj is not None
    unknown = sorted(n for n in {name for case in CASES for name in case.ops} - known
                     if not ("." in n and resolves(n)))
    assert not unknown, f"rows naming no op: {unknown}"


def test_every_semantics_rule_is_written_down():
    text = DOC.read_text()
    missing = [r.name for r in RULES if f"`{r.name}`" not in text]
    assert not missing, f"rules docs/semantics.md does not name: {missing}"


def test_case_names_are_unique():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
