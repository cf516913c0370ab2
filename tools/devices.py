"""`ember devices`: the devices of every available backend, and why the others have none."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="write the backends as JSON")


def run(args: argparse.Namespace) -> int:
    from . import collect, render
    from .compat_eval import load_matrix

    matrix, _ = load_matrix()
    rows = collect.backend_rows(matrix)
    if args.json:
        render.write_json({"backends": rows})
        return 0
    render.devices(rows)
    return 0
