"""Third-party backends arrive with `pip install`: a working one is usable, a broken one is
reported without breaking `import ember`, an incompatible one is never imported."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

PLUGINS = {
    "ember-toy": ("toy", "ember>=0.1,<0.2", '''
        """A toy backend: the array-API table over NumPy under another device type."""
        import numpy as np
        from ember.backend import Capabilities, DeviceInfo, Probe
        from ember.backends import array_api
        from ember.plugins import hookimpl

        class ToyBackend:
            name = "toy"
            def __init__(self):
                self.kernels = array_api.kernels(np)
                self.kernels.update(array_api.numpy_extras(np))
            def probe(self):
                return Probe(True)
            def devices(self):
                return [DeviceInfo(0, "toy device"), DeviceInfo(1, "toy device 2")]
            def from_host(self, array, index):
                return array.copy()
            def to_host(self, native):
                return native
            def capabilities(self, index):
                return Capabilities(frozenset({"float32", "int64", "bool"}))

        @hookimpl
        def ember_backends():
            return [ToyBackend()]
    '''),
    "ember-broken": ("broken", "ember>=0.1", '''
        raise ImportError("this plugin is broken on purpose (libfoo.so missing)")
    '''),
    "ember-future": ("future", "ember>=9.0", '''
        raise RuntimeError("an incompatible plugin must never be imported")
    '''),
}


def _write(root, dist, entry, requires, body):
    pkg = dist.replace("-", "_")
    d = root / dist
    (d / pkg).mkdir(parents=True)
    (d / pkg / "__init__.py").write_text(textwrap.dedent(body))
    (d / "pyproject.toml").write_text(textwrap.dedent(f'''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{dist}"
        version = "1.0"
        dependencies = ["{requires}"]
        [project.entry-points."ember.plugins"]
        {entry} = "{pkg}"
        [tool.setuptools]
        packages = ["{pkg}"]
    '''))
    return d


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugins")
    dirs = [str(_write(root, dist, *spec)) for dist, spec in PLUGINS.items()]
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
           "--no-index", *dirs]
    subprocess.run(pip, check=True, capture_output=True, text=True)
    try:
        yield
    finally:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", *PLUGINS],
                       capture_output=True)


def _run(code: str, env=None) -> dict:
    import os
    full = dict(os.environ, **(env or {}))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=full, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_third_party_backend_is_usable(installed):
    got = _run('''
        import json, ember
        x = ember.arange(6, dtype=ember.float32, device="toy:1").reshape(2, 3)
        y = (x * 2 + 1).sum(1)
        print(json.dumps({"device": str(y.device), "values": y.tolist(),
                          "devices": [str(d) for d in ember.devices()]}))
    ''')
    assert got["device"] == "toy:1"
    assert got["values"] == [9.0, 27.0]
    assert "toy:0" in got["devices"] and "toy:1" in got["devices"]


def test_capabilities_are_enforced_before_kernels(installed):
    got = _run('''
        import json, ember
        try:
            ember.ones(2, dtype=ember.float64, device="toy")
            print(json.dumps({"error": None}))
        except ember.DtypeNotSupportedError as e:
            print(json.dumps({"error": str(e)}))
    ''')
    assert "does not support float64" in got["error"] and "toy:0" in got["error"]


def test_broken_plugin_never_breaks_ember(installed):
    got = _run('''
        import json, ember
        t = ember.ones(2) + 1                 # the CPU works
        recs = {r.name: r for r in ember.plugins.load_all()}
        b = recs["broken"]
        print(json.dumps({"sum": t.sum().item(), "status": b.status, "error": b.error,
                          "dist": b.distribution, "version": b.version}))
    ''')
    assert got["sum"] == 4.0
    assert got["status"] == "failed"
    assert "libfoo.so missing" in got["error"] and "Traceback" in got["error"]
    assert got["dist"] == "ember-broken" and got["version"] == "1.0"


def test_incompatible_plugin_is_reported_not_imported(installed):
    got = _run('''
        import json, sys, ember
        recs = {r.name: r for r in ember.plugins.load_all()}
        f = recs["future"]
        print(json.dumps({"status": f.status, "error": f.error,
                          "imported": "ember_future" in sys.modules}))
    ''')
    assert got["status"] == "incompatible" and not got["imported"]
    assert "ember>=9.0" in got["error"] and "pip install -U ember-future" in got["error"]


def test_disable_plugins_env(installed):
    got = _run('''
        import json, ember
        try:
            ember.ones(1, device="toy")
            print(json.dumps({"error": None}))
        except ember.DeviceUnavailableError as e:
            print(json.dumps({"error": str(e)}))
    ''', env={"EMBER_DISABLE_PLUGINS": "toy"})
    assert "disabled" in got["error"] and "EMBER_DISABLE_PLUGINS" in got["error"]


def test_import_ember_loads_no_plugin(installed):
    got = _run('''
        import json, sys, ember
        heavy = [m for m in ("ember_toy", "ember.backends.cpu", "cupy", "pyopencl", "torch")
                 if m in sys.modules]
        print(json.dumps({"heavy": heavy}))
    ''')
    assert got["heavy"] == []
