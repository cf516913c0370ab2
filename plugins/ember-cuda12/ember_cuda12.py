"""ember-cuda12: registers ember's CuPy backend for NVIDIA GPUs with CUDA 12 (cupy-cuda12x)."""
from __future__ import annotations

from ember.backends.cupy import CuPyBackend
from ember.backends.cupy.compat import compat_data
from ember.backends.cupy.nccl import ember_doctor_checks, ember_process_groups  # noqa: F401  (NCCL: ember.distributed)
from ember.plugins import hookimpl

PLUGIN_API = 1          # the ember plugin API these hookimpls implement
DISTRIBUTION = "ember-cuda12"


@hookimpl
def ember_backends() -> list:
    # constructing the backend imports no CuPy and touches no GPU (the hookspec's rule)
    return [CuPyBackend(DISTRIBUTION)]


@hookimpl
def ember_compat() -> dict:
    return compat_data(DISTRIBUTION)
