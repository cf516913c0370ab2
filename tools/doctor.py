"""`ember doctor`: which backends work here, why the others do not, and the exact fix."""
from __future__ import annotations

import argparse
import sys
import traceback

EPILOG = """exit status: 0 all good, 1 warnings, 2 problems (also when --device names an
unknown device type).  With --json the report (schema: ember/compat_matrix/
doctor-report.schema.json) is written to stdout before exiting."""
SCHEMA_ID = "ember-doctor/1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument("--json", action="store_true", help="write the report as JSON")
    parser.add_argument("--device", metavar="DEVICE",
                        help="only this device type or device (cpu, opencl, opencl:1, ...)")
    parser.add_argument("--no-smoke", action="store_true",
                        help="skip the per-device smoke tests")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="limit for each smoke test (default 120)")


def _plugin_checks() -> list:
    """Findings from the plugins' ember_doctor_checks hooks; a check that breaks is a finding."""
    from ember import plugins

    from .findings import Finding
    found = []
    for check in plugins.doctor_checks():
        name = f"{getattr(check, '__module__', '?')}.{getattr(check, '__qualname__', '?')}"
        try:
            found += [Finding.from_dict(dict(item)) for item in check() or ()]
        except Exception as exc:  # noqa: BLE001  (a plugin's check must not break the doctor)
            found.append(Finding("plugin-check-failed", "problem",
                                 f"the doctor check {name} raised {type(exc).__name__}: {exc}",
                                 fix="report this to the plugin's authors",
                                 detail="".join(traceback.format_exception(exc))))
    return found


def build_report(device: str | None = None, smoke: bool = True, timeout: float | None = None):
    """Collect everything, evaluate it: (report dict, findings, rule results)."""
    from ember import plugins

    from . import collect, diagnose
    from .compat_eval import load_matrix
    from .findings import Finding
    from .smoke import TIMEOUT
    from .smoke import smoke as run_smoke

    plugins.load_all()
    matrix, notes = load_matrix(plugins.compat_data())
    kind = device.split(":")[0] if device else None
    known = collect.device_types(matrix)
    if kind is not None and kind not in known:
        raise ValueError(f"unknown device type in {device!r}; known: {', '.join(known)}")
    drivers = collect.drivers()
    facts = collect.components(matrix, drivers)
    rows = collect.backend_rows(matrix, only=kind)
    collect.backend_facts(facts, rows, matrix)
    runs = []
    if smoke:
        for row in rows:
            for d in row["devices"]:
                if device in (None, kind, d["device"]):
                    runs.append(run_smoke(d["device"], timeout or TIMEOUT))
    report = {"schema": SCHEMA_ID, "plugin_api": plugins.PLUGIN_API_VERSION,
              **collect.machine(), "environment": collect.environment(),
              "drivers": drivers, "components": facts.to_dict(),
              "plugins": collect.plugin_rows(plugins.records()), "backends": rows,
              "smoke": runs}
    results, findings = diagnose.diagnose(report, matrix)
    # what the plugin host found itself: refused backends, EMBER_DISABLE_PLUGINS names
    # that match nothing, the CPU backend disabled
    findings += notes + _plugin_checks() + [Finding.from_dict(f)
                                            for f in plugins.host_findings()]
    # plugin checks and probes write free text: scrub everything once more before it leaves
    findings = [Finding(**collect.scrub_all(f.to_dict())) for f in findings]
    return collect.scrub_all(report), findings, results


def run(args: argparse.Namespace) -> int:
    from . import render
    from .findings import exit_code

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
