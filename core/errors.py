"""The ember error hierarchy: every error subclasses a fitting builtin and EmberError."""
from __future__ import annotations


class EmberError(Exception):
    """Base of every error ember raises on purpose.

    Messages name the op, what was expected, what was got, and the fix.
    """


class DeviceMismatchError(EmberError, RuntimeError):
    """Tensors on different devices met in one op."""


class DtypeNotSupportedError(EmberError, TypeError):
    """A dtype the op or the device cannot handle."""


class KernelNotFoundError(EmberError, NotImplementedError):
    """No kernel for an op on a device, and the fallback policy forbids the CPU copy."""


class DeviceUnavailableError(EmberError, RuntimeError):
    """A device type is known but cannot be used on this machine."""


class ShapeError(EmberError, ValueError):
    """Shapes that do not fit the op (broadcasting, matmul, reshape, dims...)."""


class EmberIndexError(EmberError, IndexError):
    """An index outside the tensor."""


class EmberValueError(EmberError, ValueError):
    """A bad argument value (unknown device string, bad dtype name, ...)."""


class EmberTypeError(EmberError, TypeError):
    """A bad argument type."""


class EmberOverflowError(EmberError, OverflowError):
    """A number the dtype cannot hold (300 into uint8, inf into int64)."""


class AutogradError(EmberError, RuntimeError):
    """A gradient cannot be computed as asked (non-differentiable op, freed graph...)."""


class CheckpointError(EmberError, ValueError):
    """A checkpoint file that is truncated, corrupted or hostile."""


class KernelError(EmberError, RuntimeError):
    """A backend's kernel failed; the message names the op, the device and the inputs.

    A kernel's own ValueError, TypeError, IndexError, ZeroDivisionError or MemoryError
    arrives as the subclass that is also that builtin (KernelValueError, ...), so both
    `except ember.KernelError` and `except TypeError` catch it."""


class KernelValueError(KernelError, ValueError):
    """A kernel raised ValueError (often a shape the kernel could not handle)."""


class KernelTypeError(KernelError, TypeError):
    """A kernel raised TypeError."""


class KernelIndexError(KernelError, IndexError):
    """A kernel raised IndexError."""


class KernelZeroDivisionError(KernelError, ZeroDivisionError):
    """A kernel raised ZeroDivisionError (integer division by zero)."""


class KernelMemoryError(KernelError, MemoryError):
    """A kernel could not allocate its output."""


class KernelOverflowError(KernelError, OverflowError):
    """A kernel raised OverflowError (a number that does not fit the dtype)."""


class AutocastError(EmberError, RuntimeError):
    """An op autocast refuses to run in a region (torch refuses it too: binary_cross_entropy
    on GPUs)."""


class NotInEmberError(EmberError, AttributeError):
    """A PyTorch name ember does not have (yet): the message says so and where to look
    (`ember torch-api`); an AttributeError, so hasattr() and getattr(x, n, None)
    keep answering "no"."""


class UnsupportedError(EmberError, NotImplementedError):
    """A PyTorch feature ember has the function for but not this option of (p='nuc', ...)."""


class EmberWarning(UserWarning):
    """Base of every warning ember gives on purpose (PyTorch would warn there too)."""


class DLPackError(EmberError, BufferError):
    """A tensor or array cannot cross DLPack as asked (device, dtype, copy, gradient)."""
