"""Process-wide settings and questions PyTorch programs call at start-up: thread counts,
matmul precision, determinism, seeding, type names.

set_num_threads reaches the backends (NumPy's BLAS, PoCL's worker threads); the others
are recorded and reported back where ember already does what the setting asks for, each
docstring says why.
"""
from __future__ import annotations

import os

from . import dtypes as D
from . import plugins
from ._format import set_printoptions
from .errors import EmberTypeError, EmberValueError
from .tensor import Tensor

__all__ = ["set_printoptions", "set_num_threads", "get_num_threads",
           "set_num_interop_threads", "get_num_interop_threads",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "seed",
           "typename", "is_storage", "is_nonzero", "is_complex", "numel", "is_floating_point",
           "is_tensor"]

_state = {"threads": None, "interop": None, "precision": "highest", "deterministic": False}


def _thread_count(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) and not hasattr(n, "__index__"):
        raise EmberTypeError(f"{name}: expected an int, got {type(n).__name__}")
    n = int(n.__index__())
    if n <= 0:
        raise EmberValueError(f"{name}: expected a positive number of threads, got {n}")
    return n


def set_num_threads(n: int) -> None:
    """Use n threads inside each op, as torch.set_num_threads: the CPU backend limits
    NumPy's BLAS (matmul, linear, conv, linalg; threadpoolctl), a CPU OpenCL device (PoCL)
    runs on n worker threads.  PoCL reads its count once per process, when OpenCL first
    loads: call this before the first OpenCL op (later, the live device keeps its count,
    with a warning).  Backends loaded later get the count too.

    PyTorch
    -------
    ``torch.set_num_threads``
    """
    n = _thread_count("set_num_threads", n)
    _state["threads"] = n
    plugins.find_backend("cpu")           # loaded now, so NumPy's BLAS follows at once
    plugins.set_num_threads(n)


def get_num_threads() -> int:
    """The count set_num_threads set; before any, the threads NumPy's BLAS uses.

    PyTorch
    -------
    ``torch.get_num_threads``
    """
    if _state["threads"] is not None:
        return _state["threads"]
    # imported here, not at `import ember` (it inspects every loaded library)
    from threadpoolctl import threadpool_info
    counts = [lib["num_threads"] for lib in threadpool_info() if lib.get("user_api") == "blas"]
    return max(counts) if counts else 1


def set_num_interop_threads(n: int) -> None:
    """torch runs work on its inter-op pool only for TorchScript's fork/wait and async
    ops, never between the ops of an eager program; ember has neither (its ops run one
    after another on the calling thread), so, as in an eager torch program, the count is
    recorded and reported by get_num_interop_threads and changes no computation.

    PyTorch
    -------
    ``torch.set_num_interop_threads``
    """
    _state["interop"] = _thread_count("set_num_interop_threads", n)


def get_num_interop_threads() -> int:
    """The count set_num_interop_threads recorded; before any, torch's default (the CPU
    count).

    PyTorch
    -------
    ``torch.get_num_interop_threads``
    """
    return _state["interop"] or os.cpu_count() or 1


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium': remembered; ember's matmuls are always float32.

    PyTorch
    -------
    ``torch.set_float32_matmul_precision``
    """
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                         f"'medium', got {precision!r}")
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision set by ``set_float32_matmul_precision`` (``'highest'``,
    ``'high'`` or ``'medium'``).

    PyTorch
    -------
    ``torch.get_float32_matmul_precision``
    """
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Remembered: ember's shipped kernels are deterministic already (its scatter-adds
    accumulate in index order, not with atomics).

    PyTorch
    -------
    ``torch.use_deterministic_algorithms``
    """
    _state["deterministic"] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    PyTorch
    -------
    ``torch.are_deterministic_algorithms_enabled``
    """
    return _state["deterministic"]


def seed() -> int:
    """Seed ember's stream from the OS's entropy; returns the seed.

    PyTorch
    -------
    ``torch.seed``
    """
    import random

    from .ops.creation import manual_seed
    value = random.SystemRandom().randrange(2 ** 63)
    manual_seed(value)
    return value


def typename(obj) -> str:
    """The type name of ``obj``: a tensor's legacy type (``'torch.FloatTensor'``), else the
    qualified class name.

    PyTorch
    -------
    ``torch.typename``
    """
    if type(obj) is Tensor:
        from .legacy import type_name
        return type_name(obj)
    return type(obj).__module__ + "." + type(obj).__qualname__


def is_tensor(x) -> bool:
    """Whether ``x`` is an ember tensor.

    PyTorch
    -------
    ``torch.is_tensor``
    """
    return type(x) is Tensor


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage; always False (ember has no storages).

    PyTorch
    -------
    ``torch.is_storage``; ember tensors have no separate storage object, so it is always
    False.
    """
    return False                    # ember does not expose storages


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is nonzero.

    Raises
    ------
    ValueError
        ``input`` does not have exactly one element.

    PyTorch
    -------
    ``torch.is_nonzero``
    """
    if input.numel() != 1:
        raise ValueError(f"is_nonzero: expected a tensor with one element, got "
                         f"{input.numel()}")
    return bool(input.item())


def is_complex(input: Tensor) -> bool:
    """Whether ``input`` has a complex dtype (complex64 or complex128).

    PyTorch
    -------
    ``torch.is_complex``
    """
    if type(input) is not Tensor:
        raise EmberTypeError(f"is_complex(): argument 'input' must be Tensor, not "
                             f"{type(input).__name__}")
    return input._dtype.category == D.COMPLEX


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    PyTorch
    -------
    ``torch.numel``
    """
    return input.numel()

def is_floating_point(input: Tensor) -> bool:
    """Whether ``input`` has a floating dtype.

    PyTorch
    -------
    ``torch.is_floating_point``
    """
    return input._dtype.category == D.FLOAT
