"""`ember --version`, `python -m ember` (the same CLI as the console script) and one source
of truth for the version: core/_version.py, which the package metadata is built from."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import ember
import pytest
from ember.tools.cli import main

try:
    import tomllib
except ModuleNotFoundError:                      # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_written_once_and_is_the_metadatas():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "the version lives in core/_version.py only"
    assert "version" in project["project"]["dynamic"]
    assert (project["tool"]["setuptools"]["dynamic"]["version"]
            == {"attr": "ember._version.__version__"})
    assert ember.__version__ == importlib.metadata.version("ember")


def test_version_option(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"ember {ember.__version__}"


def _run(*argv):
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)


def test_python_dash_m_ember_is_the_same_cli(capsys):
    done = _run("-m", "ember", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ember {ember.__version__}"
    helped = _run("-m", "ember", "--help")
    assert helped.returncode == 0, helped.stderr
    with pytest.raises(SystemExit):
        main(["--help"])
    assert helped.stdout == capsys.readouterr().out
    for command in ("doctor", "devices", "ops", "run", "export", "demo", "bench", "compat"):
        assert command in helped.stdout
    # a subcommand's arguments and the exit status come through it too
    wrong = _run("-m", "ember", "export", "--no-such-option")
    assert wrong.returncode == 2
    assert "usage: ember export" in wrong.stderr


def test_console_script_version_skips_the_tensor_library():
    """`ember --version` (the console script's entry, ember_cli.main) answers from
    ember/_version.py without importing the tensor library."""
    code = ("import sys, ember_cli; code = ember_cli.main(['--version']); "
            "print('numpy' in sys.modules, 'ember.tensor' in sys.modules); sys.exit(code)")
    done = _run("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"ember {ember.__version__}", "False False"]


def test_console_ends_at_once_when_a_guarded_call_outlived_its_deadline():
    """A plugin import or probe still running past its deadline (a hung driver) must not
    be stopped by the interpreter's shutdown inside C++ code (an abort, status 134, that
    can lose the unflushed report): the console flushes and ends the process with main()'s
    status, running no exit handlers.  Without such a thread it exits normally."""
    template = (
        "import atexit, sys, time, ember_cli\n"
        "from ember.tools import guard\n"
        "atexit.register(lambda: print('exit handlers ran'))\n"
        "def main(argv=None):\n"
        "    {call}\n"
        "    sys.stdout.write('the report')\n"
        "    return 3\n"
        "ember_cli.main = main\n"
        "ember_cli.console()\n")
    hung = _run("-c", template.format(call="guard.call(time.sleep, 600, timeout=0.05)"))
    assert hung.returncode == 3, hung.stderr
    assert hung.stdout == "the report"
    done = _run("-c", template.format(call="guard.call(time.sleep, 0, timeout=60)"))
    assert done.returncode == 3, done.stderr
    assert done.stdout == "the reportexit handlers ran\n"
