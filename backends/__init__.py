"""Backends shipped with ember, one subpackage each; the contract lives in ember.backend.

`mps`, `cudnn`, `cuda`, `mkldnn` and `openmp` answer the questions and take the switches
PyTorch programs use from torch.backends (no backend module is imported for them).
"""
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


# ember has no MPS backend, and its CUDA backend (CuPy) does not call cuDNN or oneDNN
mps = _Switches("mps", False)
cudnn = _Switches("cudnn", False, enabled=True, benchmark=False, deterministic=False,
                  allow_tf32=True)
mkldnn = _Switches("mkldnn", False, enabled=True)
openmp = _Switches("openmp", False)
cuda = _Switches("cuda", False, matmul=_Switches("cuda.matmul", False, allow_tf32=False,
                                                 allow_fp16_reduced_precision_reduction=True,
                                                 allow_bf16_reduced_precision_reduction=True))
