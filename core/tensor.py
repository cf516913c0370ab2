"""Tensor: a native array, its device and dtype, and an autograd slot; no math of its own.

Every method that computes is bound from one table (core/methods/__init__.py); this module
keeps only state, conversion to the host and the repr.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import EmberIndexError, EmberTypeError, EmberValueError

if TYPE_CHECKING:
    # the methods bound from core/methods' table, as type checkers see them (generated)
    from ._tensor_methods import TensorMethods as _Methods
else:
    _Methods = object


class Tensor(_Methods):
    """An n-dimensional array on a device, with PyTorch's API.

    PyTorch
    -------
    ``torch.Tensor``
    """

    # grad, retain_grad, hooks and the view base live in _meta (rarely set, so the hot
    # path sets seven slots, not twelve).
    __slots__ = ("_data", "_device", "_dtype", "requires_grad", "grad_fn", "_version",
                 "_meta", "__weakref__")
    __array_priority__ = 1000     # numpy scalars defer to our reflected operators
    # the active graph capture (ember.graph sets it while any thread captures): gradient
    # reads and writes, host reads and the few places arrays are born report to it
    _capture = None

    # __new__ is PyTorch's legacy constructor, Tensor(2, 3) (legacy.tensor_new, bound with
    # the methods); ops build tensors through wrap(), which never comes here
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass                      # __new__ made it

    # -- state ------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The size of each dim, as an ``ember.Size`` (a tuple).

        PyTorch
        -------
        ``torch.Tensor.shape``
        """
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        """The shape as an ``ember.Size``, or the size of ``dim``.

        PyTorch
        -------
        ``torch.Tensor.size``
        """
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        if type(dim) is int and -len(shape) <= dim < len(shape):
            return shape[dim]                  # the common case, without norm_dim's checks
        from .ops._util import norm_dim
        d = norm_dim(dim, len(shape), "size")
        if not shape:                          # norm_dim lets dim 0 / -1 through for 0-d
            raise EmberIndexError(f"size: dim {dim} given for a 0-d tensor, which has no "
                                  "dims (PyTorch raises the same); use .size() or .shape")
        return shape[d]

    @property
    def ndim(self) -> int:
        """The number of dims.

        PyTorch
        -------
        ``torch.Tensor.ndim``
        """
        return len(self._data.shape)

    def dim(self) -> int:
        """The number of dims.

        PyTorch
        -------
        ``torch.Tensor.dim``
        """
        return len(self._data.shape)

    def numel(self) -> int:
        """The number of elements.

        PyTorch
        -------
        ``torch.Tensor.numel``
        """
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self) -> Any:
        """The element type (``ember.float32``, ``ember.int64``, ...).

        PyTorch
        -------
        ``torch.Tensor.dtype``
        """
        return self._dtype

    @property
    def device(self) -> Any:
        """The device the tensor's memory is on (an ``ember.device``).

        PyTorch
        -------
        ``torch.Tensor.device``
        """
        return self._device

    @property
    def is_leaf(self) -> bool:
        """Whether no recorded op made this tensor (``grad_fn`` is None).

        PyTorch
        -------
        ``torch.Tensor.is_leaf``
        """
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor is on a CUDA device.

        PyTorch
        -------
        ``torch.Tensor.is_cuda``
        """
        return self._device.type == "cuda"

    @property
    def is_floating_point_(self) -> bool:
        """Whether the dtype is a floating one, as a property (``is_floating_point()`` is the
        method PyTorch has).

        PyTorch
        -------
        None: ``torch.Tensor.is_floating_point`` is a method only.
        """
        return self._dtype.category == 2

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating one.

        PyTorch
        -------
        ``torch.Tensor.is_floating_point``
        """
        return self._dtype.category == 2

    def element_size(self) -> int:
        """The size of one element in bytes.

        PyTorch
        -------
        ``torch.Tensor.element_size``
        """
        return self._dtype.itemsize

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward`` accumulated into this leaf.

        PyTorch
        -------
        ``torch.Tensor.grad``
        """
        m = self._meta
        g = None if m is None else m.get("grad")
        if Tensor._capture is not None and g is not None:
            Tensor._capture.grad_read(self, g)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if type(value) is not Tensor:
                raise EmberTypeError(f"assigned grad must be a Tensor or None, got "
                                     f"{type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise EmberValueError(
                    f"assigned grad has shape {tuple(value.shape)} but the tensor has shape "
                    f"{tuple(self.shape)}")
        self._set_grad(value)

    def _set_grad(self, value) -> None:
        """Bind .grad (every write of a gradient in ember passes here: graph capture sees
        them all)."""
        m = self._meta
        if m is None:
            m = self._meta = {}
        m["grad"] = value
        if Tensor._capture is not None:
            Tensor._capture.grad_set(self, value)

    def _set_meta(self, key, value):
        m = self._meta
        if m is None:
            m = self._meta = {}
        m[key] = value

    def _get_meta(self, key, default=None):
        m = self._meta
        return default if m is None else m.get(key, default)

    @property
    def data(self) -> Tensor:
        """A tensor sharing this storage, outside autograd (as torch's .data)."""
        return _alias(self)

    @data.setter
    def data(self, other: Tensor) -> None:
        self._data, self._dtype, self._device = other._data, other._dtype, other._device

    # -- host conversion ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a NumPy array (sharing memory on the CPU; ``force=True`` also for a
        tensor that requires grad).

        PyTorch
        -------
        ``torch.Tensor.numpy``
        """
        if self.requires_grad and not force:
            raise EmberTypeError(
                "numpy(): can't call numpy() on a tensor that requires grad; "
                "use tensor.detach().numpy()")
        return self._host()

    def _host(self) -> np.ndarray:
        """The values on the host: where data reaches Python (a graph break in capture)."""
        if Tensor._capture is not None:
            Tensor._capture.host_read(self)
        dev = self._device
        return self._data if dev.type == "cpu" else dev.backend.to_host(self._data)

    def item(self) -> int | float | bool:
        """The value of a one-element tensor as a Python number.

        PyTorch
        -------
        ``torch.Tensor.item``
        """
        if self.numel() != 1:
            raise EmberValueError(
                f"item(): a tensor with {self.numel()} elements cannot be converted to a "
                "Python number; expected exactly one element (index it first)")
        return self._host().reshape(()).item() if self._dtype.name != "bfloat16" else \
            float(self._host().reshape(()))

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers.

        PyTorch
        -------
        ``torch.Tensor.tolist``
        """
        h = self._host()
        if self._dtype.name == "bfloat16":
            h = h.astype(np.float32)
        return h.tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # NumPy's protocol (with NumPy 2's copy=): a CPU tensor is seen without a copy; a
        # device tensor is refused as in PyTorch, so that no transfer happens unasked
        if self._device.type != "cpu":
            raise EmberTypeError(
                f"np.asarray(tensor): the tensor is on {self._device}, whose memory NumPy "
                "cannot read; copy it to the host first with tensor.cpu() (or use "
                "tensor.numpy(), which copies)")
        host = self._host()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise EmberValueError(f"np.asarray(tensor, dtype={np.dtype(dtype)}, "
                                      f"copy=False): the tensor is {self._dtype.name}, so a "
                                      "copy is needed; drop copy=False")
            return host.astype(dtype)
        return host.copy() if copy else host

    def __len__(self) -> int:
        if not self._data.shape:
            raise EmberTypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if not self._data.shape:
            raise EmberTypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise EmberValueError(
                f"Boolean value of Tensor with {self.numel()} values is ambiguous; "
                "use .any() or .all()")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._dtype.category != 1 or self.numel() != 1:
            raise EmberTypeError("only integer tensors of a single element can be an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._format import format_tensor
        return format_tensor(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.ndim == 0:        # f"{t}" of a 0-d tensor is its number, as in PyTorch
            return format(self.item(), spec)
        return repr(self)


class Size(tuple):
    """torch.Size: a tuple of ints with a torch-like repr.

    PyTorch
    -------
    ``torch.Size``
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


class memory_format:  # noqa: N801  (torch.memory_format)
    """torch.memory_format: how a tensor's elements are laid out in memory (ops/layout.py).

    ember.contiguous_format is row-major; ember.channels_last (4-D) and
    ember.channels_last_3d (5-D) put the channels innermost; ember.preserve_format asks a
    result to keep its input's layout (PyTorch's default for clone and the *_like
    factories).

    PyTorch
    -------
    ``torch.memory_format``
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name          # pickled by name: the same object comes back


class layout:  # noqa: N801  (torch.layout)
    """torch.layout: how a tensor's elements are stored.  ember's tensors are all
    ``ember.strided`` (dense); the factories take ``layout=ember.strided`` and refuse
    another (ember.sparse_coo_tensor builds its own sparse kind).

    PyTorch
    -------
    ``torch.layout``
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"ember.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


_new = object.__new__


# --- the version counter a tensor shares with its views and detached aliases ------------
# PyTorch keeps one version counter per storage family: a view, its base, the other views
# of that base and x.detach() all read and bump the same one, so autograd sees a saved
# tensor changed through any alias.  ember keeps an int per tensor (read on the hot path)
# and makes the family's counter the root's: a view's meta names its base (the root of its
# views), and a detached alias names (weakly: a detached loss kept for logging must not keep
# the graph alive) the root it was detached from.  Every write bumps the tensor written, its
# base and that root (bump_version), so the root's count moves with every write into the
# family, and version() reads it.

def version_root(t: Tensor) -> Tensor:
    """The tensor whose count is t's family's version: its base (or t), or the root that
    one was detached from while that lives."""
    m = t._meta
    if m is None:
        return t
    base = m.get("base")
    if base is not None:
        t = base
        m = t._meta
        if m is None:
            return t
    ref = m.get("version_of")
    root = None if ref is None else ref()
    return t if root is None else root


def version(t: Tensor) -> int:
    """The version of t's storage family, as autograd's saved-tensor checks read it (torch's
    shared version counter): its root's count (t's own where t has no alias)."""
    return t._version if t._meta is None else version_root(t)._version


def bump_version(t: Tensor) -> None:
    """t was written in place: bump it, its base and the root of its family."""
    t._version += 1
    m = t._meta
    if m is None:
        return
    base = m.get("base")
    if base is not None:
        base._version += 1
    root = version_root(t)
    if root is not t and root is not base:
        root._version += 1


def wrap(data, device, dtype) -> Tensor:
    """A Tensor around a native array: the one constructor on the hot path."""
    t = _new(Tensor)
    t._data = data
    t._device = device
    t._dtype = dtype
    t.requires_grad = False
    t.grad_fn = None
    t._version = 0
    t._meta = None
    return t


def _alias(t: Tensor) -> Tensor:
    return wrap(t._data, t._device, t._dtype)
