"""Plugin code that prints, hangs or crashes cannot break the CLI: captured output, guarded
calls, the child that finds hanging imports; facts of the machine; `compat check --from`
keeping the other machine's plugin rules and findings."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest
from ember import plugins
from ember.tools import envinfo, guard, loading
from ember.tools.cli import main

HANG = "import time\ntime.sleep(600)\n"
CRASH = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"


def test_capture_takes_python_and_file_descriptor_output_in_turns(capfd):
    with guard.Capture() as capture:
        print("from print")
        os.write(1, b"from fd 1\n")
        os.write(2, b"from fd 2\n")
        subprocess.run([sys.executable, "-c", "print('from a child')"], check=True)
        first = capture.take()
        print("later")
        second = capture.take()
    print("after")
    assert first["stdout"].split() == ["from", "print", "from", "fd", "1", "from", "a", "child"]
    assert first["stderr"] == "from fd 2\n"
    assert second == {"stdout": "later\n", "stderr": ""}
    assert capfd.readouterr().out == "after\n"        # restored


def test_a_call_that_does_not_finish_is_reported_not_waited_for():
    release = threading.Event()
    outcome = guard.call(release.wait, timeout=0.05)
    assert not outcome.finished and outcome.result is None
    release.set()
    done = guard.call(lambda: 7)
    assert done.finished and done.result == 7
    failed = guard.call(lambda: 1 / 0)
    assert failed.finished and isinstance(failed.error, ZeroDivisionError)


def _site(tmp_path, modules: dict):
    """Entry points for `modules` (name -> source) in a folder on PYTHONPATH."""
    site = tmp_path / "site"
    for name, source in modules.items():
        info = site / f"acme_{name}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: acme-{name}\n"
                                       "Version: 1.0\nRequires-Dist: ember>=0.1,<1\n")
        (info / "entry_points.txt").write_text(f"[ember.plugins]\n{name} = acme_{name}\n")
        (site / f"acme_{name}.py").write_text(textwrap.dedent(source))
    return site


@pytest.fixture
def troublemakers(tmp_path, monkeypatch):
    site = _site(tmp_path, {"hang": HANG, "crash": CRASH,
                            "chatty": "print('hello from chatty')\n"})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    plugins._reset_for_tests()
    yield site
    monkeypatch.undo()
    for name in ("acme_hang", "acme_crash", "acme_chatty"):
        sys.modules.pop(name, None)
    plugins._reset_for_tests()


def test_preflight_finds_the_plugins_that_hang_or_crash(troublemakers):
    found = loading.preflight(timeout=1.0)
    assert found["hang"] == "hung"
    assert found["crash"].startswith("crashed") and "signal 9" in found["crash"]
    assert "chatty" not in found


def test_doctor_json_survives_hanging_crashing_and_printing_plugins(troublemakers, capsys):
    code = main(["doctor", "--json", "--no-smoke", "--timeout", "1"])
    out = capsys.readouterr().out
    report = json.loads(out)                        # nothing but the report on stdout
    assert code == report["exit_code"] == 2
    status = {p["name"]: p for p in report["plugins"]}
    assert status["hang"]["status"] == status["crash"]["status"] == "hung"
    assert "did not finish within 1 s" in status["hang"]["error"]
    assert "signal 9" in status["crash"]["error"]
    assert status["chatty"]["output"]["stdout"] == "hello from chatty\n"
    found = {f["reference"]: f for f in report["findings"]}
    assert found["plugin-hung"]["commands"][0].endswith("uninstall -y acme-hang")
    assert found["plugin-prints"]["severity"] == "warning"
    assert "EMBER_DISABLE_PLUGINS" not in os.environ       # the block is lifted afterwards


def test_devices_does_not_wait_for_a_hanging_plugin(troublemakers, capsys):
    assert main(["devices", "--json", "--timeout", "1"]) == 0
    rows = {row["plugin"]: row for row in json.loads(capsys.readouterr().out)["backends"]}
    assert rows["hang"]["status"] == "hung"


def test_compat_check_from_a_report_keeps_that_machines_plugin_rules(fake_plugins, tmp_path,
                                                                     capsys):
    # a report made where the acme-gadget plugin is installed ...
    done = subprocess.run([sys.executable, "-m", "ember.tools.cli", "doctor", "--json",
                           "--no-smoke"], capture_output=True, text=True, timeout=300,
                          check=False)
    report = json.loads(done.stdout)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    # ... checked on a machine without it
    sys.path.remove(str(fake_plugins))
    os.environ.pop("PYTHONPATH")
    plugins._reset_for_tests()
    assert not any(r.name == "gadget" for r in plugins.records())
    code = main(["compat", "check", "--from", str(path)])
    out = " ".join(capsys.readouterr().out.split())
    assert "gadget-firmware-too-old" in out and "gadget-fan" in out and code == 2


def test_pci_gpus_tell_a_missing_driver_from_a_missing_gpu(tmp_path):
    for name, vendor, klass in (("0000:01:00.0", "0x10de", "0x030200"),   # NVIDIA 3D controller
                                ("0000:02:00.0", "0x10de", "0x040300"),   # its audio function
                                ("0000:03:00.0", "0x1002", "0x030000"),   # an AMD GPU
                                ("0000:00:14.0", "0x1022", "0x060000")):  # a host bridge
        device = tmp_path / name
        device.mkdir()
        (device / "vendor").write_text(vendor + "\n")
        (device / "class").write_text(klass + "\n")
    assert envinfo.pci_gpus(str(tmp_path)) == {"nvidia_pci": 1, "amd_pci": 1}
    assert envinfo.pci_gpus(str(tmp_path / "absent")) == {"nvidia_pci": 0, "amd_pci": 0}


def test_os_cpu_and_memory_from_their_files(tmp_path):
    (tmp_path / "os-release").write_text('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12"\n')
    (tmp_path / "cpuinfo").write_text("processor : 0\nmodel name\t: AMD EPYC 7B13\n")
    (tmp_path / "meminfo").write_text("MemTotal:       16384 kB\n")
    assert envinfo.os_name(str(tmp_path / "os-release")).startswith("Debian GNU/Linux 12 (")
    assert envinfo.cpu_model(str(tmp_path / "cpuinfo")) == "AMD EPYC 7B13"
    assert envinfo.memory_bytes(str(tmp_path / "meminfo")) == 16384 * 1024
    facts = envinfo.system()
    assert facts["libc"] and facts["cpu"] and facts["cores"] >= 1


def test_opencl_icd_vendor_files(tmp_path):
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "good.icd").write_text(str(tmp_path / "libgood.so") + "\n")
    (tmp_path / "libgood.so").write_text("")
    (vendors / "gone.icd").write_text("/nowhere/libgone.so\n")
    info = envinfo.opencl_icd({"OCL_ICD_VENDORS": str(vendors)})
    assert info["vendor_dirs"][0] == str(vendors)
    found = {os.path.basename(v["file"]): v["found"] for v in info["vendors"]}
    assert found["good.icd"] is True and found["gone.icd"] is False
    assert envinfo.packages()["numpy"]
