"""The `ember` console script's entry point, a package of its own so that it loads before
(and without) the `ember` package: `import ember` builds the whole tensor library (NumPy,
every op, the plugins: about a second), which `ember compat explain` does not need.  For
that subcommand the `ember` package is registered without running its __init__, so that
only the modules explain uses load (ember.tools.*, ember.compat_matrix, ember.errors);
every other subcommand runs through ember.tools.cli with the full package."""
from __future__ import annotations

import importlib.util
import os
import sys

# subcommands that need no tensor library: (command, action)
LIGHT = {("compat", "explain")}


def _light(argv: list[str]) -> bool:
    words = [a for a in argv if not a.startswith("-")]
    return tuple(words[:2]) in LIGHT


def _bare_ember() -> None:
    """Register the `ember` package without executing its __init__: its submodules still
    import, each with only what it imports itself."""
    if "ember" in sys.modules:
        return
    spec = importlib.util.find_spec("ember")
    if spec is None:
        return
    sys.modules["ember"] = importlib.util.module_from_spec(spec)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv in (["--version"], ["-V"]):
        # the version alone: from ember/_version.py, without the tensor library (the same
        # text as the parser's --version action in ember.tools.cli)
        _bare_ember()
        from ember._version import __version__
        print(f"ember {__version__}")
        return 0
    if _light(argv):
        _bare_ember()
    from ember.tools.cli import main as run
    return run(argv)


def console() -> None:
    """The `ember` console script and `python -m ember`: main(), then the process's exit.
    Where a plugin import or device probe outlived its deadline (ember.tools.guard), its
    thread is still running; the interpreter's shutdown would stop it inside C/C++ code,
    which can abort the process after the report was written but before it was flushed.
    The streams are flushed and the process ends at once instead, with main()'s status."""
    code = main()
    guard = sys.modules.get("ember.tools.guard")
    if guard is not None and guard.abandoned():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        # sys.exit's meaning of main()'s value: None is 0, an int itself, anything else 1
        os._exit(0 if code is None else code if isinstance(code, int) else 1)
    sys.exit(code)


if __name__ == "__main__":
    console()
