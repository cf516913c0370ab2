"""Findings for a doctor report: backends, plugins, conflicts, smoke tests and compat rules,
each with the commands that fix it for how this ember was installed (pure data)."""
from __future__ import annotations

from .compat_eval import Facts, Matrix, evaluate, explain, localize, range_fix, rule_findings
from .findings import Finding

DRIVER_OF = {"cuda": "nvidia", "rocm": "amd"}     # device type -> key in report["drivers"]
DRIVER_NAME = {"nvidia": "NVIDIA", "amd": "AMD GPU"}
PCI_OF = {"cuda": "nvidia_pci", "rocm": "amd_pci"}   # device type -> key in report["system"]


def _is_cupy(name: str) -> bool:
    """A distribution that installs the `cupy` module (its wheels share that folder, so
    they are uninstalled together with the plugins that bring them)."""
    return name == "cupy" or name.startswith("cupy-")
# Rules about the environment ember itself stands on: when one fails, a plugin that fails
# to load is most likely its victim, and the rule's fix is the plugin's fix too.
ROOT_RULES = ("ember-numpy-too-old", "ember-python-unsupported")


def _installer():
    from . import install
    return install.here()


def _seen_details(details: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in details.items()
                     if v not in (None, "") and not isinstance(v, (dict, list)))


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


def _plugin_wheels(row: dict, matrix: Matrix | None) -> list[str]:
    if matrix is None:
        return []
    return [p["library"] for p in matrix.plugins if p["distribution"] == row["distribution"]
            and _is_cupy(p.get("library", ""))]


def _probe_commands(row: dict, report: dict, matrix: Matrix | None) -> list[str]:
    """Commands for an installed backend whose probe says why it cannot run here."""
    pip = _installer()
    reference, kind = row["reference"], row["type"]
    if reference in ("opencl-no-platform", "opencl-no-device"):
        return [pip.localize("pip install pocl-binary-distribution")]
    if reference == "opencl-no-pyopencl":
        return [pip.localize("pip install 'ember-opencl[pocl]'")]
    if reference == "opencl-pyopencl-broken":
        return [pip.localize("pip install -U 'pyopencl>=2024.2.7'")]
    if reference == "cupy-not-installed":
        return [pip.localize(f"pip install {w}") for w in _plugin_wheels(row, matrix)]
    if reference == "cuda-nvrtc-missing":
        return [pip.localize(f"pip install '{w}[ctk]'") for w in _plugin_wheels(row, matrix)]
    if reference in ("cuda-no-driver", "rocm-no-driver"):
        # a missing driver and a missing GPU read the same to CUDA; the PCI bus tells
        if report.get("system", {}).get(PCI_OF[kind], 1) == 0 and row["distribution"]:
            return [pip.uninstall(row["distribution"], *_plugin_wheels(row, matrix))]
    return []


