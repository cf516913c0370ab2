"""torch.cuda.set_device / torch.cuda.device / current_device on a GPU type's namespace, with a
real entry-point plugin that serves 'rocm' with two devices (a dist-info folder on
PYTHONPATH, as `pip install` leaves it): a bare type ('rocm', `.to("rocm")`) means the
current index; factories without a device stay on the default device (ember's set_device
used to make every factory create on the GPU, which torch's never does)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

BACKEND = '''
import numpy as np
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.backends import array_api
from ember.plugins import hookimpl

PLUGIN_API = 1


class Backend:
    name = "rocm"
    views = "strided"

    def __init__(self):
        self.kernels = array_api.kernels(np)
        self.kernels.update(array_api.numpy_extras(np))

    def probe(self):
        return Probe(True)

    def devices(self):
        return [DeviceInfo(0, "two-device test GPU"), DeviceInfo(1, "two-device test GPU")]

    def from_host(self, array, index):
        return array.copy()

    def to_host(self, native):
        return native

    def capabilities(self, index):
        return Capabilities(frozenset({"float32", "int64", "bool"}))


@hookimpl
def ember_backends():
    return [Backend()]
'''

SCRIPT = '''
import json, threading, ember
r = ember.rocm
out = {"start": r.current_device()}
r.set_device(1)
out["after_set"] = [r.current_device(), str(ember.zeros(2).device),
                    str(ember.zeros(2, device="rocm").device), str(ember.ones(2).to("rocm").device)]
with r.device(0):
    out["inside"] = [r.current_device(), str(ember.ones(1, device="rocm").device)]
out["restored"] = r.current_device()
with r.device(-1):
    out["negative"] = r.current_device()
with r.device(None):
    out["none"] = r.current_device()
r.set_device(-1)
out["set_negative"] = r.current_device()
seen = []
t = threading.Thread(target=lambda: seen.append(r.current_device()))
t.start(); t.join()
out["other_thread"] = seen[0]
try:
    r.set_device(5)
except ember.DeviceUnavailableError as exc:
    out["bad"] = str(exc)
try:
    with ember.xpu.device(0):
        pass
except ember.DeviceUnavailableError as exc:
    out["absent"] = str(exc)
print(json.dumps(out))
'''


def test_set_device_chooses_what_a_bare_type_means(tmp_path):
    site = tmp_path / "site"
    info = site / "acme_rocm-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rocm\nVersion: 1.0\n"
                                   "Requires-Dist: ember>=0.1,<1\n")
    (info / "entry_points.txt").write_text("[ember.plugins]\nrocm = acme_rocm\n")
    (site / "acme_rocm.py").write_text(BACKEND)
    env = dict(os.environ, PYTHONPATH=str(site), EMBER_DISABLE_PLUGINS="opencl")
    env.pop("EMBER_DEVICE", None)
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["start"] == 0
    assert got["after_set"] == [1, "cpu", "rocm:1", "rocm:1"]
    assert got["inside"] == [0, "rocm:0"]
    assert got["restored"] == 1 and got["negative"] == 1 and got["none"] == 1
    assert got["set_negative"] == 1
    assert got["other_thread"] == 0               # per thread, as torch's current device
    assert "no device rocm:5" in got["bad"]
    assert "no xpu backend" in got["absent"]
