"""The compat matrix files: schema-valid, consistent with the code, and every rule can fire."""
from __future__ import annotations

import pathlib

import jsonschema
import pytest
from ember import compat_matrix
from ember.tools import compat_eval
from ember.tools.compat_eval import ANY, Facts, Matrix, check
from packaging.specifiers import SpecifierSet
from packaging.version import Version

FILES = compat_matrix.files()
MATRIX = Matrix.from_data(compat_matrix.load())
REPO = pathlib.Path(__file__).resolve().parents[2]


def _validator(name):
    schema = compat_matrix.schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_files_are_shipped():
    assert {"nvidia.toml", "cupy.toml", "python.toml", "opencl.toml", "ember.toml",
            "errors.toml"} <= set(FILES)


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_matches_schema(name):
    _validator(compat_matrix.MATRIX_SCHEMA).validate(FILES[name])


def test_schema_rejects_what_it_should():
    validator = _validator(compat_matrix.MATRIX_SCHEMA)
    rule = dict(FILES["nvidia.toml"]["rule"][0])
    for bad in ({**rule, "severity": "fatal"}, {**rule, "support": "hoped"},
                {**rule, "date": "last week"}, {k: v for k, v in rule.items() if k != "source"},
                {**rule, "id": "Not A Slug"}):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate({"rule": [bad]})


def _boundaries(specs):
    """Versions at, just above and just below every version the specifiers mention."""
    found = {"0", "1", "9999"}
    for text in specs:
        if text == ANY:
            continue
        for spec in SpecifierSet(text):
            release = list(Version(spec.version.removesuffix(".*")).release)
            found.add(".".join(map(str, release)))
            for i, part in enumerate(release):
                found.add(".".join(map(str, release[:i] + [part + 1])))
                if part:
                    found.add(".".join(map(str, release[:i] + [part - 1, 999])))
    return sorted(found, key=Version)


def _inside(spec):
    return next(v for v in _boundaries([spec]) if spec == ANY or SpecifierSet(spec).contains(v))


def _outside(spec):
    return next(v for v in _boundaries([spec]) if not SpecifierSet(spec).contains(v))


@pytest.mark.parametrize("rule", MATRIX.rules, ids=lambda r: r.id)
def test_every_rule_can_fire_and_pass(rule):
    base = {name: _inside(spec) for name, spec in rule.when.items()}
    passing = Facts()
    for name, version in {**base, **{n: _inside(s) for n, s in rule.require.items()}}.items():
        passing.set(name, version, "test")
    assert check(rule, passing).status == "pass"
    for target, spec in rule.require.items():
        failing = Facts(dict(passing.components), dict(passing.origins))
        failing.set(target, _outside(spec), "test")
        result = check(rule, failing)
        assert result.status == "fail" and result.outside == (target,)
        finding = compat_eval.rule_findings([result], failing)[0]
        assert finding.reference == rule.id and finding.severity == rule.severity
        assert finding.source.startswith(rule.source)
        # the rule's words and commands, as they run for how this ember was installed
        assert finding.fix == compat_eval.localize_text(rule.fix)
        assert finding.commands == tuple(compat_eval.localize(c) for c in rule.commands)


@pytest.mark.parametrize("error", MATRIX.errors, ids=lambda e: e.id)
def test_every_known_error_matches_its_example(error):
    assert error in compat_eval.explain(error.example, MATRIX)
    assert error.meaning and error.fix


def test_plugin_api_table_agrees_with_the_host():
    import ember
    from ember import plugins
    assert MATRIX.plugin_api_for(ember.__version__) == plugins.PLUGIN_API_VERSION


def test_install_commands_agree_with_the_host():
    from ember import plugins
    assert set(MATRIX.device_types()) == set(plugins.INSTALL_HINTS)
    for kind, hint in plugins.INSTALL_HINTS.items():
        assert hint.startswith(MATRIX.install_hint(kind))
    assert MATRIX.install_hint("cuda") == "pip install ember-cuda12"


def test_first_party_plugin_rules_cover_every_plugin():
    for plugin in MATRIX.plugins:
        dist = plugin["distribution"]
        assert any(dist in r.when and "ember" in r.require for r in MATRIX.rules), dist


def _pyproject(dist):
    path = REPO / "plugins" / dist / "pyproject.toml"
    if not path.exists():
        return None
    return compat_matrix._tomllib().loads(path.read_text())["project"]


@pytest.mark.parametrize("plugin", MATRIX.plugins, ids=lambda p: p["distribution"])
def test_matrix_agrees_with_plugin_pyprojects(plugin):
    project = _pyproject(plugin["distribution"])
    if project is None:
        pytest.skip(f"plugins/{plugin['distribution']} is not in this source tree")
    rule = next(r for r in MATRIX.rules if plugin["distribution"] in r.when)
    assert SpecifierSet(rule.when[plugin["distribution"]]).contains(project["version"])
    ranges = [d[len("ember"):].split(";")[0].strip() for d in project["dependencies"]
              if d.startswith("ember") and not d.startswith("ember-")]
    assert ranges and SpecifierSet(ranges[0]) == SpecifierSet(rule.require["ember"])
    assert any(d.startswith(plugin["library"]) for d in project["dependencies"])
