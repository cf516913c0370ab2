"""Simulated machines: each gets the right diagnosis and exit code from `ember doctor`, and
the fix commands it prints, run as printed (pip offline, from a local wheelhouse), remove
the problem.  ember is installed from a copy of this source tree, so the fixes name
<tree>/plugins/... as an ember installed from a source tree must.

Where a real install is too heavy (a second CuPy wheel), fixture distributions stand in:
they install the same `cupy` folder as the real wheels do, which is what the conflict is
about.  The times `ember doctor` took are printed at the end (pytest -s shows them)."""
from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import jsonschema
import pytest
from ember import compat_matrix
from machine_kit import (
    Machine,
    build_wheel,
    clean_env,
    copy_source,
    make_venv,
    repack,
    with_dependencies,
    write_distribution,
)

TIMES: dict = {}
SCHEMA = jsonschema.Draft202012Validator(compat_matrix.schema(compat_matrix.REPORT_SCHEMA))
OPENCL_DEPS = ("pyopencl", "pytools", "platformdirs", "siphash24", "typing-extensions")
CUPY_STUB = {"cupy/__init__.py": """
    # a stand-in for a CuPy wheel: the same `cupy` folder, no CUDA behind it
    raise ImportError("fixture CuPy: this stand-in has no CUDA libraries")
"""}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The template environment (ember and the first-party plugins pip-installed from a
    copy of this tree), this environment's distributions to link, and the wheelhouse."""
    top = tmp_path_factory.mktemp("doctor-machines")
    wheels = top / "wheels"
    wheels.mkdir()
    src = copy_source(top / "src")
    base = with_dependencies(["ember"])
    base.pop("ember")
    tools = with_dependencies(["pip", "setuptools"])
    make_venv(top / "template")
    template = Machine(top / "template", clean_env(wheels, top / "template" / "bin"))
    template.link([*base.values(), *tools.values()])
    plugins = " ".join(str(src / "plugins" / p) for p in ("ember-opencl", "ember-cuda12",
                                                          "ember-cuda13"))
    done = template.shell(f"{template.python} -m pip install -q --no-deps -e {src} {plugins}")
    assert done.returncode == 0, done.stdout + done.stderr
    ours = {d.metadata["Name"]: d for d in metadata.distributions(path=[str(template.site)])}
    for name in ("pocl-binary-distribution", "numpy", *OPENCL_DEPS):
        repack(name, wheels)
    build_wheel(wheels, "cupy-cuda12x", "14.2.0", CUPY_STUB)
    numpy1 = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                             "--only-binary", ":all:", "-d", str(top / "numpy1"),
                             "numpy==1.26.4"], capture_output=True, text=True, timeout=300,
                            check=False)
    yield {"top": top, "wheels": wheels, "src": src, "ours": ours,
           "base": [*base.values(), *tools.values()],
           "numpy1": sorted((top / "numpy1").glob("*.whl")) if numpy1.returncode == 0 else []}
    print("\n`ember doctor` seconds per machine:")       # shown with pytest -s
    for label, seconds in TIMES.items():
        print(f"  {seconds:6.2f}  {label}")


def machine(world, name: str, dists=(), ours=(), fakes=()) -> Machine:
    path = world["top"] / name
    make_venv(path)
    m = Machine(path, clean_env(world["wheels"], path / "bin"))
    m.link(world["base"])
    m.link([world["ours"][n] for n in ("ember", *ours)])
    m.link(with_dependencies(dists).values())
    for fake in fakes:
        write_distribution(m.site, **fake)
    return m


def doctor(m: Machine, label: str, *args: str):
    code, report, seconds = m.doctor(*args)
    TIMES[label] = round(seconds, 2)
    SCHEMA.validate(report)
    return code, report


def finding(report: dict, reference: str) -> dict:
    found = {f["reference"]: f for f in report["findings"]}
    assert reference in found, sorted(found)
    return found[reference]


def references(report: dict) -> set:
    return {f["reference"] for f in report["findings"]}


def rows(report: dict) -> dict:
    return {row["type"]: row for row in report["backends"]}


def run_fix(m: Machine, fix: dict) -> None:
    assert fix["commands"], fix
    for command in fix["commands"]:
        done = m.shell(command)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"


def plugin(name: str, version: str, entry: str, source: str, requires=("ember>=0.1,<1",)):
    module = name.replace("-", "_")
    return {"name": name, "version": version, "requires": requires,
            "files": {f"{module}.py": source},
            "entry_points": f"[ember.plugins]\n{entry} = {module}\n"}


