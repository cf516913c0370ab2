"""PyTorch's OpInfo and ModuleInfo samples (torch's own op test database) run through
ember on every testable device: values, shapes, dtypes, gradients and error inputs against
torch (ember.testing.torch_reference).  One test per (op, device) and (module, device).

The default run takes the first DEFAULT_SAMPLES samples (stable seeds) of every op ember
has; `pytest tests/reference -m reference_full` runs every sample, error input and
reference input.  What ember knowingly gets wrong is in skips.toml, one entry per OpInfo
with its reason; the full run fails an entry that passes, so the file cannot go stale."""
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

DEFAULT_SAMPLES = 1
SKIPS = tomllib.loads((Path(__file__).with_name("skips.toml")).read_text())
DEVICES = [t.device for t in targets() if not t.problem]
OPS = {ref.full_name(op): op for op in ref.op_db() if ref.resolve(op) is not None}
MODULES = {"nn." + m.module_cls.__name__: m for m in ref.module_db()
           if ref.resolve_module(m) is not None}


def _skip_reason(table: str, name: str, device: str) -> str | None:
    kind = device.split(":")[0]
    return (SKIPS.get(kind, {}).get(table, {}).get(name)
            or SKIPS.get(table, {}).get(name))


def _check(result, reason, full: bool):
    text = result.failures()
    if reason is None:
        assert not text, f"{result.name} differs from torch:\n{text}"
    elif not text and full:
        pytest.fail(f"{result.name} now passes every sample: remove it from "
                    f"tests/reference/skips.toml ({reason})", pytrace=False)
    else:
        pytest.skip(f"skips.toml: {reason}")


def _params(names):
    return [pytest.param(n, d, id=f"{d}-{n}") for d in DEVICES for n in sorted(names)]


def _sampled_off_cpu(params):
    """Off the CPU a stable 1-in-2 sample (tests/conftest.py `sampled`; all with --full):
    with empty caches each op there builds its own OpenCL programs (~50 s of CPU for all of
    them on a new machine, 10 s warm); the CPU runs every op."""
    return [p if p.values[1] == "cpu" else
            pytest.param(*p.values, id=p.id, marks=pytest.mark.sampled(every=2))
            for p in params]


@pytest.mark.parametrize("name,device", _sampled_off_cpu(_params(OPS)))
def test_opinfo(name, device):
    reason = _skip_reason("ops", name, device)
    if reason is not None:
        pytest.skip(f"skips.toml: {reason}")
    _check(ref.run_op(OPS[name], device, DEFAULT_SAMPLES), None, False)


@pytest.mark.parametrize("name,device", _params(MODULES))
def test_moduleinfo(name, device):
    reason = _skip_reason("modules", name, device)
    if reason is not None:
        pytest.skip(f"skips.toml: {reason}")
    _check(ref.run_module(MODULES[name], device, DEFAULT_SAMPLES), None, False)


@pytest.mark.reference_full
@pytest.mark.parametrize("name,device", _params(OPS))
def test_opinfo_full(name, device):
    result = ref.run_op(OPS[name], device, None)
    ref_result = ref.run_op(OPS[name], device, None, errors=False, reference=True)
    result.samples += ref_result.samples
    result.problem = result.problem or ref_result.problem
    _check(result, _skip_reason("ops", name, device), True)


@pytest.mark.reference_full
@pytest.mark.parametrize("name,device", _params(MODULES))
def test_moduleinfo_full(name, device):
    _check(ref.run_module(MODULES[name], device, None),
           _skip_reason("modules", name, device), True)


def test_skip_file_names_real_ops():
    """Every entry of skips.toml names an OpInfo/ModuleInfo ember has, with a reason; the
    device tables are named after device types."""
    known = {"ops": OPS, "modules": MODULES}
    sections = [("", SKIPS)]
    for key, value in SKIPS.items():
        if key not in known:
            assert isinstance(value, dict) and set(value) <= set(known), \
                f"skips.toml [{key}]: expected a device type holding [{key}.ops]/[{key}.modules]"
            sections.append((key + ".", value))
    for prefix, section in sections:
        for table, names in known.items():
            for name, reason in section.get(table, {}).items():
                assert name in names, f"skips.toml [{prefix}{table}] {name}: no such op ember has"
                assert isinstance(reason, str) and len(reason) > 10, \
                    f"skips.toml [{prefix}{table}] {name}: give a reason"
