"""The `ember` console script: one subcommand per module under ember.tools, imported lazily."""
from __future__ import annotations

import argparse
import importlib
import sys

# subcommand -> module; each module provides add_arguments(parser) and run(args) -> int
COMMANDS = {
    "demo": ("ember.tools.demo", "train a small CNN on the bundled digits data"),
    "warmup": ("ember.tools.warmup", "build a device's OpenCL programs ahead of time"),
    "doctor": ("ember.tools.doctor", "diagnose which backends work here and how to fix the rest"),
    "devices": ("ember.tools.devices", "list the devices of every available backend"),
    "ops": ("ember.tools.ops", "op coverage: which ops each backend implements"),
    "compat": ("ember.tools.compat", "evaluate the compatibility matrix (check, explain)"),
    "bench": ("ember.tools.bench", "per-op overhead and workloads against NumPy and PyTorch"),
    "run": ("ember.tools.run", "start a data-parallel job: ember run -n N script.py ..."),
    "export": ("ember.tools.export", "inspect or verify an exported program file"),
    "torch-api": ("ember.tools.torch_api", "how much of the PyTorch API ember has, by namespace"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `only`, the arguments of that subcommand alone are built, so that
    `ember demo` imports the demo's module and not the doctor's (whose import changes
    what OpenCL caches in this process, backends/opencl/caches.py)."""
    from ember._version import __version__
    parser = argparse.ArgumentParser(prog="ember", description="ember tensor framework tools")
    parser.add_argument("-V", "--version", action="version", version=f"ember {__version__}",
                        help="print ember's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module)
        if only is not None and name != only:
            continue
        try:
            importlib.import_module(module).add_arguments(p)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            p.set_defaults(_missing=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    if getattr(args, "_missing", False):
        print(f"ember {args.command}: this command is not part of this build", file=sys.stderr)
        return 2
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except BrokenPipeError:
        # `ember ... | head`: the reader left; exit quietly, as Unix tools do
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
