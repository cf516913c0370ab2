"""Process-wide questions and switches PyTorch programs call at start-up: finfo/iinfo,
thread counts, matmul precision, determinism, seeding, type names.

Where ember has no such knob the call is accepted and what it sets is remembered and
reported back; nothing here changes how a kernel computes.
"""
from __future__ import annotations

import os

import numpy as np

from . import dtypes as D
from ._format import set_printoptions
from .tensor import Tensor

__all__ = ["finfo", "iinfo", "set_printoptions", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "seed",
           "typename", "is_storage", "is_nonzero", "is_complex"]

_state = {"threads": None, "interop": None, "precision": "highest", "deterministic": False}


class finfo:
    """torch.finfo: bits, eps, max, min, tiny (smallest_normal), resolution of a float
    dtype (the default float when none is given)."""

    def __init__(self, type=None):
        dtype = D.get_default_dtype() if type is None else D.get_dtype(type)
        if dtype.category != D.FLOAT:
            raise TypeError(f"finfo: expected a floating point dtype, got {dtype.name}")
        info = np.finfo(dtype.np) if dtype is not D.bfloat16 else _bf16_info()
        self.dtype = dtype
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = float(info.resolution)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.tiny}, bits={self.bits}, "
                f"dtype={self.dtype.name})")


def _bf16_info():
    import ml_dtypes
    return ml_dtypes.finfo(ml_dtypes.bfloat16)


class iinfo:
    """torch.iinfo: bits, min, max of an integer dtype."""

    def __init__(self, type):
        dtype = D.get_dtype(type)
        if dtype.category == D.FLOAT:
            raise TypeError(f"iinfo: expected an integer dtype, got {dtype.name}")
        info = np.iinfo(np.uint8 if dtype is D.bool_ else dtype.np)
        self.dtype, self.bits = dtype, int(info.bits)
        self.min, self.max = int(info.min), int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype.name})"


def set_num_threads(n: int) -> None:
    """Remembered and reported by get_num_threads; ember's CPU kernels run on NumPy,
    whose BLAS takes its thread count from OMP_NUM_THREADS at start-up."""
    _state["threads"] = int(n)


def get_num_threads() -> int:
    return _state["threads"] or int(os.environ.get("OMP_NUM_THREADS", 0)) or os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    _state["interop"] = int(n)


def get_num_interop_threads() -> int:
    return _state["interop"] or get_num_threads()


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium': remembered; ember's matmuls are always float32."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                         f"'medium', got {precision!r}")
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Remembered: ember's shipped kernels are deterministic already (its scatter-adds
    accumulate in index order, not with atomics)."""
    _state["deterministic"] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def seed() -> int:
    """Seed ember's stream from the OS's entropy; returns the seed."""
    import random

    from .ops.creation import manual_seed
    value = random.SystemRandom().randrange(2 ** 63)
    manual_seed(value)
    return value


def typename(obj) -> str:
    if type(obj) is Tensor:
        from ._legacy import type_name
        return type_name(obj)
    return type(obj).__module__ + "." + type(obj).__qualname__


def is_storage(obj) -> bool:
    return False                    # ember does not expose storages


def is_nonzero(input: Tensor) -> bool:
    if input.numel() != 1:
        raise ValueError(f"is_nonzero: expected a tensor with one element, got "
                         f"{input.numel()}")
    return bool(input.item())


def is_complex(input: Tensor) -> bool:
    return False                    # ember has no complex dtypes
