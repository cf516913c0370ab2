"""Third-party backends arrive with `pip install`: a working one is usable; a broken, refused,
invalid or disabled one is reported (its record, its device type's error, `ember devices`,
`ember doctor`) without breaking `import ember`; an out-of-range one is never imported."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


def _backend(name: str, extra: str = "", kernels: str = "") -> str:
    """Source of a small backend class over NumPy's array-API table."""
    return textwrap.dedent(f'''
        import numpy as np
        from ember.backend import Capabilities, DeviceInfo, Probe
        from ember.backends import array_api
        from ember.plugins import hookimpl

        class Backend:
            name = "{name}"
            views = "strided"           # NumPy's views, negative steps too
            def __init__(self):
                self.kernels = array_api.kernels(np)
                self.kernels.update(array_api.numpy_extras(np))
                {kernels or "pass"}
            def probe(self):
                return Probe(True)
            def devices(self):
                return [DeviceInfo(0, "{name} device"), DeviceInfo(1, "{name} device 2")]
            def from_host(self, array, index):
                return array.copy()
            def to_host(self, native):
                return native
            def capabilities(self, index):
                return Capabilities(frozenset({{"float32", "int64", "bool"}}))
        {textwrap.indent(textwrap.dedent(extra), "        ").strip()}

        @hookimpl
        def ember_backends():
            return [Backend()]
    ''')


# distribution -> (its requirement on ember, {entry point: (module, source)})
PLUGINS = {
    "ember-toy": ("ember>=0.1,<1", {"toy": ("ember_toy", "PLUGIN_API = 1\n" + _backend("toy"))}),
    "ember-future": ("ember>=9.0", {"future": ("ember_future", '''
        raise RuntimeError("an incompatible plugin must never be imported")
    ''')}),
    "ember-faulty": ("ember>=0.1,<1", {
        "broken": ("faulty_broken", '''
            raise ImportError("this plugin is broken on purpose (libfoo.so missing)")
        '''),
        # a kernel name with a typo: refused, with the closest declared name
        "typo": ("faulty_typo", "PLUGIN_API = 1\n" + _backend(
            "typo", kernels='self.kernels["matmull"] = self.kernels.pop("matmul")')),
        # no to_host, and a views value that is not one of the three
        "nomember": ("faulty_nomember", "PLUGIN_API = 1\n" + _backend("nomember", extra='''
            del Backend.to_host
            Backend.views = "sideways"
        ''')),
        # made for a plugin API this ember does not speak: its hooks are never called
        "newapi": ("faulty_newapi", '''
            from ember.plugins import hookimpl
            PLUGIN_API = 2

            @hookimpl
            def ember_backends():
                raise AssertionError("a plugin for another plugin API must not be used")
        '''),
        # no PLUGIN_API (taken as 1) and a misspelt optional member: loaded, with a warning
        "odd": ("faulty_odd", _backend("odd", extra='''
            Backend.synchronise = lambda self, index=None: None
        ''')),
        # a kernels property (checked when first used, not at load) with a bad entry
        "lazy": ("faulty_lazy", "PLUGIN_API = 1\n" + _backend("lazy", extra='''
            def _table(self):
                return {"add": np.add, "exp": 3}
            Backend.kernels = property(_table, lambda self, value: None)
        ''')),
    }),
    # op observers: one that works and one whose hook raises (the first must stay)
    "ember-watch": ("ember>=0.1,<1", {
        "watcher": ("ember_watcher", '''
            from ember.plugins import hookimpl
            PLUGIN_API = 1
            SEEN = []

            @hookimpl
            def ember_op_observer():
                return lambda name, device, out: SEEN.append(name)
        '''),
        "badwatch": ("ember_badwatch", '''
            from ember.plugins import hookimpl
            PLUGIN_API = 1

            @hookimpl
            def ember_op_observer():
                raise RuntimeError("this observer hook is broken on purpose")
        '''),
    }),
}


