"""The OpenCL plugin's compat-matrix data (returned by its ember_compat hook)."""
from __future__ import annotations

DATA = {
    "meta": {"title": "ember-opencl: what the OpenCL plugin needs", "checked": "2026-11-30"},
    "rule": [
        {
            # 2024.2.7 is the first pyopencl whose wheels are built against NumPy 2, which
            # ember needs (inducer/pyopencl#769): an older one fails to import
            "id": "ember-opencl-pyopencl-floor",
            "summary": "ember-opencl needs pyopencl >= 2024.2.7 (the first built for NumPy 2)",
            "when": {"ember-opencl": "*"},
            "require": {"pyopencl": ">=2024.2.7"},
            "severity": "problem",
            "support": "declared",
            "source": "plugins/ember-opencl/pyproject.toml (dependencies: pyopencl>=2024.2.7); "
                      "https://github.com/inducer/pyopencl/issues/769",
            "date": "2026-12-01",
            "fix": "pip install -U 'pyopencl>=2024.2.7'",
            "commands": ["pip install -U 'pyopencl>=2024.2.7'"],
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
