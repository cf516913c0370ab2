"""PyTorch's OpInfo samples of int64, bool and float64 run through ember: the float32 run
(test_torch_opinfo.py) never hands an op an integer or a double, and the first run of these
found silent wrong answers it could not (Chebyshev T_n at +-1, integer average pooling and
addmv's scalars computed in floating point, hardtanh of integers turned float,
div(int_tensor, int, rounding_mode="trunc") raising).  Values (torch's tolerance for the
dtype), dtypes and, for float64, gradients; one test per (dtype, op, device).  What ember
knowingly answers differently is in skips_dtypes.toml with its reason; the full run fails
an entry that passes.

The CPU runs a stable half of the ops of each dtype, another device one in eight
(tests/conftest.py `sampled`: the same tests on every machine); --full runs all, and
`python -m ember.testing --torch-reference --dtype int64` (bool, float64) prints the
figures."""
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

DTYPES = ("int64", "bool", "float64")
SKIPS = tomllib.loads((Path(__file__).with_name("skips_dtypes.toml")).read_text())
DEVICES = [t.device for t in targets() if not t.problem]
OPS = {dt: {ref.full_name(op): op for op in ref.op_db()
            if ref.resolve(op) is not None and ref.supports(op, dt)} for dt in DTYPES}


def _skip_reason(dtype: str, name: str, device: str) -> str | None:
    kind = device.split(":")[0]
    return SKIPS.get(dtype, {}).get("ops", {}).get(name) or \
        SKIPS.get(kind, {}).get("ops", {}).get(name)


def _params():
    out = []
    for dt in DTYPES:
        for d in DEVICES:
            for n in sorted(OPS[dt]):
                marks = (pytest.mark.sampled(every=2 if d == "cpu" else 8),)
                out.append(pytest.param(dt, n, d, id=f"{dt}-{d}-{n}", marks=marks))
    return out


def _skip_without(dtype: str, device: str) -> None:
    """A device without the dtype (an OpenCL device lacking doubles) has nothing to run."""
    import ember
    try:
        ember.zeros(1, dtype=getattr(ember, dtype), device=device)
    except ember.DtypeNotSupportedError as exc:
        pytest.skip(f"{device} has no {dtype}: {exc}")


@pytest.mark.parametrize("dtype,name,device", _params())
def test_opinfo_dtype(dtype, name, device):
    reason = _skip_reason(dtype, name, device)
    if reason is not None:
        pytest.skip(f"skips_dtypes.toml: {reason}")
    _skip_without(dtype, device)
    result = ref.run_op(OPS[dtype][name], device, 1, dtype=dtype)
    text = result.failures()
    assert not text, f"{result.name} ({dtype}) differs from torch:\n{text}"


@pytest.mark.reference_full
@pytest.mark.parametrize("dtype,name,device", _params())
def test_opinfo_dtype_full(dtype, name, device):
    _skip_without(dtype, device)
    result = ref.run_op(OPS[dtype][name], device, None, dtype=dtype)
    text = result.failures()
    reason = _skip_reason(dtype, name, device)
    if reason is None:
        assert not text, f"{result.name} ({dtype}) differs from torch:\n{text}"
    elif not text:
        pytest.fail(f"{result.name} now passes every {dtype} sample: remove it from "
                    f"tests/reference/skips_dtypes.toml ({reason})", pytrace=False)
    else:
        pytest.skip(f"skips_dtypes.toml: {reason}")
