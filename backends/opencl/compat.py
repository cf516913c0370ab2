"""The OpenCL plugin's compat-matrix data (returned by its ember_compat hook)."""
from __future__ import annotations

DATA = {
    "meta": {"title": "ember-opencl: what the OpenCL plugin needs", "checked": "2026-11-30"},
    "rule": [
        {
            "id": "ember-opencl-pyopencl-floor",
            "summary": "ember-opencl needs pyopencl >= 2024.1",
            "when": {"ember-opencl": "*"},
            "require": {"pyopencl": ">=2024.1"},
            "severity": "problem",
            "support": "declared",
            "source": "plugins/ember-opencl/pyproject.toml (dependencies: pyopencl>=2024.1)",
            "date": "2026-11-30",
            "fix": "pip install -U pyopencl",
        },
        {
            "id": "ember-opencl-pocl-tested",
            "summary": "ember-opencl's conformance tests pass on PoCL from "
                       "pocl-binary-distribution 3.0 (PoCL 3.0, LLVM 14, CPU device)",
            "when": {"ember-opencl": "*", "pocl-binary-distribution": "*"},
            "require": {"pocl-binary-distribution": ">=3.0"},
            "severity": "warning",
            "support": "tested",
            "source": "tests/plugins/test_opencl*.py run on pocl-binary-distribution 3.0",
            "date": "2026-11-30",
            "fix": "pip install -U pocl-binary-distribution",
        },
    ],
}
