"""ember: a PyTorch-style tensor library whose ops run on pluggable backends.

The public namespace (torch.* for ember) is written out here and nowhere else: each name is
bound once, from the module that defines it (ops and functional by family, linalg, settings,
legacy types); tests/unit/test_namespace.py keeps it so.
"""
# no `from __future__ import annotations` here: it would leak `annotations` into ember.*

from math import e, inf, nan, pi

from ._version import __version__

from . import methods as _methods  # (binds Tensor's methods, one table)
from ._nn_names import TORCH_NN_NAMES as _TORCH_NN_NAMES  # (torch.conv2d, ...: lazily)
from .autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .device import Device, devices, set_default_device, synchronize
from .device import default_device as get_default_device
from .dispatch import fallback
from .dtypes import DType as dtype
from .dtypes import (
    bfloat16,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from .dtypes import bool_ as bool  # noqa: A004  (ember.bool, as torch.bool)
from .errors import (
    AutogradError,
    CheckpointError,
    DeviceMismatchError,
    DeviceUnavailableError,
    DtypeNotSupportedError,
    EmberError,
    KernelError,
    KernelNotFoundError,
    ShapeError,
)
from .errors import KernelMemoryError as OutOfMemoryError
from .functional import *  # noqa: F403  (ember.functional.__all__: mean, tril, einsum, ...)
from .legacy import *  # noqa: F403  (FloatTensor, LongTensor, ...: PyTorch's legacy types)
from .ops import *  # noqa: F403  (ember.ops.__all__: one per declaration, creation, ...)
from .settings import *  # noqa: F403  (threads, determinism, seed, printoptions, ...)
from .sparse import sparse_coo_tensor, spmm
from .tensor import (
    Size,
    Tensor,
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    strided,
)
from . import functional as _functional
from . import legacy as _legacy
from . import ops as _ops
from . import settings as _settings

# torch's other names for dtypes and functions
device = Device
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
clip = clamp  # noqa: F405
newaxis = None        # torch.newaxis: x[:, ember.newaxis] adds a dim, as None does

__all__ = [
    # tensors, devices, dtypes
    "Tensor", "Size", "Device", "device", "dtype", "get_default_device", "set_default_device",
    "devices", "synchronize", "memory_format", "contiguous_format", "preserve_format",
    "channels_last", "channels_last_3d", "layout", "strided",
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "float", "double", "half", "long", "int", "short",
    "complex64", "complex128", "cfloat", "cdouble",
    # math constants (torch.pi, torch.e, torch.inf, torch.nan) and torch.newaxis
    "pi", "e", "inf", "nan", "newaxis",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast", "finfo",
    "iinfo",
    # modes
    "no_grad", "enable_grad", "inference_mode", "is_grad_enabled", "set_grad_enabled",
    "is_inference_mode_enabled",
    "fallback",
    # errors
    "EmberError", "AutogradError", "CheckpointError", "DeviceMismatchError",
    "DeviceUnavailableError", "DtypeNotSupportedError", "KernelError", "KernelNotFoundError",
    "ShapeError", "OutOfMemoryError",
    # functions: the op functions (one per declaration), the torch.* composites, sparse
    *_ops.__all__, *_functional.__all__, "clip", "sparse_coo_tensor", "spmm",
    # process-wide settings and PyTorch's legacy tensor types
    *_settings.__all__, *_legacy.__all__,
    # torch's in-place function forms (torch.relu_(x) is x.relu_())
    *_methods.INPLACE_FUNCTIONS,
]



def __getattr__(name):
    # heavier parts load on first use, so `import ember` stays fast
    import importlib
    lazy = {"nn": ".nn", "optim": ".optim", "autograd": ".autograd", "func": ".func",
            "plugins": ".plugins", "testing": ".testing", "utils": ".utils",
            "backends": "ember.backends", "cuda": ".accel", "rocm": ".accel", "io": ".io",
            "mps": ".accel", "xpu": ".accel", "accelerator": ".accel", "cpu": ".accel",
            "linalg": ".linalg",
            "torch_alias": ".torch_alias", "distributions": ".distributions", "hub": ".hub",
            "amp": ".amp", "multiprocessing": ".multiprocessing", "array_api": ".array_api",
            "serialization": ".io",
            "export": ".export", "onnx": ".onnx", "special": ".special", "signal": ".signal",
            "masked": ".masked", "jit": ".jit", "version": ".version",
            "fft": ".fft", "random": ".random", "distributed": ".distributed",
            "profiler": ".profiler"}
    if name in lazy:
        mod = importlib.import_module(lazy[name], __name__)
        if name in ("cuda", "rocm", "mps", "xpu", "accelerator", "cpu"):
            return getattr(mod, name)
        return mod
    if name in ("autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
                "get_autocast_gpu_dtype", "get_autocast_cpu_dtype", "set_autocast_gpu_dtype",
                "set_autocast_cpu_dtype"):
        return getattr(importlib.import_module(".amp", __name__), name)
    if name in ("save", "load"):
        return getattr(importlib.import_module(".io", __name__), name)
    if name == "from_dlpack":
        return importlib.import_module(".utils.dlpack", __name__).from_dlpack
    if name == "dispatch":
        return importlib.import_module(".dispatch", __name__)
    if name in _methods.INPLACE_FUNCTIONS:
        return _methods.INPLACE_FUNCTIONS[name]
    if name in _TORCH_NN_NAMES:      # torch.conv2d, torch.layer_norm, torch.hann_window, ...
        return importlib.import_module(".nn._torch_names", __name__).resolve(name)
    if name == "GradScaler":
        return importlib.import_module(".amp", __name__).GradScaler
    if name == "vmap":
        return importlib.import_module(".func", __name__).vmap
    if name == "compile":
        return importlib.import_module(".graph", __name__).compile
    from ._torch_gaps import missing
    raise missing("", name)          # an ember gap, named as one (see _torch_gaps.py)