def backend_finding(row: dict, drivers: dict, report: dict | None = None,
                    matrix: Matrix | None = None) -> Finding:
    """One device type's status as a finding; the CPU must work, the others may be absent."""
    report = report or {}
    kind, status = row["type"], row["status"]
    plugin = row["distribution"] or row["plugin"]
    pip = _installer()
    if status == "ok":
        names = ", ".join(d["device"] for d in row["devices"])
        return Finding(f"{kind}-ok", "ok", f"{kind}: ok ({names})",
                       seen=_seen_details(row["details"]))
    if status == "not installed":
        hardware, seen = driver_note(kind, drivers)
        return Finding(f"{kind}-not-installed", "warning" if hardware else "ok",
                       f"{kind}: not installed: {row['fix']}", seen=seen, fix=row["fix"],
                       commands=[row["fix"]] if row["fix"] else [])
    if status == "disabled":
        return Finding("plugin-disabled", "ok",
                       f"{kind}: plugin {plugin} is disabled by EMBER_DISABLE_PLUGINS",
                       fix="remove it from EMBER_DISABLE_PLUGINS to use it")
    if status == "hung":
        return Finding("plugin-hung", "problem",
                       f"{kind}: plugin {plugin} {row['reason']}",
                       fix=f"reinstall it, or remove it: {row['fix']} (and report the hang to "
                           "its authors)", commands=[row["fix"]])
    if status == "incompatible":
        version = _version_of(report, row)
        fix, commands = range_fix(plugin, version, _requires(report, row),
                                  report.get("components", {}).get("ember", {}).get("version",
                                                                                     ""))
        return Finding("plugin-api-incompatible", "problem",
                       f"{kind}: plugin {plugin} is incompatible with this ember and was "
                       "not imported", seen=row["reason"], fix=fix, commands=commands)
    if status == "invalid":
        return Finding("plugin-invalid", "problem",
                       f"{kind}: plugin {plugin} was refused: {row['reason']}",
                       fix=row["fix"], detail=row["detail"])
    if status == "failed":
        ours = plugin in pip.first_party or plugin == "ember"
        command = (pip.install(plugin, flags=("--force-reinstall", "--no-deps")) if ours
                   else pip.uninstall(plugin))
        return Finding("plugin-failed", "problem",
                       f"{kind}: plugin {plugin} failed to load: {row['reason']}",
                       fix=f"reinstall it ({pip.install(plugin, flags=('--force-reinstall',))}); "
                           "if it persists, report the traceback to the plugin's authors"
                           + ("" if ours else
                              f", and remove it meanwhile: {pip.uninstall(plugin)}"),
                       detail=row["detail"], commands=[command])
    # unavailable: the plugin is here, its probe says why the device is not
    _, driver_seen = driver_note(kind, drivers)
    seen = "; ".join(s for s in (_seen_details(row["details"]), driver_seen) if s)
    commands = _probe_commands(row, report, matrix)
    return Finding(row["reference"] or f"{kind}-unavailable",
                   "problem" if kind == "cpu" else "warning",
                   f"{kind}: unavailable: {row['reason']}", seen=seen, fix=row["fix"],
                   commands=commands)


def _plugin_record(report: dict, row: dict) -> dict:
    return next((p for p in report.get("plugins", ()) if p["name"] == row["plugin"]), {})


def _version_of(report: dict, row: dict) -> str:
    return _plugin_record(report, row).get("version", "")


def _requires(report: dict, row: dict) -> str:
    return (_plugin_record(report, row).get("requires_ember") or "").strip("()[] ")


def plugin_findings(report: dict) -> list[Finding]:
    """Broken plugins that no backend row already speaks for (third-party ones)."""
    covered = {row["plugin"] for row in report["backends"] if row["plugin"]}
    ember = report.get("components", {}).get("ember", {}).get("version", "")
    pip = _installer()
    found = []
    for rec in report["plugins"]:
        if rec["name"] in covered or rec["status"] not in ("failed", "incompatible", "hung"):
            continue
        name = rec["distribution"] or rec["name"]
        lines = rec["error"].strip().splitlines()
        if rec["status"] == "hung":
            found.append(Finding("plugin-hung", "problem", f"plugin {name}: {rec['error']}",
                                 fix=f"remove it ({pip.uninstall(name)}) and report the hang to "
                                     "its authors", commands=[pip.uninstall(name)]))
        elif rec["status"] == "failed":
            found.append(Finding("plugin-failed", "problem",
                                 f"plugin {name} failed to load: {lines[-1] if lines else ''}",
                                 fix=f"upgrade or reinstall it (pip install -U --force-reinstall "
                                     f"{name}); if it still fails, report the traceback to its "
                                     f"authors and remove it meanwhile: {pip.uninstall(name)}",
                                 detail=rec["error"], commands=[pip.uninstall(name)]))
        else:
            fix, commands = range_fix(name, rec.get("version", ""),
                                      (rec.get("requires_ember") or "").strip("()[] "), ember)
            found.append(Finding("plugin-api-incompatible", "problem",
                                 f"plugin {name} is incompatible with this ember and was not "
                                 "imported", seen=rec["error"], fix=fix, commands=commands))
    return found


def output_findings(report: dict) -> list[Finding]:
    """Plugins that print to stdout: it breaks `--json`, pipes and scripts (the doctor
    captured it; `seen` shows what)."""
    found = []
    pip = _installer()
    rows = [(rec["distribution"] or rec["name"], "at import", rec.get("output") or {})
            for rec in report["plugins"]]
    rows += [(row["distribution"] or row["type"], "in its probe", row.get("output") or {})
             for row in report["backends"]]
    for name, when, output in rows:
        text = (output.get("stdout") or "").strip()
        if not text:
            continue
        first = text.splitlines()[0][:120]
        third_party = name not in pip.first_party and name != "ember"
        found.append(Finding("plugin-prints", "warning",
                             f"plugin {name} writes to standard output {when} (ember "
                             "captured it; scripts that read ember's output would not)",
                             seen=first, fix="report it to the plugin's authors"
                             + (f"; to be rid of it: {pip.uninstall(name)}" if third_party
                                else ""),
                             detail=text, commands=[pip.uninstall(name)] if third_party else []))
    return found


