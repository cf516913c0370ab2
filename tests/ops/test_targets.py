"""Which devices the conformance suite tests: every loaded device type, third-party ones
included, and one failure (not one per check) for a plugin that fails to load."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

TOY = '''
"""A working third-party backend: the NumPy table under another device type."""
import numpy as np
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api
from ember.plugins import hookimpl

PLUGIN_API = 1


class ToyBackend:
    name = "toyxp"
    views = "strided"

    def __init__(self):
        self.kernels = array_api.numpy_like(np)
        self.kernels.update(array_api.numpy_extras(np))

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "toy")]

    def from_host(self, array, index=None):
        return array.copy()

    def to_host(self, native):
        return native

    def capabilities(self, index=None):
        return Capabilities(frozenset({"float32", "int64", "bool"}))


@hookimpl
def ember_backends():
    return [ToyBackend()]
'''
BROKEN = 'raise ImportError("libwidget.so.3: cannot open shared object file")\n'


@pytest.fixture(scope="module")
def plugins_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite-plugins")
    for name, body in (("toyxp", TOY), ("widget", BROKEN)):
        (root / f"ember_{name}.py").write_text(textwrap.dedent(body))
        info = root / f"ember_{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: ember-{name}\n"
                                       "Version: 1.0\n")
        (info / "entry_points.txt").write_text(f"[ember.plugins]\n{name} = ember_{name}\n")
    return str(root)


def _run(plugins_path, code, **env):
    full = {k: v for k, v in os.environ.items() if k != "EMBER_TEST_DEVICES"}
    full.update(env, PYTHONPATH=os.pathsep.join(
        [plugins_path] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=full, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_loaded_device_type_is_tested_and_a_broken_plugin_once(plugins_path):
    got = _run(plugins_path, '''
        import json
        from ember.testing import targets
        print(json.dumps([[t.device, t.problem, t.fatal] for t in targets()]))
    ''')
    by_device = {d: (problem, fatal) for d, problem, fatal in got}
    assert by_device["cpu"] == (None, False)
    assert by_device["toyxp:0"] == (None, False)          # third-party: tested by default
    problem, fatal = by_device["widget"]
    assert fatal and "libwidget.so.3" in problem and "ember-widget" in problem
    assert sum(d.startswith("widget") for d in by_device) == 1


def test_the_report_runs_a_third_party_device_and_names_the_broken_plugin(plugins_path):
    got = _run(plugins_path, '''
        import json
        from ember.testing.report import run_suite
        results, problems = run_suite(families=["creation"])
        print(json.dumps({"devices": sorted({r.device for r in results}),
                          "toy": sorted(r.status for r in results if r.device == "toyxp:0"),
                          "problems": [[p.device, p.status, p.message] for p in problems]}))
    ''')
    assert "toyxp:0" in got["devices"] and "passed" in got["toy"]
    broken = [p for p in got["problems"] if p[0] == "widget"]
    assert len(broken) == 1 and broken[0][1] == "failed" and "libwidget" in broken[0][2]


def test_a_requested_device_that_cannot_be_used_is_one_failure(plugins_path):
    got = _run(plugins_path, '''
        import json
        from ember.testing import targets
        print(json.dumps([[t.device, t.problem, t.fatal] for t in targets()]))
    ''', EMBER_TEST_DEVICES="cpu,nosuchdev:0")
    assert got[0] == ["cpu", None, False]
    assert got[1][0] == "nosuchdev:0" and got[1][2] and "nosuchdev" in got[1][1]
    assert len(got) == 2
