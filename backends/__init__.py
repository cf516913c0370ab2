"""Backends shipped with ember, one subpackage each; the contract lives in ember.backend.

`mps`, `cudnn`, `cuda`, `mkldnn` and `openmp` answer the questions and take the switches
PyTorch programs use from torch.backends (no backend module is imported for them).
"""
import contextlib
import os

from ember.backend import Backend, Capabilities, DeviceInfo, Probe

__all__ = ["Backend", "Capabilities", "DeviceInfo", "Probe", "mps", "cudnn", "cuda",
           "mkldnn", "openmp"]


def switched_on(var: str) -> bool:
    """Whether the environment leaves the backend feature `var` on: unset means on; 0, off,
    false, no (any case) mean off (EMBER_OPENCL_FUSION, EMBER_CUDA_GRAPHS, ...)."""
    return os.environ.get(var, "1").strip().lower() not in ("0", "off", "false", "no")


class _Switches:
    """A torch.backends.* namespace: settable flags ember accepts (its kernels do not read
    them) and availability questions answered for ember."""

    def __init__(self, name: str, available: bool, **flags):
        self._name, self._available = name, available
        self.__dict__.update(flags)

    def __repr__(self) -> str:
        return f"<ember.backends.{self._name}>"

    def is_available(self) -> bool:
        return self._available

    def is_built(self) -> bool:
        return self._available

    def version(self):
        return None


class _Cudnn(_Switches):
    """torch.backends.cudnn.  ember calls no cuDNN (its CUDA backend, CuPy, runs its own
    kernels and cuBLAS), so, as in PyTorch on a machine without cuDNN, is_available() is
    False, version() is None, and the flags are state that nothing reads: `benchmark`
    (autotune cuDNN's convolution algorithms per input shape: ember has no cuDNN
    algorithms to choose between), `deterministic` (cuDNN's deterministic algorithms:
    ember's kernels are deterministic already, see ember.use_deterministic_algorithms),
    `enabled` and `allow_tf32`.  Each takes a bool only, as PyTorch's; flags(...) sets
    some for a `with` block."""

    _FLAGS = ("enabled", "benchmark", "deterministic", "allow_tf32")

    def __init__(self) -> None:
        super().__init__("cudnn", False)
        self.__dict__["_values"] = {"enabled": True, "benchmark": False,
                                    "deterministic": False, "allow_tf32": True}

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"ember.backends.cudnn has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in self._FLAGS:
            if type(value) is not bool:
                from ember.errors import EmberTypeError
                raise EmberTypeError(f"torch.backends.cudnn.{name} expects a bool, but got "
                                     f"{type(value).__name__}; pass True or False")
            self._values[name] = value
        else:
            super().__setattr__(name, value)

    @contextlib.contextmanager
    def flags(self, enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
        """with torch.backends.cudnn.flags(...): the flags set for the block (PyTorch's
        defaults here are its, not the current values), restored after."""
        saved = dict(self._values)
        try:
            for name, value in zip(self._FLAGS, (enabled, benchmark, deterministic,
                                                 allow_tf32)):
                setattr(self, name, value)
            yield
        finally:
            self._values.update(saved)


# ember has no MPS backend, and its CUDA backend (CuPy) does not call cuDNN or oneDNN
mps = _Switches("mps", False)
cudnn = _Cudnn()
mkldnn = _Switches("mkldnn", False, enabled=True)
openmp = _Switches("openmp", False)
cuda = _Switches("cuda", False, matmul=_Switches("cuda.matmul", False, allow_tf32=False,
                                                 allow_fp16_reduced_precision_reduction=True,
                                                 allow_bf16_reduced_precision_reduction=True))
