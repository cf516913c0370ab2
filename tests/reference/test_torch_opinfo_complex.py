"""PyTorch's OpInfo samples of dtype complex64 run through ember on every testable device
(issue 31): the ops whose OpInfo has complex64 samples and which ember has, values, dtypes
and the gradients of real losses w.r.t. complex inputs (torch's complex upstream
gradients), one test per (op, device).  What ember knowingly answers differently on complex
inputs is in skips_complex.toml, one entry per OpInfo with its reason; the full run fails an
entry that passes, so the file cannot go stale.

`python -m ember.testing --torch-reference --dtype complex64 [--device D]` prints the
figures (names fully right, samples right, the failures grouped)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from ember.testing import targets  # noqa: E402
from ember.testing import torch_reference as ref  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover
    import tomli as tomllib

DTYPE = "complex64"
DEFAULT_SAMPLES = 1
SKIPS = tomllib.loads((Path(__file__).with_name("skips_complex.toml")).read_text())
DEVICES = [t.device for t in targets() if not t.problem]
OPS = {ref.full_name(op): op for op in ref.op_db()
       if ref.resolve(op) is not None and ref.supports(op, DTYPE)}


def _skip_reason(name: str, device: str) -> str | None:
    kind = device.split(":")[0]
    return SKIPS.get(kind, {}).get("ops", {}).get(name) or SKIPS.get("ops", {}).get(name)


def _params():
    # the CPU runs every op; another device a stable sample (tests/conftest.py `sampled`,
    # all with --full): each complex op is also checked there by the conformance suite's
    # complex rows (core/testing/cases/complex_numbers.py), which run on every device
    return [pytest.param(n, d, id=f"{d}-{n}",
                         marks=() if d == "cpu" else (pytest.mark.sampled,))
            for d in DEVICES for n in sorted(OPS)]


@pytest.mark.parametrize("name,device", _params())
def test_opinfo_complex64(name, device):
    reason = _skip_reason(name, device)
    if reason is not None:
        pytest.skip(f"skips_complex.toml: {reason}")
    result = ref.run_op(OPS[name], device, DEFAULT_SAMPLES, dtype=DTYPE)
    text = result.failures()
    assert not text, f"{result.name} ({DTYPE}) differs from torch:\n{text}"


@pytest.mark.reference_full
@pytest.mark.parametrize("name,device", _params())
def test_opinfo_complex64_full(name, device):
    result = ref.run_op(OPS[name], device, None, dtype=DTYPE)
    text = result.failures()
    reason = _skip_reason(name, device)
    if reason is None:
        assert not text, f"{result.name} ({DTYPE}) differs from torch:\n{text}"
    elif not text:
        pytest.fail(f"{result.name} now passes every complex64 sample: remove it from "
                    f"tests/reference/skips_complex.toml ({reason})", pytrace=False)
    else:
        pytest.skip(f"skips_complex.toml: {reason}")


def test_skip_file_names_real_ops():
    """Every entry of skips_complex.toml names an OpInfo with complex64 samples that ember
    has, with a reason."""
    sections = [("", SKIPS)] + [(k + ".", v) for k, v in SKIPS.items() if k != "ops"]
    for prefix, section in sections:
        for name, reason in section.get("ops", {}).items():
            assert name in OPS, f"skips_complex.toml [{prefix}ops] {name}: no such op"
            assert isinstance(reason, str) and len(reason) > 10, \
                f"skips_complex.toml [{prefix}ops] {name}: give a reason"