def _write(root, dist, requires, modules):
    d = root / dist
    d.mkdir(parents=True)
    for module, body in modules.values():
        (d / f"{module}.py").write_text(textwrap.dedent(body))
    entries = "\n".join(f'{entry} = "{module}"' for entry, (module, _) in modules.items())
    names = ", ".join(f'"{module}"' for module, _ in modules.values())
    (d / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{dist}"
        version = "1.0"
        dependencies = ["{requires}"]
        [project.entry-points."ember.plugins"]
        {entries}
        [tool.setuptools]
        py-modules = [{names}]
    ''').format(dist=dist, requires=requires, entries=entries, names=names))
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


def _env(disable: str | None) -> dict:
    env = dict(os.environ)
    env.pop("EMBER_DISABLE_PLUGINS", None)
    if disable is not None:
        env["EMBER_DISABLE_PLUGINS"] = disable
    return env


def _run(code: str, disable: str | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=_env(disable), timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cli(*argv, disable: str | None = None) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-m", "ember.tools.cli", *argv], capture_output=True,
                         text=True, env=_env(disable), timeout=120)
    return out.returncode, out.stdout, out.stderr


# Each device type's error, and every record, as a fresh process sees them.
REPORT = '''
    import json, sys, warnings
    warnings.simplefilter("error")            # nothing here may warn
    import ember
    from ember import plugins
    # before any op: the answer must not depend on which backends ran already
    sources = plugins.available_kernel_sources("matmul")
    errors = {}
    for kind in ("toy", "broken", "future", "typo", "nomember", "newapi", "odd", "lazy"):
        try:
            if kind == "lazy":                # its table is checked when first used
                plugins.kernel_table(plugins.backend_for(kind), 0)
            errors[kind] = None if ember.ones(2, device=kind).sum().item() == 2 else "wrong"
        except ember.DeviceUnavailableError as exc:
            errors[kind] = str(exc)
    recs = {r.name: {"status": r.status, "error": r.error, "fix": r.fix,
                     "dist": r.distribution, "version": r.version, "api": r.plugin_api,
                     "warnings": r.warnings, "types": r.device_types}
            for r in plugins.records()}
    print(json.dumps({"sources": sources, "errors": errors, "records": recs,
                      "imported": sorted(m for m in ("ember_future", "faulty_newapi")
                                         if m in sys.modules)}))
'''


@pytest.fixture(scope="module")
def report(installed):
    return _run(REPORT)


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


def test_good_plugins_load_with_their_plugin_api(report):
    recs, errors = report["records"], report["errors"]
    assert recs["toy"]["status"] == "loaded" and recs["toy"]["api"] == 1
    assert recs["cpu"]["status"] == "loaded" and recs["cpu"]["api"] == 1
    assert errors["toy"] is None and errors["odd"] is None
    # the CPU fallback's source is found in a process that has run nothing yet
    assert report["sources"][0] == "cpu" and {"toy", "odd"} <= set(report["sources"])


def test_plugin_that_fails_to_import(report):
    rec, error = report["records"]["broken"], report["errors"]["broken"]
    assert rec["status"] == "failed" and (rec["dist"], rec["version"]) == ("ember-faulty", "1.0")
    assert "libfoo.so missing" in rec["error"] and "Traceback" in rec["error"]
    assert "no installed plugin provides it" not in error
    assert "'broken' (ember-faulty 1.0) is installed but failed to import" in error
    assert "ImportError: this plugin is broken on purpose (libfoo.so missing)" in error
    assert "fix: reinstall it (pip install --force-reinstall ember-faulty)" in error


def test_plugin_for_a_newer_ember_is_not_imported(report):
    rec, error = report["records"]["future"], report["errors"]["future"]
    assert rec["status"] == "incompatible" and "ember_future" not in report["imported"]
    assert "ember-future 1.0 requires ember>=9.0; this is ember 0.1.0" in rec["error"]
    assert "upgrade ember" in rec["fix"] and "pip install 'ember-future<1.0'" in rec["fix"]
    assert "made for another ember" in error and rec["fix"] in error


def test_plugin_for_another_plugin_api_is_refused(report):
    rec, error = report["records"]["newapi"], report["errors"]["newapi"]
    # imported to read PLUGIN_API, but its hooks never called (ember_backends would raise)
    assert rec["status"] == "incompatible" and rec["api"] == 2
    assert "declares PLUGIN_API = 2" in rec["error"] and "speaks plugin API 1" in rec["error"]
    assert "upgrade ember to a release that speaks plugin API 2" in rec["fix"]
    assert rec["error"] in error and rec["fix"] in error


def test_plugin_without_plugin_api_is_taken_as_api_1(report):
    rec = report["records"]["odd"]
    assert rec["status"] == "loaded" and rec["api"] is None
    assert len(rec["warnings"]) == 1
    assert "'synchronise' is not a Backend member" in rec["warnings"][0]
    assert "did you mean 'synchronize'?" in rec["warnings"][0]


def test_kernel_name_typo_makes_the_backend_invalid(report):
    rec, error = report["records"]["typo"], report["errors"]["typo"]
    assert rec["status"] == "invalid" and rec["types"] == ["typo"]
    want = "kernel 'matmull' is not a declared op or kernel (did you mean 'matmul'?)"
    assert want in rec["error"] and want in error
    assert "'typo' (ember-faulty 1.0) is installed but its backend was refused" in error


def test_missing_member_and_bad_views_make_the_backend_invalid(report):
    rec, error = report["records"]["nomember"], report["errors"]["nomember"]
    assert rec["status"] == "invalid"
    for want in ("missing required member 'to_host'",
                 "views must be one of 'strided', 'positive-steps', 'none', got 'sideways'"):
        assert want in rec["error"] and want in error


def test_kernels_property_is_checked_when_first_used(report):
    rec, error = report["records"]["lazy"], report["errors"]["lazy"]
    assert rec["status"] == "invalid"
    assert "kernel 'exp' is not callable (got int)" in rec["error"] and rec["fix"] in error


def test_a_raising_observer_hook_is_recorded_and_the_others_stay(installed):
    got = _run('''
        import json, ember, ember_watcher
        from ember import plugins
        plugins.load_all()
        (ember.ones(2) + 1).tolist()
        recs = {r.name: r for r in plugins.records()}
        print(json.dumps({"seen": ember_watcher.SEEN, "status": recs["badwatch"].status,
                          "errors": recs["badwatch"].hook_errors,
                          "good": recs["watcher"].hook_errors}))
    ''')
    assert "add" in got["seen"] and got["good"] == {}
    assert got["status"] == "loaded"
    error = got["errors"]["ember_op_observer"]
    assert "Traceback" in error and "this observer hook is broken on purpose" in error
    code, out, err = _cli("doctor", "--json", "--no-smoke")
    [found] = [f for f in json.loads(out)["findings"] if f["reference"] == "plugin-hook-failed"]
    assert found["severity"] == "problem" and "'badwatch' (ember-watch 1.0)" in found["message"]
    assert "ember_op_observer" in found["message"] and "broken on purpose" in found["detail"]


def test_ember_devices_lists_broken_third_party_types(installed):
    code, out, err = _cli("devices", "--json")
    assert code == 0, err
    rows = {row["type"]: row for row in json.loads(out)["backends"]}
    assert {k: rows[k]["status"] for k in ("broken", "future", "typo", "nomember", "newapi",
                                           "toy")} == {
        "broken": "failed", "future": "incompatible", "typo": "invalid",
        "nomember": "invalid", "newapi": "incompatible", "toy": "ok"}
    assert "matmull" in rows["typo"]["detail"] and rows["future"]["fix"]
    code, text, err = _cli("devices")
    assert code == 0, err
    for line in ("typo: invalid", "broken: failed", "newapi: incompatible"):
        assert line in text


def test_ember_doctor_reports_each_state(installed):
    code, out, err = _cli("doctor", "--json", "--no-smoke")
    report = json.loads(out)
    assert code == 2 and report["exit_code"] == 2
    statuses = {p["name"]: p["status"] for p in report["plugins"]}
    assert statuses["typo"] == statuses["nomember"] == "invalid"
    found = {}
    for f in report["findings"]:
        found.setdefault(f["reference"], []).append(f)
    invalid = " ".join(f["message"] + f["seen"] for f in found["plugin-invalid"])
    assert "matmull" in invalid and "to_host" in invalid
    assert all(f["severity"] == "problem" and f["fix"] for f in found["plugin-invalid"])
    unused = found["plugin-backend-unused-member"]
    assert [f["severity"] for f in unused] == ["warning"] and "synchronise" in unused[0]["message"]
    assert any("newapi" in f["message"] or "ember-faulty" in f["message"]
               for f in found["plugin-api-incompatible"])


def test_disabled_plugins_and_unknown_names(installed):
    got = _run('''
        import json, warnings
        import ember
        from ember import plugins
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            plugins.load_all()
            plugins._reset_for_tests()        # discovering again warns no second time
            plugins.load_all()
        try:
            ember.ones(1, device="toy")
            error = None
        except ember.DeviceUnavailableError as e:
            error = str(e)
        recs = {r.name: r.status for r in plugins.records()}
        print(json.dumps({"warnings": [(w.category.__name__, str(w.message)) for w in seen],
                          "error": error, "toy": recs["toy"], "future": recs["future"],
                          "cpu": (ember.ones(2) + 1).tolist()}))
    ''', disable="toy,ember-future,nosuch")
    assert got["toy"] == "disabled" and got["future"] == "disabled"   # by distribution name
    assert got["cpu"] == [2.0, 2.0]
    assert "'toy' (ember-toy 1.0) is installed but disabled" in got["error"]
    assert "fix: remove 'toy' from EMBER_DISABLE_PLUGINS" in got["error"]
    [(category, message)] = got["warnings"]
    assert category == "PluginWarning" and "'nosuch'" in message and "toy" in message
    assert "ember-future" not in message
    code, out, err = _cli("doctor", "--json", "--no-smoke", disable="toy,ember-future,nosuch")
    found = {f["reference"]: f for f in json.loads(out)["findings"]}
    assert found["plugin-disable-unknown"]["severity"] == "warning"
    assert "nosuch" in found["plugin-disable-unknown"]["message"]
    assert "cpu-disabled" not in found


def test_disabling_cpu_fails_clearly_and_is_a_doctor_problem(installed):
    got = _run('''
        import json, ember
        try:
            ember.ones(3)
            error = None
        except ember.DeviceUnavailableError as e:
            error = str(e)
        print(json.dumps({"error": error}))
    ''', disable="cpu")
    assert "device type 'cpu' is not available" in got["error"]
    assert "'cpu' (ember 0.1.0) is installed but disabled" in got["error"]
    assert "fix: remove 'cpu' from EMBER_DISABLE_PLUGINS" in got["error"]
    code, out, err = _cli("doctor", "--json", "--no-smoke", disable="cpu")
    report = json.loads(out)
    found = {f["reference"]: f for f in report["findings"]}
    assert code == 2 and found["cpu-disabled"]["severity"] == "problem"
    assert "remove 'cpu' from EMBER_DISABLE_PLUGINS" in found["cpu-disabled"]["fix"]
    assert "plugin-disable-unknown" not in found


def test_import_ember_loads_no_plugin(installed):
    got = _run('''
        import json, sys, ember
        heavy = [m for m in ("ember_toy", "ember.backends.cpu", "cupy", "pyopencl", "torch")
                 if m in sys.modules]
        print(json.dumps({"heavy": heavy}))
    ''')
    assert got["heavy"] == []
