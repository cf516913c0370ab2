"""Renderers: findings, reports and tables as rich text readable at 80 columns, or JSON."""
from __future__ import annotations

import contextlib
import io
import json
import sys

from .findings import SEVERITIES, worst

STYLE = {"ok": "green", "warning": "yellow", "problem": "bold red", "pass": "green",
         "fail": "bold red", "unknown": "yellow", "not installed": "dim",
         "unavailable": "yellow", "failed": "bold red", "incompatible": "bold red",
         "disabled": "dim", "mismatch": "bold red", "error": "bold red", "timeout": "bold red",
         "hung": "bold red", "invalid": "bold red"}


@contextlib.contextmanager
def console(file=None):
    """A rich console for one rendering.  On a terminal it wraps to the terminal; otherwise
    (pipes, files, tests) to $COLUMNS or 80 columns, without colour or trailing blanks."""
    from rich.console import Console
    file = file or sys.stdout
    if file.isatty():
        yield Console(file=file, highlight=False)
        return
    buffer = io.StringIO()
    yield Console(file=buffer, highlight=False, color_system=None)
    file.write("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))


def _text(value, style: str = ""):
    from rich.text import Text
    return Text(str(value), style=style)


def _status(value: str):
    return _text(value, STYLE.get(value, ""))


def _table(*columns: str):
    from rich import box
    from rich.table import Table
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name in columns:
        table.add_column(name, overflow="fold")
    return table


def _section(out, title: str, table) -> None:
    out.print(_text(title, "bold"))
    out.print(table)
    out.print()


def write_json(data: dict, file=None) -> None:
    out = file or sys.stdout
    json.dump(data, out, indent=2)
    out.write("\n")


def findings_block(out, findings, *, show_ok: bool = False) -> None:
    """Each finding as a short block: severity and reference, message, seen, fix, source."""
    from rich.padding import Padding
    for f in sorted(findings, key=lambda f: -SEVERITIES.index(f.severity)):
        if f.severity == "ok" and not show_ok:
            continue
        head = _text(f"{f.severity:<8}", STYLE[f.severity])
        head.append(f" {f.reference}", style="bold")
        out.print(head)
        lines = [("", f.message), ("seen: ", f.seen), ("fix: ", f.fix), ("source: ", f.source)]
        for label, value in lines:
            if value:
                out.print(Padding(_text(label + value), (0, 0, 0, 2)))
        for command in f.commands:
            out.print(Padding(_text(shell_lines(command), "bold"), (0, 0, 0, 4)))
        if f.detail:
            out.print(Padding(_text(f.detail.rstrip(), "dim"), (0, 0, 0, 4)))


def shell_lines(command: str, width: int = 74) -> str:
    """'$ command', broken between words with a trailing backslash where it is longer than
    `width`: still one command when copied into a shell (rich would break it anywhere)."""
    lines, line = [], "$"
    for word in command.split(" "):
        if len(line) + 1 + len(word) > width and line not in ("$", "  "):
            lines.append(line + " \\")
            line = "  "
        line += " " + word if line not in ("  ",) else word
    return "\n".join([*lines, line])


def summary(out, findings) -> None:
    counts = {s: sum(f.severity == s for f in findings) for s in SEVERITIES}
    level = worst(findings)
    code = SEVERITIES.index(level)
    line = _text(f"exit {code}: ", STYLE[level])
    line.append(f"{counts['problem']} problem(s), {counts['warning']} warning(s), "
                f"{counts['ok']} ok")
    out.print(line)


def _memory(value) -> str:
    if not value:
        return ""
    return f"{value / 2**30:.1f} GiB" if value >= 2**30 else f"{value / 2**20:.0f} MiB"


def _short(text: str, words: int) -> str:
    """The head of a long driver string: 'OpenCL 3.0 PoCL HSTR: ...' -> 'OpenCL 3.0'."""
    head = text.split(" (")[0]
    return " ".join(head.split()[:words])


def devices_table(rows: list[dict]):
    """The device table of `ember devices` and the doctor (full strings are in --json)."""
    table = _table("device", "name", "kind", "platform", "version", "memory", "fp64", "fp16")
    for row in rows:
        for d in row["devices"]:
            table.add_row(d["device"], _text(d["name"]), d["kind"],
                          _text(_short(d["platform"], 3)), _text(_short(d["version"], 2)),
                          _memory(d["memory"]), "yes" if d["fp64"] else "no",
                          "yes" if d["fp16"] else "no")
    return table


def complex_line(rows: list[dict]) -> str:
    """The complex dtypes each device declares (its capabilities: a GPU without fp64 has no
    complex128), one line under the device table."""
    parts = []
    for row in rows:
        for d in row["devices"]:
            found = [n for n in ("complex64", "complex128") if n in (d.get("dtypes") or ())]
            parts.append(f"{d['device']} {' '.join(found) or 'none'}")
    return "complex dtypes: " + "; ".join(parts)


def backends_table(rows: list[dict], drivers: dict):
    from .diagnose import driver_note
    table = _table("type", "status", "why not / fix")
    for row in rows:
        if row["status"] == "ok":
            why = _text(", ".join(d["device"] for d in row["devices"]))
        else:
            why = _text(row["reason"])
            hardware, seen = driver_note(row["type"], drivers)
            # the probe may have said it already ("no NVIDIA driver was found (...)")
            if seen and not hardware and seen.split(" (")[0] not in row["reason"]:
                why.append(f"; {seen}")
            if row["fix"]:
                why.append(f"\nfix: {row['fix']}", style="bold")
        table.add_row(row["type"], _status(row["status"]), why)
    return table


def plugins_table(plugins: list[dict]):
    table = _table("plugin", "distribution", "ember range", "status")
    for p in plugins:
        dist = " ".join(x for x in (p["distribution"], p["version"]) if x)
        table.add_row(p["name"], _text(dist), _text(p["requires_ember"] or "any"),
                      _status(p["status"]))
    return table


def smoke_table(runs: list[dict]):
    table = _table("device", "result", "seconds", "detail")
    for run in runs:
        detail = run["detail"].strip().splitlines()
        table.add_row(run["device"], _status(run["status"]), f"{run['seconds']:g}",
                      _text(detail[-1] if detail else ""))
    return table


def rules_line(results) -> str:
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "unknown")}
    return (f"{len(results)} rule(s) apply here: {counts['pass']} passed, {counts['fail']} "
            f"failed, {counts['unknown']} lack a version to check")


