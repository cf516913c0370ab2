"""The ember error hierarchy: every error subclasses a fitting builtin and EmberError."""
from __future__ import annotations


class EmberError(Exception):
    """Base of every error ember raises on purpose.

    Messages name the op, what was expected, what was got, and the fix.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class DeviceMismatchError(EmberError, RuntimeError):
    """Tensors on different devices met in one op.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class DtypeNotSupportedError(EmberError, TypeError):
    """A dtype the op or the device cannot handle.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class KernelNotFoundError(EmberError, NotImplementedError):
    """No kernel for an op on a device, and the fallback policy forbids the CPU copy.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class DeviceUnavailableError(EmberError, RuntimeError):
    """A device type is known but cannot be used on this machine.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class ShapeError(EmberError, ValueError):
    """Shapes that do not fit the op (broadcasting, matmul, reshape, dims...).

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class ViewError(ShapeError, RuntimeError):
    """A view that strides cannot express (``x.t().view(-1)``): PyTorch raises
    RuntimeError and suggests ``.reshape``; so does ember (a ShapeError too).

    PyTorch
    -------
    None: the RuntimeError of ``Tensor.view``.
    """


class EmberIndexError(EmberError, IndexError):
    """An index outside the tensor."""


class EmberValueError(EmberError, ValueError):
    """A bad argument value (unknown device string, bad dtype name, ...)."""


class EmberTypeError(EmberError, TypeError):
    """A bad argument type."""


class EmberOverflowError(EmberError, OverflowError):
    """A number the dtype cannot hold (300 into uint8, inf into int64)."""


class ComplexDtypeError(EmberTypeError, RuntimeError):
    """An op refused for complex (or for non-complex) tensors where torch refuses it: a
    TypeError, and a RuntimeError as torch's own refusal is (so `except RuntimeError` code
    written for torch keeps working)."""


class AutogradError(EmberError, RuntimeError):
    """A gradient cannot be computed as asked (non-differentiable op, freed graph...).

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class CheckpointError(EmberError, ValueError):
    """A checkpoint file that is truncated, corrupted or hostile.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class KernelError(EmberError, RuntimeError):
    """A backend's kernel failed; the message names the op, the device and the inputs.

    A kernel's own ValueError, TypeError, IndexError, ZeroDivisionError or MemoryError
    arrives as the subclass that is also that builtin (KernelValueError, ...), so both
    `except ember.KernelError` and `except TypeError` catch it.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class KernelValueError(KernelError, ValueError):
    """A kernel raised ValueError (often a shape the kernel could not handle)."""


class KernelTypeError(KernelError, TypeError):
    """A kernel raised TypeError."""


class KernelIndexError(KernelError, IndexError):
    """A kernel raised IndexError."""


class KernelZeroDivisionError(KernelError, ZeroDivisionError):
    """A kernel raised ZeroDivisionError (integer division by zero)."""


class KernelMemoryError(KernelError, MemoryError):
    """A kernel could not allocate its output (a device out of memory).

    PyTorch
    -------
    ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``): ember.OutOfMemoryError
    and ember.cuda.OutOfMemoryError are this class, a RuntimeError as torch's (and a
    MemoryError).
    """


class KernelOverflowError(KernelError, OverflowError):
    """A kernel raised OverflowError (a number that does not fit the dtype)."""


class AutocastError(EmberError, RuntimeError):
    """An op autocast refuses to run in a region (torch refuses it too: binary_cross_entropy
    on GPUs)."""


class NotInEmberError(EmberError, AttributeError):
    """A PyTorch name ember does not have (yet): the message says so and where to look
    (`ember torch-api`); an AttributeError, so hasattr() and getattr(x, n, None)
    keep answering "no"."""


class ModuleGapError(EmberError, ModuleNotFoundError):
    """`import torch.X` (ember.X) where ember has no X, or where X needs a package that is
    not installed (torch.utils.tensorboard without tensorboard)."""


class UnsupportedError(EmberError, NotImplementedError):
    """A PyTorch feature ember has the function for but not this option of (p='nuc', ...)."""


class EmberWarning(UserWarning):
    """Base of every warning ember gives on purpose (PyTorch would warn there too)."""


class DLPackError(EmberError, BufferError):
    """A tensor or array cannot cross DLPack as asked (device, dtype, copy, gradient)."""


def brief(obj, limit: int = 100) -> str:
    """repr(obj) cut to `limit` characters (then "..."), in time bounded by `limit` whatever
    obj is: for error messages that show a value read from an untrusted file or sent by
    another process.  `f"{obj!r:.100}"` builds the whole repr before cutting it, which for a
    tuple of 2**40 shared references (a few hundred bytes of pickle) never ends; this walks
    containers with a budget of characters and a depth bound instead, shows a huge int by
    its size, and cuts strings before quoting them."""
    parts: list[str] = []
    room = [limit + 1]                     # one more than shown, to know whether to cut

    def put(text: str) -> None:
        parts.append(text[:room[0]])
        room[0] -= len(text)

    def walk(x, depth: int) -> None:
        if room[0] <= 0:
            return
        kind = type(x)
        if kind in (str, bytes, bytearray):
            put(repr(x[:room[0]]))
        elif kind is int:
            put(repr(x) if x.bit_length() <= 256 else
                f"<{'-' if x < 0 else ''}int of {x.bit_length()} bits>")
        elif x is None or kind in (bool, float, complex):
            put(repr(x))
        elif isinstance(x, (tuple, list, set, frozenset, dict)):
            base = next(b for b in (tuple, list, dict, set, frozenset) if isinstance(x, b))
            opening, closing = {tuple: "()", list: "[]", dict: "{}"}.get(base, "{}")
            if not (kind in (tuple, list, dict) or kind is set and x):
                # set(), frozenset({1}), OrderedDict({'a': 1}), a namedtuple as a tuple
                opening, closing = ((f"{kind.__name__}(", ")") if not x else
                                    (f"{kind.__name__}({opening}", f"{closing})"))
            if depth >= 8 and len(x):
                put(f"{opening}...{closing}")
                return
            put(opening)
            items = iter(x.items()) if base is dict else iter(x)
            for i, item in enumerate(items):
                if room[0] <= 0:
                    return
                if i:
                    put(", ")
                if base is dict:
                    walk(item[0], depth + 1)
                    put(": ")
                    walk(item[1], depth + 1)
                else:
                    walk(item, depth + 1)
            if base is tuple and len(x) == 1:
                put(",")
            put(closing)
        else:
            try:
                text = repr(x)
            except Exception:  # noqa: BLE001  (a broken __repr__ must not hide the error)
                text = f"<{kind.__name__}>"
            put(text)

    walk(obj, 0)
    text = "".join(parts)
    return text if room[0] > 0 else text[:limit] + "..."
