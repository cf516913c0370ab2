"""The backend contract: every shipped backend meets it, validate() names each way a backend
can miss it, and README, the compat matrix and the plugin pyprojects state one plugin API."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from ember import backend as B
from ember import plugins
from ember.backends import array_api
from ember.backends.cpu import CPUBackend
from ember.backends.cupy import CuPyBackend
from ember.backends.cupy.compat import FLAVOURS
from ember.backends.opencl import OpenCLBackend
from ember.errors import EmberValueError
from ember.ops._op import declared_names

ROOT = Path(__file__).resolve().parents[2]
DECLARED = declared_names()


# -- the shipped backends ---------------------------------------------------------------------
SHIPPED = {"cpu": CPUBackend, "opencl": OpenCLBackend,
           **{dist: (lambda d: lambda: CuPyBackend(d))(dist) for dist in FLAVOURS}}


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_backends_validate_cleanly(name):
    backend = SHIPPED[name]()           # constructing one touches no device
    assert B.validate(backend, DECLARED) == ([], [])
    assert B.optional(backend, "views") == "strided"


def test_shipped_kernel_tables_hold_only_declared_names():
    assert B.check_kernels(OpenCLBackend().kernels_for(0), DECLARED) == []
    # CuPy's table (backends/cupy/kernels.py) is the array-API table plus LIBRARY_SPECIFIC;
    # building it needs CuPy, its names do not
    names = set(array_api.kernels(np)) | set(array_api.LIBRARY_SPECIFIC)
    assert sorted(names - DECLARED) == []


# -- validate(): each way to miss the contract --------------------------------------------------
class Good:
    name = "mydev"

    def __init__(self):
        self.kernels = {"add": np.add}

    def probe(self):
        return B.Probe(True)

    def devices(self):
        return [B.DeviceInfo(0, "mydev 0")]

    def from_host(self, array, index):
        return array

    def to_host(self, native):
        return native

    def capabilities(self, index):
        return B.Capabilities(frozenset({"float32"}))


def _problems(**members):
    backend = Good()
    for key, value in members.items():
        setattr(backend, key, value)
    return B.validate(backend, DECLARED)[0]


def test_a_good_backend_has_no_problem():
    assert B.validate(Good(), DECLARED) == ([], [])


def test_missing_required_members_are_named():
    class Bare:
        name = "bare"
    problems, _ = B.validate(Bare(), DECLARED)
    assert problems == [f"missing required member {m!r} (see ember.backend.Backend)"
                        for m in ("kernels", "probe", "devices", "from_host", "to_host",
                                  "capabilities")]


@pytest.mark.parametrize("value, want", [
    ("My-Dev", "name must be a device type"), ("auto", "name must be a device type"),
    (3, "name must be a device type")])
def test_name_must_be_a_device_type(value, want):
    [problem] = _problems(name=value)
    assert problem.startswith(want) and repr(value) in problem


@pytest.mark.parametrize("members, want", [
    ({"probe": 1}, "probe must be a method, got int"),
    ({"synchronize": "yes"}, "synchronize must be a method, got str"),
    ({"aliases": "cuda"}, "aliases must be a tuple of device types, got 'cuda'"),
    ({"aliases": ("CUDA",)}, "aliases must be a tuple of device types, got ('CUDA',)"),
    ({"upcast_bfloat16": 1}, "upcast_bfloat16 must be a bool, got 1"),
    ({"views": "all"}, "views must be one of 'strided', 'positive-steps', 'none', got 'all'"),
    ({"kernels": [np.add]}, "kernels must be a dict of op name -> callable, got list"),
    ({"kernels": {"add": 1}}, "kernel 'add' is not callable (got int)"),
    ({"kernels": {"matmull": np.matmul}},
     "kernel 'matmull' is not a declared op or kernel (did you mean 'matmul'?); "
     "`ember ops --json` lists every name"),
    ({"kernels": {"zzz": np.add}}, "kernel 'zzz' is not a declared op or kernel; "
                                  "`ember ops --json` lists every name"),
])
def test_each_problem_is_named(members, want):
    assert _problems(**members) == [want]


def test_misspelt_optional_members_are_warned_not_refused():
    backend = Good()
    backend.synchronise = lambda index=None: None
    backend.memory_alocated = lambda index=None: 0
    backend.runtime = object()              # a backend's own public names are its business
    problems, warnings = B.validate(backend, DECLARED)
    assert problems == []
    assert warnings == [
        "'memory_alocated' is not a Backend member, so ember never uses it "
        "(did you mean 'memory_allocated'?)",
        "'synchronise' is not a Backend member, so ember never uses it "
        "(did you mean 'synchronize'?)"]


def test_a_kernels_property_is_not_read_at_validation():
    class Lazy(Good):
        @property
        def kernels(self):
            raise AssertionError("validate() must not build a lazy table")

        def __init__(self):
            pass
    assert B.validate(Lazy(), DECLARED) == ([], [])


def test_optional_reads_members_or_their_defaults():
    bare = SimpleNamespace()
    assert [B.optional(bare, m) for m in B.OPTIONAL] == [
        (), False, "none", None, None, None, None, None, None, None, None, None, None,
        None, None]
    cpu = CPUBackend()
    assert B.optional(cpu, "upcast_bfloat16") is True
    assert B.optional(cpu, "synchronize") == cpu.synchronize
    with pytest.raises(EmberValueError, match="not an optional Backend member"):
        B.optional(cpu, "synchronise")


def test_protocol_lists_follow_the_protocol_classes():
    assert B.REQUIRED == ("name", "kernels", "probe", "devices", "from_host", "to_host",
                          "capabilities")
    assert B.OPTIONAL == ("aliases", "upcast_bfloat16", "views", "kernels_for", "synchronize",
                          "copy_to", "empty_cache", "memory_allocated", "memory_reserved",
                          "strides", "data_ptr", "offset", "compile_graph", "profile_device",
                          "set_num_threads")


# -- the version and plugin-API gates -----------------------------------------------------------
def _record(requires="", version="2.0"):
    return plugins.PluginRecord("acme", "acme", "ember-acme", version, requires)


@pytest.mark.parametrize("requires, why, fix", [
    ("", "", ""), (">=0.1,<1", "", ""),
    (">=9.0", "ember-acme 2.0 requires ember>=9.0; this is ember 0.1.0 (plugin API 1)",
     "upgrade ember to a release in ember>=9.0, or install a release of ember-acme made for "
     "ember 0.1.0: pip install 'ember-acme<2.0'"),
    ("<0.1", "ember-acme 2.0 requires ember<0.1; this is ember 0.1.0 (plugin API 1)",
     "install a release of ember-acme made for ember 0.1.0: pip install -U ember-acme"),
    (">=>0.1", "its requirement on ember ('>=>0.1') is not a valid version range",
     "report this to the authors of ember-acme"),
])
def test_range_refusal_points_the_right_way(requires, why, fix):
    assert plugins._range_refusal(_record(requires)) == (why, fix)


@pytest.mark.parametrize("module, declared, refused", [
    (SimpleNamespace(), None, ""),                   # no PLUGIN_API: taken as API 1
    (SimpleNamespace(PLUGIN_API=1), 1, ""),
    (SimpleNamespace(PLUGIN_API=2), 2, "declares PLUGIN_API = 2; this ember (0.1.0) speaks "
                                       "plugin API 1"),
    (SimpleNamespace(PLUGIN_API=0), 0, "declares PLUGIN_API = 0"),
    (SimpleNamespace(PLUGIN_API="1"), "1", "its PLUGIN_API must be an int, got '1'"),
])
def test_plugin_api_gate(module, declared, refused):
    rec = _record()
    why, fix = plugins._api_refusal(module, rec)
    assert rec.plugin_api == declared
    assert (refused in why and fix) if refused else (why, fix) == ("", "")
    if declared == 0:
        assert fix == "install a release of ember-acme for plugin API 1: pip install -U ember-acme"


def test_a_failed_plugin_that_cannot_be_unregistered_says_so(monkeypatch):
    plugins._reset_for_tests()
    try:
        plugins._discover()["acme"] = _record()           # its module does not exist
        def refuse(*args, **kwargs):
            raise ValueError("pluggy refused")
        monkeypatch.setattr(plugins.manager(), "unregister", refuse)
        rec = plugins.load("acme")
        assert rec.status == "failed" and "No module named 'acme'" in rec.error
        assert "unregistering it failed too" in rec.error and "pluggy refused" in rec.error
    finally:
        monkeypatch.undo()
        plugins._reset_for_tests()


def test_unknown_disabled_names_are_warned_once(monkeypatch):
    plugins.records()                       # discovered before the variable is set
    monkeypatch.setenv("EMBER_DISABLE_PLUGINS", "cpu, nosuch ,ember")
    monkeypatch.setattr(plugins, "_warned", set())
    assert plugins.unknown_disabled() == ["nosuch"]
    with pytest.warns(plugins.PluginWarning, match="'nosuch': no installed plugin"):
        plugins._warn_unknown_disabled()
    plugins._warn_unknown_disabled()        # warned already: silent (warnings are errors here)


# -- one plugin API, stated in four places ------------------------------------------------------
def test_readme_matrix_and_pyprojects_agree_on_one_plugin_api():
    from ember.tools.compat_eval import load_matrix
    from packaging.specifiers import SpecifierSet
    want = SpecifierSet(plugins.PLUGIN_API_RANGE)
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Writing a backend plugin"):]
    section = section[:section.index("\n## ", 3)]
    stated = re.findall(r'"ember([<>=!~][^"]*)"', section)
    assert stated and all(SpecifierSet(s) == want for s in stated), stated
    assert f"PLUGIN_API = {plugins.PLUGIN_API_VERSION}" in section
    matrix, _ = load_matrix()
    api = [a for a in matrix.plugin_api if a["version"] == plugins.PLUGIN_API_VERSION]
    assert [SpecifierSet(a["ember"]) for a in api] == [want]
    rules = [r for r in matrix.rules if r.id.endswith("-ember-mismatch")]
    assert rules and all(SpecifierSet(r.require["ember"]) == want for r in rules)
    pyprojects = sorted((ROOT / "plugins").glob("*/pyproject.toml"))
    assert pyprojects
    for path in pyprojects:
        deps = re.findall(r'"ember([<>=!~][^"]*)"', path.read_text())
        assert [SpecifierSet(d) for d in deps] == [want], path


def _module_file(module: str, folder: Path) -> Path:
    """The source of an entry point's module: in a plugin's folder, or in this tree (ember.*
    is core/, ember.backends.* is backends/)."""
    if module.startswith("ember.backends."):
        folder, module = ROOT / "backends", module[len("ember.backends."):]
    parts = folder.joinpath(*module.split("."))
    return parts / "__init__.py" if parts.is_dir() else parts.with_suffix(".py")


def _declared_api(path: Path):
    """The PLUGIN_API a module assigns, or imports from another module of this tree."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
                "PLUGIN_API"]:
            return node.value.value
        if isinstance(node, ast.ImportFrom) and "PLUGIN_API" in [a.name for a in node.names]:
            return _declared_api(_module_file(node.module, path.parent))
    return None


ENTRY_POINTS = [(ROOT / "pyproject.toml", "cpu")] + [
    (path, None) for path in sorted((ROOT / "plugins").glob("*/pyproject.toml"))]


@pytest.mark.parametrize("pyproject, only", ENTRY_POINTS,
                         ids=["ember", *(p.parent.name for p, _ in ENTRY_POINTS[1:])])
def test_first_party_plugin_modules_declare_the_plugin_api(pyproject, only):
    from ember.compat_matrix import _tomllib
    entries = _tomllib().loads(pyproject.read_text())["project"]["entry-points"][
        "ember.plugins"]
    for name, module in entries.items():
        if only in (None, name):
            path = _module_file(module, pyproject.parent)
            assert _declared_api(path) == plugins.PLUGIN_API_VERSION, path