def doctor(report: dict, findings, results, file=None) -> None:
    comps = report["components"]
    version = {k: comps.get(k, {}).get("version", "?") for k in ("ember", "python", "numpy")}
    with console(file) as out:
        out.print(_text(f"ember {version['ember']} (plugin API {report['plugin_api']}), "
                        f"Python {version['python']}, NumPy {version['numpy']}, "
                        f"{report['platform']['system']} {report['platform']['machine']}",
                        "bold"))
        from .envinfo import summary_lines
        for line in summary_lines(report):
            out.print(_text(line, "dim"))
        out.print()
        _section(out, "Backends", backends_table(report["backends"], report["drivers"]))
        if any(row["devices"] for row in report["backends"]):
            out.print(_text("Devices", "bold"))
            out.print(devices_table(report["backends"]))
            out.print(_text(complex_line(report["backends"])))
            out.print()
        _section(out, f"Plugins (this ember speaks plugin API {report['plugin_api']})",
                 plugins_table(report["plugins"]))
        if report["smoke"]:
            _section(out, "Smoke tests (vs NumPy, each in a subprocess)",
                     smoke_table(report["smoke"]))
        out.print(_text("Compatibility matrix", "bold"))
        out.print(_text(rules_line(results) + " (`ember compat check` lists them)"))
        out.print()
        if any(f.severity != "ok" for f in findings):
            out.print(_text("Needs attention", "bold"))
            findings_block(out, findings)
            out.print()
        summary(out, findings)


def compat_check(facts, results, findings, file=None) -> None:
    with console(file) as out:
        table = _table("component", "version", "from")
        for name, entry in facts.to_dict().items():
            table.add_row(name, _text(entry["version"]), _text(entry["origin"]))
        _section(out, "Facts", table)
        rules = _table("rule", "result", "seen")
        for r in results:
            needs = f"; needs {', '.join(r.missing)}" if r.missing else ""
            rules.add_row(r.rule.id, _status(r.status), _text(r.seen + needs))
        _section(out, "Rules that apply", rules)
        out.print(_text(rules_line(results)))
        out.print()
        findings_block(out, findings)
        if any(f.severity != "ok" for f in findings):
            out.print()
        summary(out, findings)


def error_list(matrix, file=None) -> None:
    """`ember compat explain --list`: each known error or category, its id and the first
    sentence of its meaning (a family's catch-all marked generic)."""
    file = file or sys.stdout
    for known in matrix.errors:
        print(f"{known.id}{' (generic)' if known.generic else ''}: "
              f"{_first_sentence(known.meaning)}", file=file)


