"""Process-wide settings and questions PyTorch programs call at start-up: thread counts,
matmul precision, determinism, seeding, type names.

Where ember has no such knob the call is accepted and what it sets is remembered and
reported back; nothing here changes how a kernel computes.
"""
from __future__ import annotations

import os

from . import dtypes as D
from ._format import set_printoptions
from .tensor import Tensor

__all__ = ["set_printoptions", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "seed",
           "typename", "is_storage", "is_nonzero", "is_complex", "numel", "is_floating_point",
           "is_tensor"]

_state = {"threads": None, "interop": None, "precision": "highest", "deterministic": False}


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
        from .legacy import type_name
        return type_name(obj)
    return type(obj).__module__ + "." + type(obj).__qualname__


def is_tensor(x) -> bool:
    return type(x) is Tensor


def is_storage(obj) -> bool:
    return False                    # ember does not expose storages


def is_nonzero(input: Tensor) -> bool:
    if input.numel() != 1:
        raise ValueError(f"is_nonzero: expected a tensor with one element, got "
                         f"{input.numel()}")
    return bool(input.item())


def is_complex(input: Tensor) -> bool:
    return False                    # ember has no complex dtypes


def numel(input: Tensor) -> int:
    return input.numel()

def is_floating_point(input: Tensor) -> bool:
    return input._dtype.category == D.FLOAT
