"""DLPack both ways: ember tensors out to NumPy/PyTorch/CuPy/JAX, their arrays in, zero copy.

Like torch.utils.dlpack: `to_dlpack(t)` gives a capsule, `from_dlpack(x)` takes any
producer (an object with __dlpack__, or a capsule).  Tensor.__dlpack__ and
__dlpack_device__ (bound in ember/_interop.py) are the protocol the consumers call.

- CPU tensors hold NumPy arrays: export is NumPy's own __dlpack__ of that array, and
  host producers come in through np.from_dlpack and stay NumPy arrays, so memory is shared
  both ways.  NumPy cannot export or import bfloat16 (ml_dtypes), so bfloat16 tensors do
  not cross (cast with .float() first).
- CUDA/ROCm tensors hold CuPy arrays: export is CuPy's __dlpack__ (inside the tensor's
  device), and CUDA/ROCm producers come in through cupy.from_dlpack.  Written to the
  protocol but not run here (no GPU in the test machines).
- OpenCL: DLPack's enum has kDLOpenCL (4), which __dlpack_device__ reports for an opencl
  tensor because that is where its memory is; but no consumer (NumPy, PyTorch, CuPy, JAX)
  imports OpenCL memory, and ember's OpenCL buffers may still be pending (fused, deferred
  work).  So __dlpack__ refuses with DLPackError pointing to .cpu() - unless copy=True,
  which exports a host copy (device kDLCPU), as the standard lets a producer do.
"""
from __future__ import annotations

import numpy as np

from ..errors import DLPackError

__all__ = ["DLPackError", "from_dlpack", "to_dlpack"]

# DLPack's DLDeviceType codes
CPU, CUDA, CUDA_HOST, OPENCL, ROCM, ROCM_HOST, EXT_DEV, CUDA_MANAGED = 1, 2, 3, 4, 10, 11, 12, 13
_HOST = (CPU, CUDA_HOST, ROCM_HOST, CUDA_MANAGED)      # memory NumPy can read
_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDAHost", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI",
          10: "ROCm", 11: "ROCmHost", 12: "ExtDev", 13: "CUDAManaged", 14: "OneAPI",
          15: "WebGPU", 16: "Hexagon", 17: "MAIA"}


# -- export: Tensor.__dlpack__ / __dlpack_device__ ------------------------------------------

def dlpack_device(t) -> tuple:
    """(DLPack device type, device id) of the memory holding t."""
    dev = t._device
    if dev.type == "cpu":
        return (CPU, 0)
    native_device = getattr(t._data, "__dlpack_device__", None)
    if native_device is not None:
        return tuple(native_device())
    return (OPENCL if dev.type == "opencl" else EXT_DEV, dev.index or 0)


def export(t, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of t's memory (the array API's __dlpack__)."""
    if t.requires_grad:
        raise DLPackError("__dlpack__: can't export a tensor that requires grad (the consumer "
                          "would bypass autograd); export t.detach() instead")
    dev = t._device
    native = np.asarray(t._data) if dev.type == "cpu" else t._data
    if t._dtype.name == "bfloat16" and dev.type == "cpu":
        raise DLPackError("__dlpack__: NumPy cannot export bfloat16 arrays through DLPack; "
                          "export t.float() (a float32 copy) instead")
    exporter = getattr(native, "__dlpack__", None)
    if exporter is None:
        return _export_host_copy(t, max_version, dl_device, copy)
    keywords = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                  ("copy", copy)) if v is not None}
    try:
        with _device_context(dev):
            try:
                return exporter(stream=stream, **keywords)
            except TypeError:
                if keywords.keys() - {"max_version"}:
                    raise
                return exporter(stream=stream)      # a producer from before DLPack 1.0
    except BufferError as exc:
        raise DLPackError(f"__dlpack__: the {t._dtype.name} tensor on {dev} could not be "
                          f"exported: {exc}; export t.clone() (a fresh, writable copy) or "
                          "pass copy=True") from None


def _export_host_copy(t, max_version, dl_device, copy):
    dev = t._device
    if copy is True and dl_device in (None, (CPU, 0)):
        host = t.detach().numpy()                  # a fresh host copy of a device tensor
        return host.__dlpack__(max_version=max_version) if max_version else host.__dlpack__()
    raise DLPackError(
        f"__dlpack__: a tensor on {dev} cannot be exported through DLPack without a copy: "
        f"its memory is a buffer of the {dev.type} backend, which no DLPack consumer (NumPy, "
        "PyTorch, CuPy, JAX) can import; move it first with t.cpu() (the export then shares "
        "the host copy's memory), or pass copy=True to export a host copy, e.g. "
        "np.from_dlpack(t, copy=True)")


class _device_context:
    """The tensor's device made current while CuPy exports (its stream is per device)."""

    def __init__(self, dev):
        cupy = getattr(dev.backend, "cupy", None) if dev.type != "cpu" else None
        self._inner = cupy.cuda.Device(dev.index or 0) if cupy is not None else None

    def __enter__(self):
        if self._inner is not None:
            self._inner.__enter__()

    def __exit__(self, *exc):
        if self._inner is not None:
            self._inner.__exit__(*exc)


