"""ember: a PyTorch-style tensor library whose ops run on pluggable backends."""
# no `from __future__ import annotations` here: it would leak `annotations` into ember.*

from ._version import __version__

from . import dtypes as _dtypes
from .device import Device, default_device as get_default_device, set_default_device
from .dtypes import (bfloat16, float16, float32, float64, int8, int16, int32, int64, uint8,
                     get_default_dtype, set_default_dtype, promote_types, result_type)
from .dtypes import bool_ as bool  # noqa: A001  (ember.bool, as torch.bool)
from .dtypes import DType as dtype
from .dtypes import finfo, iinfo
from .errors import (AutogradError, CheckpointError, DeviceMismatchError,
                     DeviceUnavailableError, DtypeNotSupportedError, EmberError, KernelError,
                     KernelNotFoundError, ShapeError)
from .tensor import Size, Tensor
from .ops import *  # noqa: F401,F403  (the op functions: ember.add, ember.exp, ...)
from .ops import __all__ as _op_names
from .functional import (clamp, gelu, leaky_relu, log_softmax, logsumexp, max, mean, min,
                         relu, silu, softmax, std, var, var_mean, linear, masked_fill, square)
from . import _methods  # noqa: F401  (binds the ops onto Tensor)
from . import _interop  # noqa: F401  (DLPack, __array_namespace__, to_device on Tensor)
from . import _methods_extra  # noqa: F401  (tensor functions, sorting, scans as methods)
from . import _methods_extra2  # noqa: F401  (bit operations, index_put_, cummax, ...)
from . import _methods_math  # noqa: F401  (atan2, lgamma, erfinv, quantile, mode, ...)
from .functional_extra import *  # noqa: F401,F403  (mm, tril, roll, scatter, ...)
from .functional_extra import __all__ as _extra_names
from .functional_extra2 import *  # noqa: F401,F403  (tensor_split, diff, cummax, ...)
from .functional_extra2 import __all__ as _extra2_names
from .functional_math import *  # noqa: F401,F403  (atan2, lgamma, histc, quantile, ...)
from .functional_math import __all__ as _math_names
from .einsum import einsum
from .linalg import torch_norm as norm
from .linalg_extra import TOP_LEVEL as _LINALG_TOP
globals().update(_LINALG_TOP)         # inverse, det, logdet, slogdet, cholesky, ...
from .ops.sampling import bernoulli, multinomial, poisson, rand_like, randint_like, randn_like
from ._compat import *  # noqa: F401,F403  (finfo, iinfo, set_printoptions, threads, ...)
from ._compat import __all__ as _compat_names
from ._legacy import LEGACY as _LEGACY
globals().update(_LEGACY)               # FloatTensor, LongTensor, ... (PyTorch's legacy types)
from ._methods_extra import TORCH_SPELLINGS as _SPELLINGS
globals().update(_SPELLINGS)            # ember.sum(x, axis=1), ember.empty(size=(2, 3))
from .sparse import sparse_coo_tensor, spmm
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .dispatch import fallback

device = Device
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
clip = clamp


__all__ = [
    # tensors, devices, dtypes
    "Tensor", "Size", "Device", "device", "dtype", "get_default_device", "set_default_device",
    "devices", "synchronize", "is_tensor",
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
    "float64", "float", "double", "half", "long", "int", "short",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "finfo", "iinfo",
    # modes
    "no_grad", "enable_grad", "inference_mode", "is_grad_enabled", "set_grad_enabled",
    "fallback",
    # errors
    "EmberError", "AutogradError", "CheckpointError", "DeviceMismatchError",
    "DeviceUnavailableError", "DtypeNotSupportedError", "KernelError", "KernelNotFoundError",
    "ShapeError",
    # composites
    "clamp", "clip", "gelu", "leaky_relu", "log_softmax", "logsumexp", "max", "mean", "min",
    "silu", "softmax", "std", "var", "var_mean", "linear", "masked_fill", "square",
    # the op functions, one per declaration (ember.ops.__all__)
    *_op_names,
    # PyTorch's tensor functions, sampling, legacy types and process-wide switches
    *_extra_names, "einsum", "norm", "bernoulli", "multinomial", "poisson", "rand_like",
    *(n for n in _extra2_names if n not in _op_names),
    *(n for n in _math_names if n not in _op_names),
    "randint_like", "randn_like", *_LEGACY, *_compat_names, "sparse_coo_tensor", "spmm",
]


def is_tensor(x) -> bool:
    return type(x) is Tensor


def synchronize(device=None) -> None:
    """Wait until the work queued on `device` (default: the default device) has finished.

    Backends that queue kernels (CUDA, ROCm, OpenCL) return from ops before the work is
    done, and OpenCL defers elementwise ops until a result is needed: time a step with the
    result held until after this call. On the CPU it returns at once."""
    dev = (Device(device) if device is not None else get_default_device()).concrete()
    from .backend import optional
    sync = optional(dev.backend, "synchronize")
    if sync is not None:
        sync(dev.index)


def devices() -> list:
    """Every available device of every installed backend (loads all plugins)."""
    from . import plugins
    plugins.load_all()
    out = []
    for kind, backend in sorted(plugins.loaded_backends().items()):
        if kind != backend.name or not plugins._probe(backend).available:
            continue
        for info in backend.devices():
            out.append(Device(kind, info.index))
    return out


def __getattr__(name):
    # heavier parts load on first use, so `import ember` stays fast
    import importlib
    lazy = {"nn": ".nn", "optim": ".optim", "autograd": ".autograd", "func": ".func",
            "plugins": ".plugins", "testing": ".testing", "utils": ".utils",
            "backends": "ember.backends", "cuda": ".accel", "rocm": ".accel", "io": ".io",
            "mps": ".accel", "xpu": ".accel", "accelerator": ".accel", "linalg": ".linalg",
            "torch_alias": ".torch_alias", "distributions": ".distributions", "hub": ".hub",
            "amp": ".amp", "multiprocessing": ".multiprocessing", "array_api": ".array_api",
            "export": ".export", "onnx": ".onnx", "special": ".special"}
    if name in lazy:
        mod = importlib.import_module(lazy[name], __name__)
        if name in ("cuda", "rocm", "mps", "xpu", "accelerator"):
            return getattr(mod, name)
        return mod
    if name == "autocast":
        return importlib.import_module(".amp", __name__).autocast
    if name in ("save", "load"):
        return getattr(importlib.import_module(".io", __name__), name)
    if name == "from_dlpack":
        return importlib.import_module(".utils.dlpack", __name__).from_dlpack
    if name == "dispatch":
        return importlib.import_module(".dispatch", __name__)
    if name == "compile":
        return importlib.import_module(".graph", __name__).compile
    from ._torch_gaps import missing
    raise missing("", name)          # an ember gap, named as one (see _torch_gaps.py)