def test_ember_alone_installs_opencl_from_its_source_tree(world):
    m = machine(world, "alone")
    code, report = doctor(m, "ember alone", "--no-smoke")
    assert code == 0 and report["install"]["source_tree"] == str(world["src"])
    fix = finding(report, "opencl-not-installed")
    assert fix["commands"][0].endswith(f"install '{world['src']}/plugins/ember-opencl[pocl]'")
    run_fix(m, fix)
    code, report = doctor(m, "ember alone, fixed", "--no-smoke")
    assert rows(report)["opencl"]["status"] == "ok" and code == 0


def test_opencl_without_an_icd_gets_pocl(world):
    m = machine(world, "noicd", dists=OPENCL_DEPS, ours=("ember-opencl",))
    code, report = doctor(m, "+ opencl without ICD", "--no-smoke")
    fix = finding(report, "opencl-no-platform")
    assert code == 1 and fix["severity"] == "warning"
    assert report["opencl_icd"]["vendors"] == [] and "pyopencl" in report["opencl_icd"]["loader"]
    run_fix(m, fix)
    code, report = doctor(m, "+ opencl without ICD, fixed", "--no-smoke")
    assert code == 0 and rows(report)["opencl"]["status"] == "ok"


def test_opencl_with_pocl_is_all_good(world):
    m = machine(world, "pocl", dists=(*OPENCL_DEPS, "pocl-binary-distribution"),
                ours=("ember-opencl",))
    code, report = doctor(m, "+ opencl with PoCL")
    assert code == 0, [f for f in report["findings"] if f["severity"] != "ok"]
    assert {"opencl-ok", "cpu-ok"} <= references(report)
    assert {r["device"]: r["status"] for r in report["smoke"]}["opencl:0"] == "ok"
    assert [v["found"] for v in report["opencl_icd"]["vendors"]] == [True]


def test_cuda12_without_a_gpu_says_so_and_the_fix_removes_it(world):
    m = machine(world, "cuda12", dists=("cupy-cuda12x",), ours=("ember-cuda12",))
    code, report = doctor(m, "cuda12 without GPU", "--no-smoke")
    if report["system"]["nvidia_pci"]:
        pytest.skip("this machine has an NVIDIA GPU: the fix is a driver, not a command")
    fix = finding(report, "cuda-no-driver")
    assert code == 1 and fix["severity"] == "warning"
    toolkit = report["cuda_toolkit"]
    assert toolkit["runtime"].startswith("12.") and "nvrtc" in toolkit["libraries"]
    run_fix(m, fix)
    code, report = doctor(m, "cuda12 without GPU, fixed", "--no-smoke")
    assert code == 0 and rows(report)["cuda"]["status"] == "not installed"


def test_cuda12_and_cuda13_are_undone_in_the_right_order(world):
    stubs = [{"name": w, "version": "14.2.0", "files": CUPY_STUB}
             for w in ("cupy-cuda12x", "cupy-cuda13x")]
    m = machine(world, "cuda12+13", ours=("ember-cuda12", "ember-cuda13"), fakes=stubs)
    code, report = doctor(m, "cuda12 + cuda13", "--no-smoke")
    fix = finding(report, "plugins-claim-same-type")
    assert code == 2 and fix["severity"] == "problem"
    # both plugins and both wheels go first (uninstalling one CuPy wheel deletes files
    # of the other), then one plugin is installed
    first, second = fix["commands"]
    assert all(n in first for n in ("uninstall -y", "ember-cuda12", "ember-cuda13",
                                    "cupy-cuda12x", "cupy-cuda13x"))
    assert second.endswith(f"install {world['src']}/plugins/ember-cuda12")
    run_fix(m, fix)
    code, report = doctor(m, "cuda12 + cuda13, fixed", "--no-smoke")
    assert "plugins-claim-same-type" not in references(report) and code < 2
    assert [p["name"] for p in report["plugins"] if p["name"].startswith("cuda")] == ["cuda12"]