# -- import ------------------------------------------------------------------------------------

def from_dlpack(x, /, *, device=None, copy: bool | None = None):
    """An ember tensor sharing memory with a DLPack producer (or capsule) where it can.

    device: where the result must live (a copy when the producer is elsewhere, unless
    copy=False); copy=True always copies, copy=False never does (DLPackError instead).

    PyTorch
    -------
    ``torch.from_dlpack``
    """
    from ..ops import from_numpy
    from ..tensor import Tensor
    if type(x) is Tensor:
        out = x.to(device) if device is not None else x
        if copy is False and out is not x:
            raise DLPackError(f"from_dlpack: copy=False, but the tensor is on {x.device}, not "
                              f"{device}")
        return out.clone() if copy and out is x else out
    if type(x).__name__ == "PyCapsule":
        x = _Capsule(x)
    if not hasattr(x, "__dlpack__"):
        raise DLPackError(f"from_dlpack: expected an object with __dlpack__ (a NumPy, "
                          f"PyTorch, CuPy or JAX array) or a DLPack capsule, got "
                          f"{type(x).__name__}")
    kind, index = x.__dlpack_device__()
    if kind in _HOST:
        try:
            array = np.from_dlpack(x)          # host memory: NumPy never copies it
        except (BufferError, TypeError, RuntimeError, ValueError) as exc:
            raise DLPackError(f"from_dlpack: NumPy could not import the {type(x).__name__} "
                              f"({exc}); bfloat16 and complex arrays do not cross into ember "
                              "(cast them to float32 first)") from None
        out = from_numpy(array.copy() if copy else array)
    elif kind in (CUDA, ROCM):
        out = _from_gpu(x, "cuda" if kind == CUDA else "rocm", index, copy)
    else:
        raise DLPackError(
            f"from_dlpack: the {type(x).__name__}'s memory is on DLPack device "
            f"{_NAMES.get(kind, kind)} ({kind}), which ember cannot import; move it to the "
            "CPU in its own library first (e.g. np.asarray, tensor.cpu())")
    if device is not None:
        moved = out.to(device)
        if moved is not out and copy is False:
            raise DLPackError(f"from_dlpack: copy=False, but the array is on {out.device}, "
                              f"not {device}")
        out = moved
    return out


def _from_gpu(x, kind: str, index: int, copy):
    from .. import dtypes as D
    from ..device import Device
    from ..tensor import wrap
    dev = Device(kind, index).concrete()
    cupy = getattr(dev.backend, "cupy", None)
    if cupy is None:
        raise DLPackError(f"from_dlpack: the array is on {kind}:{index}, but no CuPy backend "
                          f"serves {kind} here; install ember-cuda12 (or ember-rocm), see "
                          "`ember doctor`")
    with cupy.cuda.Device(index):
        native = cupy.from_dlpack(x)
        if copy:
            native = native.copy()
    return wrap(native, dev, D.from_numpy_dtype(np.dtype(native.dtype)))


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory (as torch.utils.dlpack.to_dlpack)."""
    return tensor.__dlpack__()


class _Capsule:
    """A bare DLPack capsule (torch.utils.dlpack.to_dlpack's output) dressed as a producer."""

    def __init__(self, capsule):
        import ctypes
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype = ctypes.c_char_p
        api.PyCapsule_GetName.argtypes = [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        name = api.PyCapsule_GetName(capsule)
        if name not in (b"dltensor", b"dltensor_versioned"):
            raise DLPackError(f"from_dlpack: the capsule is named {name!r}, expected "
                              "'dltensor' (a capsule can be consumed only once)")
        pointer = api.PyCapsule_GetPointer(capsule, name)
        # DLManagedTensor starts with its DLTensor {void *data; DLDevice device; ...};
        # DLManagedTensorVersioned puts version, manager_ctx, deleter and flags first
        offset = 8 + (32 if name == b"dltensor_versioned" else 0)
        device = (ctypes.c_int32 * 2).from_address(pointer + offset)
        self._device = (int(device[0]), int(device[1]))
        self._capsule = capsule

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, **kwargs):
        return self._capsule
