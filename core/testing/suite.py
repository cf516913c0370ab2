"""The whole suite as a list of checks, and the devices it runs on.

A check is one conformance row (forward on every dtype, every layout, gradients), one
rule, or one random program; each runs on one device.  `targets()` finds what to test:
every device of every loaded backend (third-party ones included), and one entry with the
reason for each device type that cannot be tested (a plugin that failed to load is a
failure there, once, not one per check).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass

from . import programs, semantics, views
from .cases import CASES
from .checks import Unsupported, lacks_dtype, run_case


@dataclass(frozen=True)
class Check:
    name: str
    family: str
    fn: Callable[[str], None]
    cpu: bool = True              # False: it compares a device with the CPU (not run there)

    def run(self, device: str) -> None:
        """The check on device; Unsupported where the device lacks a dtype it needs."""
        try:
            self.fn(device)
        except Exception as exc:
            if lacks_dtype(exc):
                raise Unsupported(str(exc).splitlines()[0]) from exc
            raise


def all_checks() -> list[Check]:
    out = [Check(c.name, c.family, functools.partial(run_case, c)) for c in CASES]
    out += [Check("rule:" + r.name, r.family, r.fn) for r in (*semantics.RULES, *views.RULES)]
    out += [Check(f"program:{seed}" + (f"x{scale}" if scale > 1 else ""), "programs",
                  functools.partial(programs.check_program, seed, scale), cpu=False)
            for seed, scale in programs.PROGRAMS]
    return out


@dataclass(frozen=True)
class Target:
    """A device to test, or a device type that cannot be tested and why."""

    device: str
    problem: str | None = None
    fatal: bool = False           # a failure (broken plugin, unusable EMBER_TEST_DEVICES)


def _requested(names) -> list[Target]:
    import ember
    out = []
    for name in names:
        try:
            dev = ember.device(name).concrete()
            dev.backend.capabilities(dev.index)
            out.append(Target(str(dev)))
        except Exception as exc:  # noqa: BLE001  (reported as the device's one failure)
            out.append(Target(name, f"{type(exc).__name__}: {exc}", fatal=True))
    return out


def targets(devices=None) -> list[Target]:
    """Every testable device, then every device type that is not, with the reason.

    `devices` (or EMBER_TEST_DEVICES=a,b) names exactly the devices to test (one failure
    each that cannot be used).  Otherwise every plugin is loaded: a plugin that failed or
    was refused for its version range is a failure, a disabled one or a backend whose probe
    says no is a skip, and so is a first-party device type whose plugin is not installed."""
    import ember
    from ember import plugins
    if devices:
        return _requested(devices)
    env = os.environ.get("EMBER_TEST_DEVICES", "")
    if env.strip():
        return _requested([d.strip() for d in env.split(",") if d.strip()])
    records = plugins.load_all()
    out = [Target(str(d)) for d in ember.devices()]
    tested = {t.device.split(":")[0] for t in out}
    for rec in records:
        if rec.status in ("failed", "incompatible"):
            last = rec.error.strip().splitlines()[-1] if rec.error else rec.status
            out.append(Target(rec.name, f"plugin {rec.name!r} ({rec.distribution or '?'} "
                                        f"{rec.version}) {rec.status}: {last}", fatal=True))
        elif rec.status == "disabled":
            out.append(Target(rec.name, f"plugin {rec.name!r} is disabled "
                                        "(EMBER_DISABLE_PLUGINS)"))
    for kind, backend in sorted(plugins.loaded_backends().items()):
        if kind == backend.name and kind not in tested:
            probe = plugins._probe(backend)
            out.append(Target(kind, probe.reason or f"no {kind} device on this machine"))
            tested.add(kind)
    for kind, hint in plugins.INSTALL_HINTS.items():
        if kind not in tested and plugins.find_backend(kind) is None:
            out.append(Target(kind, f"no plugin provides '{kind}' ({hint})"))
    return out


def devices_under_test() -> list[tuple[str, str | None]]:
    """[(device, None)] for each testable device, [(type, reason)] for the others."""
    return [(t.device, t.problem) for t in targets()]
