"""The MPI communication backend (mpi4py over MPICH from PyPI, or any MPI mpi4py finds).

The plugin distribution ember-mpi registers it through `ember_process_groups()`.
Constructing it imports nothing: mpi4py (which initialises MPI) is imported when a process
group is made, and by `ember doctor`'s check in a child process.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

from ember.backend import Probe

__all__ = ["MPIBackend", "doctor_check"]

FIX = "pip install ember-mpi   (from this repository: pip install ./plugins/ember-mpi)"


class MPIBackend:
    """init_process_group(backend="mpi"): every device type, the host's natively."""

    name = "mpi"
    device_types = ("cpu",)

    def __repr__(self) -> str:
        return "MPIBackend()"

    def probe(self) -> Probe:
        if importlib.util.find_spec("mpi4py") is None:
            return Probe(False, "mpi4py is not installed", FIX, "mpi-no-mpi4py")
        return Probe(True)

    def connect(self, *, rank=None, size=None, control=None, device_index=None,
                timeout: float = 0.0):
        from mpi4py import MPI

        from .communicator import MPICommunicator
        return MPICommunicator(MPI.COMM_WORLD.Dup())


_LIBRARY = ("from mpi4py import MPI; import mpi4py; "
            "print(mpi4py.__version__); print(MPI.Get_library_version().splitlines()[0])")


def doctor_check() -> list[dict]:
    """`ember doctor`: does MPI load here, and is there a launcher to start a job with."""
    if importlib.util.find_spec("mpi4py") is None:
        return [dict(reference="mpi-no-mpi4py", severity="problem",
                     message="the MPI communication backend needs mpi4py, which is not "
                             "installed", fix=FIX)]
    try:
        done = subprocess.run([sys.executable, "-c", _LIBRARY], capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return [dict(reference="mpi-init-hangs", severity="problem",
                     message="initialising MPI did not finish within 60 s",
                     fix="check the MPI installation: python -c 'from mpi4py import MPI'")]
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return [dict(reference="mpi-no-library", severity="problem",
                     message="mpi4py is installed but cannot load an MPI library",
                     seen=last, detail=done.stderr,
                     fix="pip install mpich   (or load your cluster's MPI module)")]
    version, library = (done.stdout.strip().splitlines() + ["", ""])[:2]
    launcher = shutil.which("mpiexec")
    found = [dict(reference="mpi-ok", severity="ok",
                  message="MPI communication backend works (init_process_group('mpi'))",
                  seen=f"mpi4py {version}; {library.strip()}")]
    if launcher is None:
        found.append(dict(reference="mpi-no-mpiexec", severity="warning",
                          message="no mpiexec on PATH: `ember run -n N` cannot start a job",
                          fix="pip install mpich   (it brings mpiexec)"))
    else:
        found.append(dict(reference="mpi-mpiexec", severity="ok",
                          message="jobs start with `ember run -n N script.py`",
                          seen=f"mpiexec at {launcher}"))
    return found
