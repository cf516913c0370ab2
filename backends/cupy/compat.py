"""What each CuPy plugin distribution needs (CUDA/ROCm range, driver floor) as compat data."""
from __future__ import annotations

from dataclasses import dataclass

_CHECKED = "2026-11-30"
_NVIDIA_NOTES = ("https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html (table "
                 "'CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version "
                 "Compatibility')")
_CUPY_INSTALL = "https://docs.cupy.dev/en/stable/install.html (Installing CuPy from PyPI)"


@dataclass(frozen=True)
class Flavour:
    """One first-party CuPy plugin: the device type it serves and the CuPy wheel under it."""

    distribution: str        # "ember-cuda12"
    kind: str                # the device type: "cuda" or "rocm"
    wheel: str               # the CuPy binary package it depends on
    major: int               # the CUDA or ROCm major release the wheel is built for
    runtime_range: str       # PEP 440 range of that runtime (matrix component = kind)
    min_driver: str = ""     # NVIDIA Linux driver floor; "" where the runtime is the driver


FLAVOURS = {
    "ember-cuda12": Flavour("ember-cuda12", "cuda", "cupy-cuda12x", 12, ">=12,<13", "525.60.13"),
    "ember-cuda13": Flavour("ember-cuda13", "cuda", "cupy-cuda13x", 13, ">=13,<14", "580"),
    "ember-rocm": Flavour("ember-rocm", "rocm", "cupy-rocm-7-0", 7, ">=7.0,<7.1"),
}

# NVIDIA driver floor per CUDA major (minor version compatibility covers the rest)
MIN_DRIVER = {f.major: f.min_driver for f in FLAVOURS.values() if f.kind == "cuda"}

# Which wheel serves which platform, for "CuPy is not installed" messages.
WHEEL_GUIDE = ("cupy-cuda12x for CUDA 12 (NVIDIA driver >= 525.60.13), cupy-cuda13x for "
               "CUDA 13 (driver >= 580), cupy-rocm-7-0 for AMD ROCm 7.0")


def compat_data(distribution: str) -> dict:
    """The ember_compat() data of one plugin, in the compat_matrix TOML schema.

    Rule ids are prefixed with the distribution so they never collide with the built-in
    matrix (which describes the CuPy wheels themselves).
    """
    f = FLAVOURS[distribution]
    pyproject = f"plugins/{f.distribution}/pyproject.toml"
    rules = [{
        "id": f"{f.distribution}-{f.kind}-range",
        "summary": f"{f.distribution} runs CuPy from {f.wheel}, built for "
                   f"{'CUDA' if f.kind == 'cuda' else 'ROCm'} {f.runtime_range}",
        "when": {f.distribution: "*"},
        "require": {f.kind: f.runtime_range},
        "severity": "problem",
        "support": "declared",
        "source": f"{pyproject} (dependencies: {f.wheel}); {_CUPY_INSTALL}",
        "date": _CHECKED,
        "fix": _runtime_fix(f),
    }]
    if f.min_driver:
        rules.append({
            "id": f"{f.distribution}-driver-too-old",
            "summary": f"{f.distribution} (CUDA {f.runtime_range}) needs an NVIDIA Linux "
                       f"driver >= {f.min_driver}",
            "when": {f.distribution: "*"},
            "require": {"driver": f">={f.min_driver}"},
            "severity": "problem",
            "support": "declared",
            "source": _NVIDIA_NOTES,
            "date": _CHECKED,
            "fix": _driver_fix(f),
        })
    return {"meta": {"title": f"{f.distribution}: CuPy runtime range and driver floor",
                     "checked": _CHECKED},
            "rule": rules}


def _runtime_fix(f: Flavour) -> str:
    if f.kind == "rocm":
        return ("install ROCm 7.0 (https://rocm.docs.amd.com), or build CuPy from source "
                "against your ROCm")
    others = [g.distribution for g in FLAVOURS.values()
              if g.kind == "cuda" and g.distribution != f.distribution]
    return (f"install the plugin for the CUDA you have: pip uninstall -y {f.distribution} "
            f"{f.wheel} && pip install {' or '.join(others)}")


def _driver_fix(f: Flavour) -> str:
    fix = (f"upgrade the NVIDIA driver to {f.min_driver} or newer (your distribution's "
           "nvidia-driver package, or https://www.nvidia.com/drivers)")
    if f.distribution == "ember-cuda13":
        fix += "; or stay on CUDA 12: pip uninstall -y ember-cuda13 cupy-cuda13x && " \
               "pip install ember-cuda12"
    return fix
