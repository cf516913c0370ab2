"""ember.version (torch.version): ember's version, and the CUDA / ROCm runtime the GPU
backend of this install runs on (None where no such backend is available, as torch.version.cuda
is None in a CPU build).  `cuda` and `hip` load and probe the GPU plugin the first time they
are read (a subprocess that asks the driver); `import ember.version` does not."""
from __future__ import annotations

from ._version import __version__

__all__ = ["__version__", "cuda", "hip", "debug", "git_version"]  # noqa: F822  (cuda, hip: __getattr__)

debug = False
git_version = "unknown"        # ember is installed from a source tree, not a tagged build


def _runtime(kind: str) -> str | None:
    """The probed runtime version ("12.4") of the available backend for `kind`, else None."""
    from . import plugins
    backend = plugins.try_backend_for(kind)
    if backend is None or backend.name != kind:
        return None
    probe = getattr(backend, "_ember_probe", None) or backend.probe()
    return (probe.details or {}).get(kind) or None


def __getattr__(name: str):
    if name == "cuda":
        return _runtime("cuda")
    if name == "hip":
        return _runtime("rocm")
    raise AttributeError(f"module 'ember.version' has no attribute {name!r}")
