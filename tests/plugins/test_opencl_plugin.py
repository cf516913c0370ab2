"""The OpenCL plugin: lazy import, device discovery, the probe's reasons under real failure
conditions, and pip install / uninstall making `opencl:0` appear and disappear."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import ember
import pytest
from ember import plugins
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, env=None, python=sys.executable) -> dict:
    """Run code in a fresh interpreter; its last stdout line is JSON."""
    done = subprocess.run([str(python), "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, check=False,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


PROBE = """
    import json, sys
    from ember.backends.opencl import ember_backends
    backend = ember_backends()[0]
    p = backend.probe()
    print(json.dumps({"available": p.available, "reason": p.reason, "fix": p.fix,
                      "reference": p.reference, "devices": len(backend.devices())}))
"""


def test_import_touches_no_device():
    seen = run_python("""
        import json, sys
        import ember.backends.opencl as m
        backend = m.ember_backends()[0]
        compat = m.ember_compat()
        print(json.dumps({"pyopencl": "pyopencl" in sys.modules, "kernels": len(backend.kernels),
                          "rules": [r["id"] for r in compat["rule"]]}))
    """)
    assert seen["pyopencl"] is False
    assert seen["kernels"] >= len(ember.ops.OPS)
    assert "ember-opencl-pyopencl-floor" in seen["rules"]


def test_compat_data_fits_the_schema():
    import jsonschema
    from ember import compat_matrix
    from ember.backends.opencl.compat import DATA
    jsonschema.validate(DATA, compat_matrix.schema())


def test_devices_and_capabilities(opencl_device):
    import pyopencl as cl
    backend = ember.device(opencl_device).backend
    infos = backend.devices()
    # every device of every platform, in the order `discover` gives on each call
    total = sum(len(p.get_devices()) for p in cl.get_platforms())
    assert len(infos) == total and [i.index for i in infos] == list(range(total))
    assert [i.name for i in infos] == [i.name for i in backend.devices()]
    for info in infos:
        assert info.kind in ("cpu", "gpu", "accelerator")
        assert info.version.startswith("OpenCL ") and info.memory > 0 and info.platform
        caps = backend.capabilities(info.index)
        assert {"bool", "int64", "float32"} <= caps.dtypes
    assert str(ember.devices()[-1]).startswith("opencl:")
    probe = backend.probe()
    assert probe.available and probe.details["pyopencl"] == cl.VERSION_TEXT


def test_probe_without_pyopencl():
    seen = run_python("import sys; sys.modules['pyopencl'] = None\n" + textwrap.dedent(PROBE))
    assert not seen["available"] and seen["reference"] == "opencl-no-pyopencl"
    assert seen["reason"] == "pyopencl is not installed"
    assert "pip install" in seen["fix"] and seen["devices"] == 0


def test_probe_without_platform(tmp_path):
    # the ICD loader pointed at a vendors directory that does not exist: no driver at all
    seen = run_python(PROBE, env={"OCL_ICD_VENDORS": str(tmp_path / "no-vendors")})
    assert not seen["available"] and seen["reference"] == "opencl-no-platform", seen
    assert "no OpenCL platform" in seen["reason"]
    assert "pip install pocl-binary-distribution" in seen["fix"]


def test_probe_platform_without_devices(opencl_device):
    import pyopencl as cl
    if not any("Portable Computing Language" in p.name for p in cl.get_platforms()) or len(
            cl.get_platforms()) > 1:
        pytest.skip("needs PoCL as the only platform (POCL_DEVICES hides its devices)")
    seen = run_python(PROBE, env={"POCL_DEVICES": "no-such-device-type"})
    assert not seen["available"] and seen["reference"] == "opencl-no-device", seen
    assert "Portable Computing Language" in seen["reason"] and "no devices" in seen["reason"]


def test_probe_reports_build_failure_with_log(opencl_device):
    import pyopencl as cl
    if len(cl.get_platforms()) > 1 or "Portable" not in cl.get_platforms()[0].name:
        pytest.skip("needs PoCL as the only platform (POCL_EXTRA_BUILD_FLAGS breaks builds)")
    seen = run_python(PROBE, env={"POCL_EXTRA_BUILD_FLAGS": "-no-such-flag"})
    assert not seen["available"] and seen["reference"] == "opencl-build-failed", seen
    assert "-no-such-flag" in seen["reason"]          # the compiler's own log


def test_kernel_build_error_carries_the_log(opencl_device):
    from ember.backends.opencl.runtime import KernelBuildError
    rt = ember.device(opencl_device).backend.runtime(0)
    with pytest.raises(KernelBuildError, match="undeclared|use of undeclared") as info:
        rt.kernel(("test-broken",), lambda: "__kernel void k() { undeclared_thing = 1; }", "k")
    assert isinstance(info.value, ember.EmberError) and isinstance(info.value, RuntimeError)


def _venv_without_plugin(root: Path) -> Path:
    """A venv seeing this interpreter's packages except ember-opencl: every entry of
    site-packages is linked into a shared folder, the plugin's files left out."""
    site = Path(sysconfig.get_paths()["purelib"])
    shared = root / "shared"
    shared.mkdir()
    for entry in site.iterdir():
        if entry.name.startswith("ember_opencl") or entry.suffix == ".pth":
            continue
        (shared / entry.name).symlink_to(entry)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True, timeout=120)
    python = root / "venv" / "bin" / "python"
    venv_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig"
                                     ".get_paths()['purelib'])"], capture_output=True,
                                    text=True, check=True).stdout.strip())
    # '00-' sorts first: the shared folder is on sys.path before ember's editable finder runs
    (venv_site / "00-shared.pth").write_text(str(shared) + "\n")
    for pth in site.glob("__editable__*.pth"):
        if "ember_opencl" not in pth.name and "ember-opencl" not in pth.name:
            shutil.copy(pth, venv_site / pth.name)
    return python


