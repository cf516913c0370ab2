"""The proof that ember.testing is a safety net: a third-party backend assembled the way a
stranger would from the README (array_api.kernels(array_api_compat.torch) plus the
LIBRARY_SPECIFIC kernels in torch) fails the suite on each of its real divergences from the
CPU backend, and a variant whose kernels are torch's own functions fails the semantics rules.

The plugin is a distribution on a temporary path (a module and its .dist-info with the
`ember.plugins` entry point): the subprocess finds it like an installed one, and nothing is
installed into the environment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

PLUGIN = '''
"""Two backends over PyTorch CPU tensors, as a stranger writes them from the README."""
import numpy as np
import torch
from array_api_compat import torch as xp
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api
from ember.plugins import hookimpl

PLUGIN_API = 1
DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                    "bfloat16", "float32", "float64"})


def slice_(x, *, index):
    # torch slices take positive steps only: a negative step becomes a flipped copy (and
    # the backend still says its views are strided: writes through them are lost)
    parts, flips = [], []
    for d, s in enumerate(index):
        if isinstance(s, slice) and s.step is not None and s.step < 0:
            start, stop, step = s.indices(x.shape[d])
            n = len(range(start, stop, step))
            first = start + step * (n - 1) if n else 0
            parts.append(slice(first, first - step * (n - 1) + 1 if n else 0, -step))
            flips.append(d)
        else:
            parts.append(s)
    out = x[tuple(parts)]
    return torch.flip(out, flips) if flips else out


def index_put(x, index, values):
    out = x.clone()
    out[index] = values
    return out


def assign(dst, src):
    dst[...] = src


class TorchBackend:
    name = "torchxp"
    views = "strided"

    def __init__(self):
        self.kernels = array_api.kernels(xp)
        self.kernels.update(
            slice=slice_, erf=torch.erf, index_put=index_put, assign=assign,
            index_add=lambda x, index, src, *, axis: x.index_add(axis, index, src),
            scatter_add=lambda x, index, src, *, axis: x.scatter_add(axis, index, src))

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "PyTorch CPU tensors")]

    def from_host(self, array, index=None):
        return torch.from_numpy(np.array(array, copy=True))

    def to_host(self, native):
        return native.detach().numpy()

    def capabilities(self, index=None):
        return Capabilities(DTYPES)


class RawTorchBackend(TorchBackend):
    """The same, with torch's own functions where they have the op's name."""

    name = "torchraw"

    def __init__(self):
        super().__init__()
        self.kernels.update(sign=torch.sign, floor_divide=torch.floor_divide,
                            remainder=torch.remainder, pow=torch.pow)


@hookimpl
def ember_backends():
    return [TorchBackend(), RawTorchBackend()]
'''

# divergence -> (a check that catches it, what its message must say)
CAUGHT = {
    "bfloat16 tensors cannot be created (from_host of ml_dtypes arrays)": ("neg", "bfloat16"),
    "bfloat16 creation by full": ("full:half_floats", "bfloat16"),
    "bfloat16 casts (the table hands torch a NumPy dtype)": ("cast:half_floats", "bfloat16"),
    "bfloat16 reductions": ("rule:half_floats_accumulate_in_float32", "bfloat16"),
    "negative steps in slice_scatter": ("slice_scatter", "step"),
    "writes through negative-step views are lost": (
        "rule:writes_through_views_reach_the_base", "negative_step"),
    "in-place methods on negative-step views are lost": (
        "rule:inplace_methods_on_views_reach_the_base", "negative_step"),
    "a negative-step view does not see later writes": (
        "rule:views_see_later_writes_to_their_base", "x[::-1]"),
    "setitem through negative steps": ("index_put", ""),
    "random programs with negative-step views and setitem": ("program:1", "program 1"),
    "uint8 + 300 wraps instead of raising": ("rule:python_int_out_of_range_raises",
                                            "expected an error"),
    "uint8 == -1 compares the wrapped int": ("rule:comparison_with_any_python_int_is_exact",
                                             "uint8"),
    # (bool - bool: the core refuses it before any backend runs, as torch refuses every
    # subtraction with a bool operand, so a backend's own error no longer shows)
}
CAUGHT_RAW = {
    "sign(nan) is 0": ("rule:sign_of_nan_is_nan", "sign(nan)"),
    "integer // 0 raises RuntimeError, not ZeroDivisionError": (
        "rule:integer_division_by_zero_raises", "ZeroDivisionError"),
    "integer ** negative: RuntimeError for a number exponent, 0 for a tensor one": (
        "rule:integer_negative_power_raises", "negative"),
}


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("torch-plugin")
    (root / "ember_torchxp.py").write_text(textwrap.dedent(PLUGIN))
    info = root / "ember_torchxp-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ember-torchxp\nVersion: 1.0\n"
                                   "Requires-Dist: ember>=0.1,<0.2\n")
    (info / "entry_points.txt").write_text("[ember.plugins]\ntorchxp = ember_torchxp\n")
    return str(root)


def _report(plugin_path, *args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [plugin_path] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-m", "ember.testing", "--report", "--json", *args],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode in (0, 1), out.stderr
    results: dict = {}
    for r in json.loads(out.stdout)["results"]:
        results.setdefault(r["device"], {})[r["name"]] = r
    return results


def _divergences(results, device, expected):
    cpu, other = results["cpu"], results[device]
    missed = []
    for what, (name, says) in expected.items():
        # the random programs compare with the CPU backend, so they do not run on it
        r, base = other[name], cpu.get(name, {"status": "passed"})
        if not (r["status"] == "failed" and says in r["message"] and
                base["status"] == "passed"):
            missed.append(f"{what}: {name} on {device} {r['status']} ({r['message'][:200]}),"
                          f" on cpu {base['status']}")
    return missed


SANE = ("add:broadcast", "matmul:batched_broadcast", "conv2d:stride_padding",
        "cross_entropy:weight_ignore", "rule:integer_overflow_wraps",
        "rule:integer_division_by_zero_raises")


def _families(*names) -> list[str]:
    """`--family` arguments for the families of these checks (the report runs those)."""
    from ember.testing import all_checks
    family = {c.name: c.family for c in all_checks()}
    return [a for f in sorted({family[n] for n in names}) for a in ("--family", f)]


def test_the_suite_catches_each_divergence_of_a_torch_backend(plugin_path):
    # the families that hold the catching checks and the sanity rows (most of the suite;
    # the rest, complex/reduce/activation/pooling/..., cannot see these divergences)
    results = _report(plugin_path, "--device", "cpu", "--device", "torchxp:0",
                      *_families(*(name for name, _ in CAUGHT.values()), *SANE))
    missed = _divergences(results, "torchxp:0", CAUGHT)
    assert not missed, "divergences the suite did not catch:\n" + "\n".join(missed)
    # the backend is not broken wholesale: what it does like the CPU passes
    torch_results = results["torchxp:0"]
    for name in SANE:
        assert torch_results[name]["status"] == "passed", torch_results[name]


def test_torch_functions_as_kernels_fail_the_semantics_rules(plugin_path):
    results = _report(plugin_path, "--device", "cpu", "--device", "torchraw:0",
                      "--family", "integer", "--family", "nan")
    missed = _divergences(results, "torchraw:0", CAUGHT_RAW)
    assert not missed, "divergences the suite did not catch:\n" + "\n".join(missed)