def _first_sentence(text: str) -> str:
    """Up to the first '. ' outside parentheses that a capital letter follows ('e.g. a'
    and '(cuDNN; rocBLAS)' stay inside)."""
    depth = 0
    for k, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if c == "." and depth == 0 and text[k + 1:k + 2] == " " and text[k + 2:k + 3].isupper():
            return text[:k]
    return text.rstrip(".")


def explain(matches, matrix, file=None, text: str = "") -> None:
    """`ember compat explain`: for each reading of the text, what this message says (the
    codes in it, with the vendor's words), what it means, its causes and, where the text
    cannot decide between them, the checks in order; the fix in the words of the reader's
    library.  Commands are printed as written for the package index, never rewritten with
    this machine's paths: the message may come from another machine.  Plain wrapped text
    (not rich: explain is a command people run often, and rich takes a tenth of a second
    to load)."""
    import os
    import shutil
    import textwrap

    from .compat_eval import explain_codes, reader_of

    file = file or sys.stdout
    tty = file.isatty()
    width = (shutil.get_terminal_size((80, 24)).columns if tty
             else int(os.environ.get("COLUMNS", "") or 80))
    width = max(40, width)
    lines: list[str] = []

    def line(words, indent=2, hang=0):
        lines.extend(textwrap.wrap(str(words), width - 1, initial_indent=" " * indent,
                                   subsequent_indent=" " * (indent + hang),
                                   break_on_hyphens=False) or [""])

    if not matches:
        line("No known error matched. `ember doctor` shows what works here; "
             "`ember doctor --json` makes a report to attach to a bug.", indent=0)
    who = reader_of(text)
    for known in matches:
        lines.append(f"\033[1m{known.id}\033[0m" if tty else known.id)
        seen = known.seen_in(text)
        if seen:
            line("here: " + seen)
        for hit in explain_codes(text, known):
            line(f"code: {hit.code.family} {hit.code.describe()}", hang=6)
        line(known.meaning)
        if len(known.causes) > 1:
            line("the message alone does not tell which of these it is:")
            for cause in known.causes:
                line(f"- {cause}", indent=4, hang=2)
        elif known.causes:
            line(f"cause: {known.causes[0]}")
        if known.checks:
            line("check, in this order:")
            for k, check in enumerate(known.checks, 1):
                line(f"{k}. {check}", indent=4, hang=3)
        fix = known.fix_here(text)
        line(("fix" + (f" ({who})" if fix != known.fix else "") + ": ") + fix)
        for command in known.commands:
            lines.extend("    " + ln for ln in shell_lines(command).splitlines())
        for rule_id in known.rules:
            rule = matrix.rule(rule_id)
            line(f"{rule.summary} (source: {rule.source})")
        line("source: " + known.source, hang=2)
        lines.append("")
    file.write("".join(ln.rstrip() + "\n" for ln in lines))


def devices(rows: list[dict], file=None) -> None:
    """`ember devices`: the table, then one line per device type without devices."""
    with console(file) as out:
        out.print(devices_table(rows))
        if any(row["devices"] for row in rows):
            out.print(_text(complex_line(rows)))
        for row in rows:
            if row["status"] != "ok":
                line = f"{row['type']}: {row['status']}"
                line += f": {row['fix']}" if row["status"] == "not installed" else (
                    f": {row['reason']}" if row["reason"] else "")
                out.print(_text(line, "dim"))
        if any(row["status"] != "ok" for row in rows):
            out.print(_text("(`ember doctor` explains each and checks versions)", "dim"))


def ops(found: dict, file=None) -> None:
    """`ember ops`: op x backend ('yes', or '-' where the op runs only through the CPU
    fallback that EMBER_FALLBACK allows), then each backend's dtypes and extra kernels."""
    kinds = list(found["backends"])
    with console(file) as out:
        table = _table("op", "family", *kinds)
        for name, family in found["ops"]:
            cells = [_text("yes", "green") if name in found["backends"][k]["kernels"]
                     else _text("-", "bold red") for k in kinds]
            table.add_row(name, family, *cells)
        out.print(table)
        names = {name for name, _ in found["ops"]}
        for kind, info in found["backends"].items():
            have = len(names & info["kernels"])
            line = f"{kind}: {have}/{len(names)} primitives; dtypes: {', '.join(info['dtypes'])}"
            extra = sorted(info["kernels"] - names)
            if extra:
                line += f"; own kernels for composites: {', '.join(extra)}"
            out.print(_text(line))
        for kind, reason in found["unavailable"].items():
            out.print(_text(f"{kind}: not available ({reason})", "dim"))
        out.print(_text("'-': no kernel; the op then needs EMBER_FALLBACK=warn or allow "
                        "(runs on the CPU)", "dim"))
