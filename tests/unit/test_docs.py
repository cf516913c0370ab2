"""The documentation builds from the code with warnings as errors (a missing docstring, a
docstring without its PyTorch section, a broken cross-reference or bad markup fails), and
every Python example in the guides runs.  The one command: see docs/conf.py."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


@pytest.mark.slow
def test_site_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("furo")
    pytest.importorskip("myst_parser")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-n",
                           "-q", "-b", "html", str(DOCS), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    html = tmp_path / "html"
    for page in ("index", "api/ember", "api/tensor", "api/nn", "api/backend", "api/cli",
                 "guides/differences", "guides/getting-started"):
        assert (html / f"{page}.html").is_file(), page
    # generated from the code: a name of ember.nn's __all__ and a CLI subcommand's option
    assert 'id="ember.nn.Linear"' in (html / "api" / "nn.html").read_text()
    assert "--json" in (html / "api" / "cli.html").read_text()


def _guide_blocks():
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        if "_build" in page.parts:
            continue
        blocks = BLOCK.findall(page.read_text())
        if blocks:
            out.append(pytest.param(page, blocks, id=str(page.relative_to(DOCS))))
    return out


@pytest.mark.parametrize(("page", "blocks"), _guide_blocks())
def test_guide_examples_run(page, blocks, tmp_path):
    """A page's ```python blocks run in order in one fresh process, on the CPU (a block
    that says `# needs: opencl` runs only where an OpenCL device is available)."""
    program = []
    for block in blocks:
        if block.startswith("# needs: opencl"):
            block = ("import ember as _e\nif any(str(d).startswith('opencl') for d in "
                     "_e.devices()):\n" + "".join("    " + line + "\n"
                                                   for line in block.splitlines()))
        program.append(block)
    if re.search(r"^(import|from) torch\b", "\n".join(program), re.M):
        pytest.importorskip("torch")
    script = tmp_path / "example.py"
    script.write_text("\n".join(program))
    env = {**os.environ, "EMBER_DEVICE": "cpu"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path, env=env)
    assert done.returncode == 0, f"{page}:\n{done.stderr[-4000:]}"