VISIBLE = """
    import json
    import ember
    from ember import plugins
    out = {"devices": [str(d) for d in ember.devices()]}
    try:
        ember.zeros(2, device="opencl:0")
        out["error"] = None
    except ember.DeviceUnavailableError as exc:
        out["error"] = str(exc)
    rec = {r.name: r for r in plugins.records()}.get("opencl")
    out["plugin"] = None if rec is None else [rec.distribution, rec.status, rec.requires_ember]
    print(json.dumps(out))
"""


def _without_the_plugin(python) -> dict:
    before = run_python(VISIBLE, python=python)
    assert not any(d.startswith("opencl") for d in before["devices"]) and before["plugin"] is None
    assert "no installed plugin provides it" in before["error"]
    assert "pip install 'ember-opencl[pocl]'" in before["error"]
    return before


def test_without_the_plugin_opencl_is_absent_and_says_how_to_install(tmp_path):
    _without_the_plugin(_venv_without_plugin(tmp_path))


# The round trip through pip (~16 s: a build, an install, an uninstall, three interpreters)
# runs with --full.  By default its parts are covered: the absent plugin's error just above;
# pip installing plugins/ember-opencl into a fresh venv, after which the doctor finds
# opencl usable, by tests/cli/test_fixes.py::test_ember_alone_installs_opencl_from_its_source_tree;
# pip uninstalling a plugin, after which its device type is "not installed", by
# tests/cli/test_fixes.py::test_cuda12_without_a_gpu_says_so_and_the_fix_removes_it.
@pytest.mark.full
@pytest.mark.slow
def test_pip_install_and_uninstall(opencl_device, tmp_path):
    python = _venv_without_plugin(tmp_path)
    before = _without_the_plugin(python)

    source = tmp_path / "ember-opencl"           # build from a copy: no egg-info in the tree
    shutil.copytree(ROOT / "plugins" / "ember-opencl", source)
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--no-input",
           "--disable-pip-version-check", "-q"]
    done = subprocess.run([*pip, "install", "--no-deps", "--no-build-isolation", str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = run_python(VISIBLE, python=python)
    assert "opencl:0" in installed["devices"] and installed["error"] is None
    assert installed["plugin"][:2] == ["ember-opencl", "loaded"]
    assert SpecifierSet(installed["plugin"][2]) == SpecifierSet(plugins.PLUGIN_API_RANGE)

    done = subprocess.run([*pip, "uninstall", "-y", "ember-opencl"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    after = run_python(VISIBLE, python=python)
    assert after == before
