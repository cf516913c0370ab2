"""ember is a typed package (PEP 561, core/py.typed): mypy checks a user's script against
ember's own hints.  user_script.py (Tensor, nn.Module, optim, DataLoader) must be clean
under --strict; bad_script.py's marked lines must each be an error, so that the check is
real; and core/_tensor_methods.pyi (Tensor's table-bound methods as type checkers see them)
must match the table."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CONFIG = """\
[mypy]
strict = True
# nn.Module.__call__ returns Any, as torch's does (a module may return anything)
warn_return_any = False
cache_dir = {cache}
[mypy-ember.*]
follow_imports = silent
[mypy-ember]
follow_imports = silent
"""


def test_tensor_method_stub_matches_the_table():
    from ember.tools.tensor_stub import TARGET, render
    assert TARGET.read_text() == render(), (
        "core/_tensor_methods.pyi is stale: run python -m ember.tools.tensor_stub")


def test_user_script_type_checks_and_mistakes_are_caught(tmp_path):
    pytest.importorskip("mypy")
    # the source tree as the `ember` package (the editable install's import hook is
    # invisible to mypy); follow_imports=silent: ember's hints are used, its own
    # internals are not the user's errors
    (tmp_path / "path").mkdir()
    (tmp_path / "path" / "ember").symlink_to(ROOT / "core", target_is_directory=True)
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG.format(cache=tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config),
         str(HERE / "user_script.py"), str(HERE / "bad_script.py")],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
        env={"MYPYPATH": str(tmp_path / "path"), "PATH": "/usr/bin:/bin"})
    errors = re.findall(r"^(.*?):(\d+): error: (.*)$", done.stdout, re.M)
    assert [e for e in errors if not e[0].endswith("bad_script.py")] == [], done.stdout
    marked = {n for n, line in enumerate((HERE / "bad_script.py").read_text().splitlines(), 1)
              if "  # error:" in line}
    assert {int(n) for _, n, _ in errors} == marked, done.stdout


def test_user_script_runs():
    done = subprocess.run([sys.executable, str(HERE / "user_script.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > 0
