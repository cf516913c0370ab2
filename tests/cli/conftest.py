"""Fixtures for the CLI tests: fake plugin distributions installed into a temporary folder."""
from __future__ import annotations

import sys
import textwrap

import pytest

# Three third-party plugins, as a pip install would leave them (dist-info + module):
# one made for another ember, one that breaks on import, one whose device is unavailable.
FAKES = {
    "acme-incompatible": ("0.2.0", "ember>=0.2,<0.3", "oldapi", "acme_incompat", """
        raise AssertionError("an incompatible plugin must never be imported")
    """),
    "acme-broken": ("1.0.0", "ember>=0.1,<0.2", "broken", "acme_broken", """
        raise ImportError("libacme.so.1: cannot open shared object file")
    """),
    "acme-gadget": ("0.3.0", "ember>=0.1,<0.2", "gadget", "acme_gadget", """
        from ember.backend import Probe
        from ember.plugins import hookimpl

        class GadgetBackend:
            name = "gadget"
            kernels = {}

            def probe(self):
                return Probe(False, "no gadget driver was found", "apt install gadget-driver",
                             "gadget-no-driver", {"gadget-firmware": "3.1"})

            def devices(self):
                return []

            def from_host(self, array, index):
                raise AssertionError("an unavailable backend gets no arrays")

            to_host = capabilities = from_host

        @hookimpl
        def ember_backends():
            return [GadgetBackend()]

        @hookimpl
        def ember_compat():
            return {"rule": [{
                "id": "gadget-firmware-too-old", "summary": "gadgets need firmware >= 4",
                "when": {"acme-gadget": "*"}, "require": {"gadget-firmware": ">=4"},
                "severity": "warning", "support": "declared", "source": "acme manual p. 3",
                "date": "2026-11-01", "fix": "gadget-flash --latest"}]}

        def fan_check():
            return [{"reference": "gadget-fan", "severity": "warning",
                     "message": "the gadget fan is slow", "seen": "1200 rpm",
                     "fix": "clean the fan"}]

        def broken_check():
            raise RuntimeError("sensor offline")

        @hookimpl
        def ember_doctor_checks():
            return [fan_check, broken_check]
    """),
}


@pytest.fixture(autouse=True)
def _warm_opencl_probe(warm_opencl_probe):
    """Every doctor here times the OpenCL probe: PoCL's one-time builds done first."""


def install_fakes(folder) -> None:
    for dist, (version, requires, entry, module, source) in FAKES.items():
        info = folder / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\n"
                                       f"Version: {version}\nRequires-Dist: {requires}\n")
        (info / "entry_points.txt").write_text(f"[ember.plugins]\n{entry} = {module}\n")
        (folder / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def fake_plugins(tmp_path, monkeypatch):
    """The FAKES installed on sys.path (and PYTHONPATH, for subprocesses); the plugin host
    forgets them afterwards."""
    from ember import plugins
    site = tmp_path / "site"
    install_fakes(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    plugins._reset_for_tests()
    yield site
    monkeypatch.undo()
    for spec in FAKES.values():
        sys.modules.pop(spec[3], None)
    plugins._reset_for_tests()
