"""`ember doctor`: which backends work here, why the others do not, and the exact fix."""
from __future__ import annotations

import argparse
import os
import sys
import traceback

EPILOG = """exit status: 0 all good, 1 warnings, 2 problems (also when --device names an
unknown device type).  With --json the report (schema: ember/compat_matrix/
doctor-report.schema.json) is written to stdout before exiting."""
SCHEMA_ID = "ember-doctor/1"
DEFAULT_TIMEOUT = 5.0     # seconds for each plugin import, probe and check (guard's default)
SMOKE_TIMEOUT = 60.0      # a smoke test compiles kernels: a cold driver takes its time
# True while build_report loads plugins: a backend may then protect the doctor's own process
# (the OpenCL backend turns PoCL's kernel cache off, which the doctor diagnoses); importing
# this module alone changes nothing
DIAGNOSING = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument("--json", action="store_true", help="write the report as JSON")
    parser.add_argument("--device", metavar="DEVICE",
                        help="only this device type or device (cpu, opencl, opencl:1, ...)")
    parser.add_argument("--no-smoke", action="store_true",
                        help="skip the per-device smoke tests")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help=f"limit for each plugin import, backend probe and doctor check "
                             f"(default {DEFAULT_TIMEOUT:g}) and each smoke test (default "
                             f"{SMOKE_TIMEOUT:g})")
    parser.add_argument("topic", nargs=argparse.REMAINDER,
                        help="perf [--json] [--steps N] script.py [args...]: profile a few "
                             "steps of a program and check the tuning checklist")


def _plugin_checks(timeout: float, capture) -> list:
    """Findings from the plugins' ember_doctor_checks hooks, each check under the deadline;
    a check that breaks or hangs is a finding."""
    from ember import plugins

    from . import guard
    from .findings import Finding
    found = []
    for check in plugins.doctor_checks():
        name = f"{getattr(check, '__module__', '?')}.{getattr(check, '__qualname__', '?')}"
        outcome = guard.call(lambda c=check: [Finding.from_dict(dict(i)) for i in c() or ()],
                             timeout=timeout)
        capture.take()
        if not outcome.finished:
            found.append(Finding("plugin-check-failed", "problem",
                                 f"the doctor check {name} did not finish within {timeout:g} s",
                                 fix="report this to the plugin's authors"))
        elif outcome.error is not None:
            exc = outcome.error
            found.append(Finding("plugin-check-failed", "problem",
                                 f"the doctor check {name} raised {type(exc).__name__}: {exc}",
                                 fix="report this to the plugin's authors",
                                 detail="".join(traceback.format_exception(exc))))
        else:
            found += outcome.result
    return found


def build_report(device: str | None = None, smoke: bool = True, timeout: float | None = None):
    """Collect everything, evaluate it: (report dict, findings, rule results).  Plugin code
    runs under deadlines with its output captured (tools/loading.py, tools/guard.py)."""
    global DIAGNOSING
    from . import guard, loading

    limit = timeout or DEFAULT_TIMEOUT
    clock = Clock()
    # the smoke tests run in the user's environment, not in what loading plugins here
    # changed in it (cache switches a backend sets for the doctor's own process), except
    # for the block on plugins that hang
    user_env = dict(os.environ)
    DIAGNOSING = True
    with guard.Capture() as capture, loading.guarded(limit, capture) as loads:
        clock.lap("plugins")
        blocked = os.environ.get(loading.DISABLE)
        smoke_env = {**user_env, **({loading.DISABLE: blocked} if blocked else {})}
        return _build(device, smoke, timeout, limit, loads, capture, clock, smoke_env)


