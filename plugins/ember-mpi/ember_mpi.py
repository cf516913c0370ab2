"""ember-mpi: registers ember's MPI communication backend (ember.distributed over mpi4py)."""
from __future__ import annotations

from ember.backends.mpi import MPIBackend, doctor_check
from ember.plugins import hookimpl

PLUGIN_API = 1          # the ember plugin API these hookimpls implement


@hookimpl
def ember_process_groups() -> list:
    # constructing the backend imports no mpi4py: MPI starts with the first process group
    return [MPIBackend()]


@hookimpl
def ember_doctor_checks() -> list:
    return [doctor_check]
