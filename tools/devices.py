"""`ember devices`: the devices of every available backend, and why the others have none."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="write the backends as JSON")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                        help="limit for each plugin import and backend probe (default 5)")


def broken_rows(rows: list[dict], records) -> list[dict]:
    """Rows for the installed plugins no row speaks for (third-party ones that failed,
    were refused or are disabled), each under the type it claims or its entry-point name."""
    from ember.plugins import BROKEN

    from .collect import _last_line, scrub
    covered = {row["plugin"] for row in rows} | {row["type"] for row in rows}
    out = []
    for rec in records:
        kind = rec.device_types[0] if rec.device_types else rec.name
        if rec.status not in BROKEN or rec.name in covered or kind in covered:
            continue
        out.append({"type": kind, "status": rec.status, "plugin": rec.name,
                    "distribution": rec.distribution, "reason": scrub(_last_line(rec.error)),
                    "fix": scrub(rec.fix), "reference": f"plugin-{rec.status}", "details": {},
                    "devices": [], "detail": scrub(rec.error)})
    return out


def run(args: argparse.Namespace) -> int:
    from ember import plugins

    from . import collect, guard, loading, render
    from .compat_eval import load_matrix

    matrix, _ = load_matrix()
    # plugin code runs under deadlines, its prints captured: a hang cannot stall the list
    with guard.Capture() as capture, loading.guarded(args.timeout, capture) as loads:
        rows = collect.backend_rows(matrix, loads=loads, timeout=args.timeout, capture=capture)
        rows += broken_rows(rows, plugins.records())
    for row in rows:
        trouble = loads.get(row["plugin"], {}).get("trouble")
        if trouble and row["status"] != "hung":
            row.update(status="hung", reason=collect.trouble_text(trouble, args.timeout))
    if args.json:
        render.write_json({"backends": rows})
        return 0
    render.devices(rows)
    return 0