def _build(device, smoke, timeout, limit, loads, capture, clock, smoke_env):
    from ember import plugins

    from . import collect, diagnose, envinfo, install
    from .compat_eval import load_matrix
    from .findings import Finding
    from .smoke import smoke as run_smoke

    compat = plugins.compat_data()
    matrix, notes = load_matrix(compat)
    kind = device.split(":")[0] if device else None
    known = collect.device_types(matrix, load=False)
    if kind is not None and kind not in known:
        raise ValueError(f"unknown device type in {device!r}; known: {', '.join(known)}")
    drivers = collect.drivers()
    facts = collect.components(matrix, drivers)
    rows = collect.backend_rows(matrix, only=kind, loads=loads, timeout=limit,
                                capture=capture)
    collect.backend_facts(facts, rows, matrix)
    clock.lap("probes")
    runs = []
    if smoke:
        for row in rows:
            for d in row["devices"]:
                if device in (None, kind, d["device"]):
                    runs.append(run_smoke(d["device"], timeout or SMOKE_TIMEOUT, smoke_env))
    clock.lap("smoke")
    origin = install.here()
    report = {"schema": SCHEMA_ID, "plugin_api": plugins.PLUGIN_API_VERSION,
              **collect.machine(), "system": envinfo.system(),
              "install": {"kind": origin.ember.kind, "source_tree": origin.source_tree(),
                          "pip": origin.pip},
              "environment": collect.environment(), "drivers": drivers,
              "components": facts.to_dict(), "packages": envinfo.packages(),
              "opencl_icd": envinfo.opencl_icd(), "cuda_toolkit": envinfo.cuda_toolkit(rows),
              "plugins": collect.plugin_rows(plugins.records(), loads), "backends": rows,
              "smoke": runs, "plugin_compat": collect.scrub_all(compat)}
    results, findings = diagnose.diagnose(report, matrix)
    checks = _plugin_checks(limit, capture)
    report["plugin_findings"] = [f.to_dict() for f in checks]
    # what the plugin host found itself: refused backends, EMBER_DISABLE_PLUGINS names
    # that match nothing, the CPU backend disabled (it would load a plugin that hung)
    host = [] if any(load["trouble"] for load in loads.values()) else [
        Finding.from_dict(f) for f in plugins.host_findings()]
    pip = install.here()
    others = [Finding(**{**f.to_dict(), "fix": pip.localize_text(f.fix)}) for f in checks + host]
    findings += notes + others
    # the same check registered by two plugins (both CUDA plugins) says the same thing twice
    findings = list({(f.reference, f.message, f.seen): f for f in findings}.values())
    clock.lap("checks")
    report["timings"] = clock.laps
    # plugin checks and probes write free text: scrub everything once more before it leaves
    findings = [Finding(**collect.scrub_all(f.to_dict())) for f in findings]
    return collect.scrub_all(report), findings, results


class Clock:
    """Seconds per step, for the report's `timings`."""

    def __init__(self):
        import time
        self._now = time.perf_counter
        self._last = self._start = self._now()
        self.laps: dict = {}

    def lap(self, name: str) -> None:
        now = self._now()
        self.laps[name] = round(now - self._last, 3)
        self._last = now
        self.laps["total"] = round(now - self._start, 3)


def run(args: argparse.Namespace) -> int:
    from . import render
    from .findings import exit_code

    topic = getattr(args, "topic", None) or []
    if topic:
        if topic[0] != "perf":
            print(f"ember doctor: unknown topic {topic[0]!r}; expected perf "
                  "(ember doctor perf script.py)", file=sys.stderr)
            return 2
        from . import perf
        return perf.main(topic[1:], json_out=args.json)

    try:
        report, findings, results = build_report(args.device, not args.no_smoke, args.timeout)
    except ValueError as exc:
        print(f"ember doctor: {exc}", file=sys.stderr)
        return 2
    code = exit_code(findings)
    if args.json:
        report["rules"] = [r.to_dict() for r in results]
        report["findings"] = [f.to_dict() for f in findings]
        report["exit_code"] = code
        render.write_json(report)
    else:
        render.doctor(report, findings, results)
    return code