def conflict_findings(report: dict, matrix: Matrix) -> list[Finding]:
    """Two plugins that claim the same device type: only one serves it, and for the CuPy
    plugins the wheels under them overwrite each other's `cupy` folder.  The fix removes
    every claimant and every such wheel first, then installs the preferred one."""
    pip = _installer()
    claims: dict = {}
    for rec in report["plugins"]:
        if rec["status"] in ("loaded", "failed") and rec["device_types"]:
            claims.setdefault(rec["device_types"][0], []).append(rec)
    installed = report.get("packages", {})
    found = []
    for kind, recs in claims.items():
        if len(recs) < 2:
            continue
        dists = [r["distribution"] or r["name"] for r in recs]
        wheels = sorted(n for n in installed if _is_cupy(n))
        keep = next((p for p in matrix.plugins_for(kind) if p["distribution"] in dists), None)
        commands = [pip.uninstall(*dists, *wheels)]
        if keep is not None:
            commands.append(pip.localize(keep["install"]))
        found.append(Finding(
            "plugins-claim-same-type", "problem",
            f"{kind}: {len(recs)} plugins claim '{kind}' ({', '.join(dists)}); only one serves "
            "it, and which one is an accident of load order",
            seen=", ".join(f"{r['name']} ({r['distribution']} {r['version']})" for r in recs)
            + (f"; wheels: {', '.join(wheels)}" if wheels else ""),
            fix="uninstall all of them and the libraries they bring, then install one"
            + (f" ({keep['distribution']}, or another of them)" if keep else ""),
            commands=commands))
    return found


# Findings that carry a library's own error text (a traceback, a probe's error) rather
# than ember's explanation of it.
RAW_ERRORS = ("plugin-failed", "smoke-error", "smoke-timeout", "cupy-import-failed",
              "opencl-pyopencl-broken", "cuda-device-query-failed", "opencl-build-failed",
              "cuda-query-failed", "rocm-query-failed")


def decode(findings: list[Finding], matrix: Matrix) -> list[Finding]:
    """Tracebacks and error texts in findings that `ember compat explain` knows: the
    finding says what they mean, and takes the known fix's commands when it has none."""
    out = []
    for f in findings:
        text = "\n".join((f.message, f.detail))
        known = explain(text, matrix) if f.reference in RAW_ERRORS else []
        if known:
            k = known[0]
            here = k.seen_in(text)
            f = Finding(f.reference, f.severity, f.message,
                        seen="; ".join(x for x in (f.seen, f"known error {k.id}: {k.meaning}"
                                                   + (f" ({here})" if here else "")) if x),
                        fix=f.fix or k.fix_here(text), source=f.source, detail=f.detail,
                        commands=f.commands or [localize(c) for c in k.commands])
        out.append(f)
    return out


def root_causes(findings: list[Finding]) -> list[Finding]:
    """A failed plugin on an environment ember does not support (NumPy too old...) gets
    that rule's explanation and commands: fixing the environment fixes the plugin."""
    roots = [f for f in findings if f.reference in ROOT_RULES and f.severity == "problem"]
    if not roots:
        return findings
    root = roots[0]
    out = []
    for f in findings:
        if f.reference == "plugin-failed":
            f = Finding(f.reference, f.severity, f.message,
                        seen=f"probably because {root.message}", fix=root.fix,
                        source=root.source, detail=f.detail, commands=root.commands)
        out.append(f)
    return out


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
    conflicts = conflict_findings(report, matrix)
    findings = [backend_finding(row, drivers, report, matrix) for row in report["backends"]]
    if conflicts:
        # the conflict's commands fix the CuPy probe's complaint about two wheels too
        findings = [f for f in findings if f.reference != "cupy-multiple-packages"]
    findings += conflicts + plugin_findings(report) + output_findings(report)
    findings += smoke_findings(report) + rule_findings(results, facts)
    return results, root_causes(decode(findings, matrix))