def test_plugin_newer_than_ember_asks_for_the_release_made_for_this_ember(world):
    newer = plugin("ember-opencl", "0.2.0", "opencl", """
        raise AssertionError("a plugin made for another ember must not be imported")
    """, requires=("ember>=0.2,<1", "pyopencl>=2024.2.7"))
    newer["files"] = {"ember_opencl/__init__.py": newer["files"].pop("ember_opencl.py")}
    m = machine(world, "newer", dists=(*OPENCL_DEPS, "pocl-binary-distribution"),
                fakes=[newer])
    code, report = doctor(m, "plugin newer than ember", "--no-smoke")
    fix = finding(report, "plugin-api-incompatible")
    assert code == 2 and "upgrade ember" in fix["fix"] and "install -U ember-opencl" not in (
        fix["fix"] + " ".join(fix["commands"]))
    assert fix["commands"] == [f"{m.python} -m pip install {world['src']}/plugins/ember-opencl"]
    run_fix(m, fix)
    code, report = doctor(m, "plugin newer than ember, fixed", "--no-smoke")
    assert code == 0 and rows(report)["opencl"]["status"] == "ok"


def test_plugin_broken_at_import(world):
    broken = plugin("acme-broken", "1.0.0", "broken", """
        raise ImportError("libacme.so.1: cannot open shared object file")
    """)
    m = machine(world, "broken", fakes=[broken])
    code, report = doctor(m, "plugin broken at import", "--no-smoke")
    fix = finding(report, "plugin-failed")
    assert code == 2 and "libacme.so.1" in fix["detail"]
    run_fix(m, fix)
    code, report = doctor(m, "plugin broken at import, fixed", "--no-smoke")
    assert code == 0


def test_plugin_printing_at_import_and_in_its_probe_keeps_the_json_valid(world):
    chatty = plugin("acme-chatty", "1.0.0", "chatty", """
        import os
        from ember.backend import Probe
        from ember.plugins import hookimpl
        print("acme says hello")                     # Python's stdout
        os.write(1, b"acme writes to fd 1\\n")        # and the file descriptor under it

        class ChattyBackend:
            name = "chatty"
            kernels = {}

            def probe(self):
                print("probing the chatty device")
                return Probe(False, "no chatty device here", "", "chatty-no-device")

            def devices(self):
                return []

            def from_host(self, array, index):
                raise AssertionError("unavailable")

            to_host = capabilities = from_host

        @hookimpl
        def ember_backends():
            return [ChattyBackend()]
    """)
    m = machine(world, "chatty", fakes=[chatty])
    code, report = doctor(m, "plugin printing at import")   # doctor() parsed the JSON
    record = next(p for p in report["plugins"] if p["name"] == "chatty")
    assert "acme says hello" in record["output"]["stdout"]
    assert "acme writes to fd 1" in record["output"]["stdout"]
    assert "probing the chatty device" in rows(report)["chatty"]["output"]["stdout"]
    fix = finding(report, "plugin-prints")
    assert code == 1 and fix["severity"] == "warning"
    run_fix(m, fix)
    code, report = doctor(m, "plugin printing at import, fixed", "--no-smoke")
    assert code == 0 and "plugin-prints" not in references(report)


def test_numpy_too_old(world):
    if not world["numpy1"]:
        pytest.skip("no NumPy 1.x wheel could be fetched from this machine's package index")
    m = machine(world, "numpy1")
    done = m.shell(f"{m.python} -m pip install -q --no-deps {world['numpy1'][0]}")
    assert done.returncode == 0, done.stderr
    code, report = doctor(m, "NumPy too old", "--no-smoke")
    fix = finding(report, "ember-numpy-too-old")
    assert code == 2 and fix["commands"] == [f"{m.python} -m pip install -U 'numpy>=2.0'"]
    # a backend that fails to load on NumPy 1.x points at the same cause
    for other in report["findings"]:
        if other["reference"] == "plugin-failed":
            assert other["commands"] == fix["commands"]
    run_fix(m, fix)
    code, report = doctor(m, "NumPy too old, fixed", "--no-smoke")
    assert code == 0


def test_a_hanging_import_is_cut_off(world):
    hang = plugin("acme-hang", "1.0.0", "hang", """
        import time
        time.sleep(600)
    """)
    m = machine(world, "hang", fakes=[hang])
    code, report = doctor(m, "a hanging import (--timeout 2)", "--no-smoke", "--timeout", "2")
    fix = finding(report, "plugin-hung")
    assert code == 2 and "did not finish within 2 s" in fix["message"]
    assert {p["name"]: p["status"] for p in report["plugins"]}["hang"] == "hung"
    run_fix(m, fix)
    code, report = doctor(m, "a hanging import, fixed", "--no-smoke")
    assert code == 0
