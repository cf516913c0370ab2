"""Findings for a doctor report: backends, plugins, smoke tests and compat rules (pure data)."""
from __future__ import annotations

from .compat_eval import Facts, Matrix, evaluate, rule_findings
from .findings import Finding

DRIVER_OF = {"cuda": "nvidia", "rocm": "amd"}     # device type -> key in report["drivers"]
DRIVER_NAME = {"nvidia": "NVIDIA", "amd": "AMD GPU"}


def _seen_details(details: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in details.items() if v not in (None, ""))


def driver_note(kind: str, drivers: dict) -> tuple[bool, str]:
    """(hardware present?, what was seen) for the device types that need a kernel driver."""
    key = DRIVER_OF.get(kind)
    driver = drivers.get(key) if key else None
    if not driver:
        return False, ""
    if driver.get("found"):
        version = driver.get("version") or "of unknown version"
        return True, f"{DRIVER_NAME[key]} driver {version} found"
    return False, driver.get("reason", "")


def backend_finding(row: dict, drivers: dict) -> Finding:
    """One device type's status as a finding; the CPU must work, the others may be absent."""
    kind, status = row["type"], row["status"]
    plugin = row["distribution"] or row["plugin"]
    if status == "ok":
        names = ", ".join(d["device"] for d in row["devices"])
        return Finding(f"{kind}-ok", "ok", f"{kind}: ok ({names})",
                       seen=_seen_details(row["details"]))
    if status == "not installed":
        hardware, seen = driver_note(kind, drivers)
        return Finding(f"{kind}-not-installed", "warning" if hardware else "ok",
                       f"{kind}: not installed: {row['fix']}", seen=seen, fix=row["fix"])
    if status == "disabled":
        return Finding("plugin-disabled", "ok",
                       f"{kind}: plugin {plugin} is disabled by EMBER_DISABLE_PLUGINS",
                       fix="remove it from EMBER_DISABLE_PLUGINS to use it")
    if status == "incompatible":
        return Finding("plugin-api-incompatible", "problem",
                       f"{kind}: plugin {plugin} is incompatible with this ember and was "
                       "not imported", seen=row["reason"], fix=f"pip install -U {plugin}")
    if status == "failed":
        return Finding("plugin-failed", "problem",
                       f"{kind}: plugin {plugin} failed to load: {row['reason']}",
                       fix=f"pip install --force-reinstall {plugin}   (if it persists, "
                           "report the traceback to the plugin's authors)",
                       detail=row["detail"])
    # unavailable: the plugin is here, its probe says why the device is not
    _, driver_seen = driver_note(kind, drivers)
    seen = "; ".join(s for s in (_seen_details(row["details"]), driver_seen) if s)
    return Finding(row["reference"] or f"{kind}-unavailable",
                   "problem" if kind == "cpu" else "warning",
                   f"{kind}: unavailable: {row['reason']}", seen=seen, fix=row["fix"])


def plugin_findings(report: dict) -> list[Finding]:
    """Broken plugins that no backend row already speaks for (third-party ones)."""
    covered = {row["plugin"] for row in report["backends"] if row["plugin"]}
    found = []
    for rec in report["plugins"]:
        if rec["name"] in covered or rec["status"] not in ("failed", "incompatible"):
            continue
        name = rec["distribution"] or rec["name"]
        lines = rec["error"].strip().splitlines()
        if rec["status"] == "failed":
            found.append(Finding("plugin-failed", "problem",
                                 f"plugin {name} failed to load: {lines[-1] if lines else ''}",
                                 fix=f"pip install --force-reinstall {name}", detail=rec["error"]))
        else:
            found.append(Finding("plugin-api-incompatible", "problem",
                                 f"plugin {name} is incompatible with this ember and was not "
                                 "imported", seen=rec["error"], fix=f"pip install -U {name}"))
    return found


SMOKE_WORDS = {"mismatch": "gave a wrong answer", "error": "failed",
               "timeout": "did not finish"}


def smoke_findings(report: dict) -> list[Finding]:
    found = []
    for run in report.get("smoke", ()):
        device, status = run["device"], run["status"]
        if status == "ok":
            found.append(Finding("smoke-ok", "ok", f"{device}: smoke test matches NumPy",
                                 seen=f"{run['detail']} in {run['seconds']} s"))
            continue
        found.append(Finding(f"smoke-{status}", "problem",
                             f"{device}: smoke test {SMOKE_WORDS[status]}",
                             seen=run["detail"].strip().splitlines()[-1] if run["detail"] else "",
                             fix=f"run `ember compat explain` on the error below; "
                                 f"`ember doctor --device {device} --json` for a report",
                             detail=run["detail"]))
    return found


def diagnose(report: dict, matrix: Matrix) -> tuple[list, list[Finding]]:
    """Rule results and findings for a doctor report."""
    facts = Facts.from_report(report)
    results = evaluate(facts, matrix)
    drivers = report.get("drivers", {})
    findings = [backend_finding(row, drivers) for row in report["backends"]]
    findings += plugin_findings(report) + smoke_findings(report)
    findings += rule_findings(results, facts)
    return results, findings
