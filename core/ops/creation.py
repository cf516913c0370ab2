"""Creation: tensor/as_tensor/from_numpy, filled tensors, ranges, and random numbers.

Kernels: full(*, shape, value, dtype) and arange(*, start, stop, step, dtype) run on the
device.  Random numbers are drawn on the host from one NumPy PCG64 stream and copied, so
the same seed gives the same numbers on every device.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..device import as_device
from ..dispatch import _check_dtype, create
from ..errors import EmberOverflowError, EmberTypeError, EmberValueError, ShapeError
from ..signatures import size_keyword
from ..tensor import Tensor, contiguous_format, preserve_format, wrap
from . import _out
from ._op import declare, rule_attr, shape_attr
from ._out import factory
from ._util import as_shape, broadcast_shapes

# the public functions (ember.*); from_host, check_fits, ... are ember's own
__all__ = ["arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like",
           "get_rng_state", "initial_seed", "linspace", "manual_seed", "normal", "ones",
           "ones_like", "rand", "randint", "randn", "randperm", "set_rng_state", "tensor",
           "uniform", "zeros", "zeros_like", "Generator", "default_generator"]


full_op = declare("full", "creation", rule_attr, shape=shape_attr,
                  sig="*, shape: tuple[int], value: scalar, dtype: dtype",
                  doc="a new array of shape filled with value")
arange_op = declare("arange", "creation", rule_attr,
                    sig="*, start: scalar, stop: scalar, step: scalar, dtype: dtype",
                    doc="numpy.arange(start, stop, step) in dtype")


def _check_device_dtype(device, dtype, what):
    if device.type != "cpu":
        _check_dtype(what, device, dtype)


def c_order(array: np.ndarray) -> np.ndarray:
    """A row-major array (np.ascontiguousarray would turn a 0-d array into 1-d)."""
    return array if array.flags.c_contiguous else array.copy(order="C")


def from_host(array: np.ndarray, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor on `device` holding a copy of (or, on the CPU, the same) NumPy array."""
    return _made(lambda: array, device, requires_grad, random=False, name="constant")


def _made(make, device, requires_grad: bool, *, random: bool, name: str) -> Tensor:
    """A tensor from make() -> a host array, moved to device.  Under graph capture this
    is a node that calls make again at every replay: a random draw advances the stream as
    eager would; a constant is copied afresh (nothing written into it persists)."""
    device = as_device(device)
    if Tensor._capture is not None:
        from ..graph.capture import current
        tracer = current()
        if tracer is not None:
            array = c_order(make())           # the one draw eager makes now
            dtype = D.from_numpy_dtype(array.dtype)
            _check_device_dtype(device, dtype, "to")
            kept = None if random else array.copy()
            again = (lambda: c_order(make())) if random else (lambda: kept.copy())
            native = tracer.host(array, again, device, dtype, random, name)
            t = wrap(native, device, dtype)
            return t.requires_grad_(True) if requires_grad else t
    array = make()
    dtype = D.from_numpy_dtype(array.dtype)
    if device.type == "cpu":
        native = array
    else:
        _check_device_dtype(device, dtype, "to")
        native = device.backend.from_host(c_order(array), device.index)
    t = wrap(native, device, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def check_fits(value, dtype, op: str) -> None:
    """A Python number stored into an integer dtype (tensor(), full, setitem, fill_,
    masked_fill) is truncated toward zero where it fits; NaN (ValueError), inf and values
    out of the dtype's range (OverflowError) raise instead of wrapping, as in PyTorch
    (docs/semantics.md, numbers_stored_into_integer_tensors)."""
    if isinstance(value, (complex, np.complexfloating)) and dtype.category != D.COMPLEX:
        raise EmberValueError(f"{op}: value {value} cannot be converted to {dtype.name} "
                              "without dropping its imaginary part (torch refuses too); "
                              "use a complex dtype or pass value.real")
    if dtype.category == D.FLOAT and isinstance(value, (int, float, np.integer, np.floating)) \
            and not isinstance(value, (bool, np.bool_)) and math.isfinite(value):
        big = float(np.finfo(dtype.np).max) if dtype is not D.bfloat16 else 3.3895313892515355e38
        if abs(float(value)) > big:
            raise EmberOverflowError(f"{op}: value {value} cannot be converted to "
                                     f"{dtype.name} without overflow (largest {big:g}); "
                                     "use a wider dtype")
    if dtype.category != D.INT or isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (float, np.floating)):
        if value != value:
            raise EmberValueError(f"{op}: cannot store nan in a {dtype.name} tensor; use a "
                                  "floating dtype, or replace nan first")
        if value in (float("inf"), float("-inf")):
            raise EmberOverflowError(f"{op}: cannot store {value} in a {dtype.name} tensor; "
                                     "use a floating dtype")
        value = int(value)
    info = np.iinfo(dtype.np)
    if not info.min <= value <= info.max:
        raise EmberOverflowError(f"{op}: value {value} does not fit in {dtype.name} "
                                 f"([{info.min}, {info.max}]); use a wider dtype, or cast "
                                 "a tensor explicitly (x.to(...)) to wrap on purpose")


def _check_array_fits(arr: np.ndarray, dtype, op: str) -> None:
    """check_fits for every element of an array made from Python numbers."""
    if dtype.category != D.INT or arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            check_fits(float(arr[~np.isfinite(arr)].reshape(-1)[0]), dtype, op)
        arr = np.trunc(arr)
    for value in (arr.min(), arr.max()):
        check_fits(int(value), dtype, op)


def _infer_host(data, dtype):
    if isinstance(data, (np.ndarray, np.generic)):
        # NumPy arrays and scalars keep their dtype (np.float64(1.5) is float64, as torch)
        arr = np.asarray(data)
        if arr.dtype == object:
            raise EmberTypeError("tensor(): got a NumPy object array; expected numbers")
    else:
        if isinstance(data, (list, tuple)) and any(type(v) is Tensor for v in _flat(data)):
            data, found = _untensor(data, dtype)
            if dtype is None:           # PyTorch's rule: every element's dtype, promoted
                dtype = _promoted(found)
        try:
            arr = np.asarray(data)
        except (ValueError, TypeError) as exc:
            raise EmberValueError(f"tensor(): could not make a tensor from {type(data).__name__}"
                                  f": {exc}; expected a number, a (nested) list of numbers "
                                  "with a regular shape, or an array") from None
        if arr.dtype == object or arr.dtype.kind in "USV":
            raise EmberTypeError(f"tensor(): expected numbers, got {arr.dtype} data "
                                 f"({str(data)[:60]!r})")
        if dtype is None and arr.dtype.kind == "f":
            arr = arr.astype(D.get_default_dtype().np)
        if dtype is None and arr.dtype.kind in "iu" and arr.dtype != np.uint8:
            if arr.dtype == np.uint64:           # [2**63]: past int64, would wrap
                _check_array_fits(arr, D.int64, "tensor()")
            arr = arr.astype(np.int64)
        if dtype is not None:        # Python numbers never wrap (arrays cast like astype)
            _check_array_fits(arr, D.get_dtype(dtype), "tensor()")
            if arr.dtype.kind == "c" and D.get_dtype(dtype).category not in (D.COMPLEX,
                                                                              D.BOOL):
                raise EmberTypeError(
                    f"tensor(): got complex numbers for dtype {D.get_dtype(dtype).name}; "
                    "torch refuses to drop the imaginary parts too: pass a complex dtype, "
                    "or take .real of the complex tensor")
        if dtype is None and arr.dtype.kind == "c" and not isinstance(data, np.ndarray):
            # Python complex numbers: the complex dtype of the default float (torch)
            arr = arr.astype(D.get_dtype(complex).np)
    if dtype is not None:
        arr = arr.astype(D.get_dtype(dtype).np, copy=False)
    return arr


def _flat(data):
    for v in data:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


# PyTorch's text, word for word (programs filter on it)
_GRAD_TO_SCALAR = ("Converting a tensor with requires_grad=True to a scalar may lead to "
                   "unexpected behavior.\nConsider using tensor.detach() first.")


def _untensor(data, dtype, found=None):
    """(data with each tensor in it as a NumPy scalar, the element dtypes met): a tensor
    inside a list is one number, as in PyTorch (a one-element tensor of any shape), never
    a nested list (that would be a silent extra dimension)."""
    if found is None:
        found = []
    if isinstance(data, (list, tuple)):
        return [_untensor(v, dtype, found)[0] for v in data], found
    if type(data) is Tensor:
        if data.numel() != 1:
            raise EmberValueError(
                f"tensor(): only one element tensors can be converted to Python scalars, got "
                f"a tensor of shape {list(data.shape)} inside the list (as PyTorch); to join "
                "tensors into one use ember.stack(tensors) (or ember.cat)")
        if dtype is not None and D.get_dtype(dtype).category == D.INT and \
                data._dtype.category == D.FLOAT:
            raise EmberTypeError(
                f"tensor(): only integer tensors of a single element can be converted to an "
                f"index, got a {data._dtype.name} tensor inside the list for dtype "
                f"{D.get_dtype(dtype).name} (as PyTorch); convert it first with .long()")
        if data.requires_grad:
            import warnings

            from ..errors import EmberWarning
            warnings.warn(_GRAD_TO_SCALAR, EmberWarning, stacklevel=4)
        found.append(data._dtype)
        return data.detach()._host().reshape(()), found
    found.append(data)
    return data, found


def _promoted(found):
    """The dtype PyTorch infers for a list with these elements: tensors and NumPy scalars
    bring their dtype, bool bool, int int64, float the default dtype; all promoted."""
    out = None
    for v in found:
        if isinstance(v, D.DType):
            d = v
        elif isinstance(v, np.generic):         # before float: np.float64 is a float
            d = D.from_numpy_dtype(v.dtype)
        elif isinstance(v, bool):
            d = D.bool_
        elif isinstance(v, int):
            d = D.int64
        elif isinstance(v, float):
            d = D.get_default_dtype()
        else:
            return None                   # not a number: np.asarray says what it is
        out = d if out is None else D.promote_types(out, d)
    return out


@factory("pin_memory")
def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor with a copy of data (lists, numbers, arrays, tensors).

    Examples
    --------
    >>> import ember
    >>> t = ember.tensor([[1, 2], [3, 4]])
    >>> t.dtype, t.shape
    (ember.int64, ember.Size([2, 2]))
    >>> ember.tensor([1.5, 2.0]).dtype
    ember.float32

    PyTorch
    -------
    ``torch.tensor``
    """
    if type(data) is Tensor:
        t = data.detach().to(device=device or data.device, dtype=dtype or data.dtype,
                              copy=True)
        return t.requires_grad_(requires_grad) if requires_grad else t
    arr = _infer_host(data, dtype)
    if device is None or as_device(device).type == "cpu":
        arr = np.array(arr, copy=True)
    return from_host(arr, device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor(), but shares memory with a CPU NumPy array or tensor when it can.

    PyTorch
    -------
    ``torch.as_tensor``
    """
    if type(data) is Tensor:
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    return from_host(_infer_host(data, dtype), device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with a NumPy array.

    PyTorch
    -------
    ``torch.from_numpy``
    """
    if not isinstance(array, np.ndarray):
        raise EmberTypeError(f"from_numpy(): expected np.ndarray, got {type(array).__name__}")
    return wrap(array, as_device("cpu"), D.from_numpy_dtype(array.dtype))


def _factory_dtype(dtype, value=None):
    if dtype is not None:
        return D.get_dtype(dtype)
    if value is None or isinstance(value, float):
        return D.get_default_dtype()
    return D.scalar_dtype(value)


def _sized(size, name) -> tuple:
    """A factory's shape: ints, none negative, with fewer elements than any device holds."""
    shape = as_shape(size, name)
    if any(s < 0 for s in shape):
        raise EmberValueError(f"{name}: negative dimension in shape {shape}; expected sizes "
                              ">= 0")
    n = 1
    for s in shape:
        n *= s
    if n >= 1 << 62:
        raise EmberValueError(f"{name}: shape {shape} has {n:,} elements; no device holds "
                              f"more than 2**62 (check the sizes)")
    return shape


@factory("layout", "pin_memory", "out")
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value (bool,
    int64 or the default float dtype) unless ``dtype=`` is given.

    PyTorch
    -------
    ``torch.full``
    """
    shape = _sized((size,) if isinstance(size, int) else tuple(size), "full")
    if type(fill_value) is Tensor:
        fill_value = fill_value.item()
    dtype = _factory_dtype(dtype, fill_value)
    check_fits(fill_value, dtype, "full")
    return _filled(shape, fill_value, dtype, device, requires_grad)


def _filled(shape: tuple, value, dtype, device, requires_grad: bool) -> Tensor:
    """full's tensor of a checked shape, dtype and value."""
    device = as_device(device)
    _check_device_dtype(device, dtype, "full")
    t = create(full_op, device, dtype, {"shape": shape, "value": value, "dtype": dtype})
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shape_args(size, name):
    return _sized(size, name)


@factory("layout", "pin_memory", "out")
@size_keyword
def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with zeros.

    Parameters
    ----------
    *sizes : int or sequence of int
        The shape, as ``zeros(2, 3)``, ``zeros((2, 3))`` or ``size=(2, 3)``.

    Examples
    --------
    >>> import ember
    >>> ember.zeros(3).tolist()
    [0.0, 0.0, 0.0]

    PyTorch
    -------
    ``torch.zeros``
    """
    return _filled(_shape_args(size, "zeros"), 0, _factory_dtype(dtype), device,
                   requires_grad)


@factory("layout", "pin_memory", "out")
@size_keyword
def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with ones.

    Parameters
    ----------
    *sizes : int or sequence of int
        The shape, as ``ones(2, 3)``, ``ones((2, 3))`` or ``size=(2, 3)``.

    Examples
    --------
    >>> import ember
    >>> ember.ones(2, 3).shape
    ember.Size([2, 3])

    PyTorch
    -------
    ``torch.ones``
    """
    return _filled(_shape_args(size, "ones"), 1, _factory_dtype(dtype), device,
                   requires_grad)


@factory("layout", "pin_memory", "out")
@size_keyword
def empty(*size, dtype=None, device=None, requires_grad: bool = False,
          memory_format=contiguous_format) -> Tensor:
    """A tensor of the given size whose values are not set (ember fills it with zeros, so
    its content is never memory garbage).

    Parameters
    ----------
    *sizes : int or sequence of int
        The shape, as ``empty(2, 3)`` or ``empty((2, 3))`` or ``size=(2, 3)``.

    PyTorch
    -------
    ``torch.empty``; ember's values are zeros rather than uninitialised memory.
    """
    out = zeros(*size, dtype=dtype, device=device)
    if memory_format is not contiguous_format:
        out = _empty_format(out, memory_format, "empty")
    return out.requires_grad_(True) if requires_grad else out


# ops/layout.py hands these down (use_layout): the memory_format= of the factories
_relayout = _empty_format = None


def use_layout(relayout, empty_format) -> None:
    global _relayout, _empty_format
    _relayout, _empty_format = relayout, empty_format


def formatted(out: Tensor, like: Tensor, memory_format, requires_grad: bool, op: str):
    """A *_like factory's result (made row-major) laid out as memory_format says for like
    (preserve_format: like's own layout, as PyTorch's; ops/layout.py)."""
    if not (memory_format is preserve_format and like._get_meta("base") is None):
        out = _relayout(out, like, memory_format, op)
    return out.requires_grad_(True) if requires_grad else out


def _like(x, dtype, device):
    return dict(dtype=dtype or x.dtype, device=device or x.device)


@factory("layout", "pin_memory")
def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=preserve_format) -> Tensor:
    """A tensor of zeros with ``input``'s shape (and dtype and device unless given).

    PyTorch
    -------
    ``torch.zeros_like``
    """
    return formatted(full(input._data.shape, 0, **_like(input, dtype, device)), input,
                     memory_format, requires_grad, "zeros_like")


@factory("layout", "pin_memory")
def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
              memory_format=preserve_format) -> Tensor:
    """A tensor of ones with ``input``'s shape (and dtype and device unless given).

    PyTorch
    -------
    ``torch.ones_like``
    """
    return formatted(full(input._data.shape, 1, **_like(input, dtype, device)), input,
                     memory_format, requires_grad, "ones_like")


@factory("layout", "pin_memory")
def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad=False,
               memory_format=preserve_format) -> Tensor:
    """A tensor with ``input``'s shape (and dtype and device unless given) whose values are not
    set (zeros in ember).

    PyTorch
    -------
    ``torch.empty_like``
    """
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad,
                      memory_format=memory_format)


@factory("layout", "pin_memory")
def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=preserve_format):
    """A tensor with ``input``'s shape, dtype and device filled with ``fill_value``.

    PyTorch
    -------
    ``torch.full_like``
    """
    return formatted(full(input._data.shape, fill_value, **_like(input, dtype, device)), input,
                     memory_format, requires_grad, "full_like")


@factory("layout", "pin_memory", "out")
def arange(start, end=None, step=1, *, out=None, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) in steps of ``step``, as a 1-D tensor.

    Parameters
    ----------
    start, end, step : number
        With one argument it is ``end`` and ``start`` is 0.
    dtype, device, requires_grad
        As for every factory; the dtype is int64 for integer arguments, else the default
        float dtype.

    Examples
    --------
    >>> import ember
    >>> ember.arange(5).tolist()
    [0, 1, 2, 3, 4]

    PyTorch
    -------
    ``torch.arange``
    """
    if out is not None:
        return _out.write_out("arange", arange(start, end, step, dtype=dtype or out._dtype
                                               if type(out) is Tensor else dtype,
                                               device=device or getattr(out, "_device", None),
                                               requires_grad=requires_grad), out)
    if end is None:
        start, end = 0, start
    vals = [v.item() if type(v) is Tensor else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0 or (dtype is not None and D.get_dtype(dtype).category in (D.INT, D.BOOL)
                     and int(step) == 0):
        raise EmberValueError(f"arange: step must be nonzero (step={step}, which the "
                              f"integer dtype truncates to 0)" if step else
                              "arange: step must be nonzero")
    if (end - start) * step < 0:
        raise EmberValueError(f"arange: upper bound and larger bound inconsistent with step "
                              f"sign (start={start}, end={end}, step={step})")
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) for v in vals) else D.int64
    dtype = D.get_dtype(dtype)
    device = as_device(device)
    _check_device_dtype(device, dtype, "arange")
    t = create(arange_op, device, dtype, {"start": start, "stop": end, "step": step,
                                          "dtype": dtype})
    if requires_grad:
        t.requires_grad_(True)
    return t


@factory("layout", "pin_memory", "out")
def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end``, both included, as a 1-D
    tensor.

    Examples
    --------
    >>> import ember
    >>> ember.linspace(0, 1, 3).tolist()
    [0.0, 0.5, 1.0]

    PyTorch
    -------
    ``torch.linspace``
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise EmberTypeError(f"linspace(): argument 'steps' must be int, not "
                             f"{type(steps).__name__}")
    for v in (start, end):
        if type(v) is Tensor and v.ndim != 0:
            raise ShapeError(f"linspace only supports 0-dimensional start and end tensors, "
                             f"but got tensors with {v.ndim} dimension(s)")
    start, end = (v.item() if type(v) is Tensor else v for v in (start, end))
    if steps < 0:
        raise EmberValueError(f"linspace: number of steps must be non-negative, got {steps}")
    dtype = D.get_dtype(dtype) if dtype is not None else D.get_default_dtype()
    host = np.linspace(start, end, steps, dtype=np.float64).astype(dtype.np)
    return from_host(host, device, requires_grad)


@factory("layout", "pin_memory", "out")
def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``).

    PyTorch
    -------
    ``torch.eye``
    """
    dtype = D.get_dtype(dtype) if dtype is not None else D.get_default_dtype()
    n, m = _sized((n, n if m is None else m), "eye")
    return from_host(np.eye(n, m, dtype=dtype.np), device, requires_grad)


# --- random numbers: one host stream -------------------------------------------------

_rng = np.random.default_rng(0)
_seed = 0


class Generator:
    """A seeded stream (torch.Generator): for DataLoader shuffling and random_split.

    PyTorch
    -------
    ``torch.Generator``
    """

    def __init__(self, device="cpu"):
        # one host stream serves every device (random numbers are drawn on the host and
        # copied), so the device is the one it reports, as torch.Generator.device
        from ..device import as_device
        self.device = as_device(device)
        self._rng = np.random.default_rng()
        self._seed = None

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed (torch's)."""
        import os
        seed = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        return _state_bytes(self._rng.bit_generator.state)

    def set_state(self, state) -> Generator:
        self._rng.bit_generator.state = _state_dict(state, "Generator.set_state")
        return self


class _DefaultGenerator(Generator):
    """torch.default_generator: the global stream (ember.manual_seed's), as a Generator."""

    def __init__(self):
        from ..device import as_device
        self.device = as_device("cpu")

    @property
    def _rng(self):
        return _rng

    @property
    def _seed(self):
        return _seed

    def manual_seed(self, seed: int) -> Generator:
        return manual_seed(seed)


# PCG64's state as torch's get_rng_state gives it: a uint8 tensor (a tag, then the 128-bit
# state and increment, the cached-uint32 flag and value, little-endian); a dict (the
# NumPy bit generator's, as ember gave before) is still taken
_TAG = b"EMBERPCG64\x01"
_STATE_BYTES = len(_TAG) + 16 + 16 + 1 + 4


def _state_bytes(state: dict) -> Tensor:
    inner = state["state"]
    raw = (_TAG + int(inner["state"]).to_bytes(16, "little") +
           int(inner["inc"]).to_bytes(16, "little") + bytes([int(state["has_uint32"])]) +
           int(state["uinteger"]).to_bytes(4, "little"))
    return wrap(np.frombuffer(raw, dtype=np.uint8).copy(), as_device("cpu"), D.uint8)


def _state_dict(state, where: str) -> dict:
    if isinstance(state, dict):
        return state
    if type(state) is not Tensor or state._dtype is not D.uint8 or state.ndim != 1 or \
            state.numel() != _STATE_BYTES:
        got = (f"a {state._dtype.name} tensor of shape {list(state.shape)}"
               if type(state) is Tensor else type(state).__name__)
        raise EmberTypeError(
            f"{where}: expected the uint8 tensor get_rng_state()/get_state() returns "
            f"({_STATE_BYTES} bytes), got {got}; ember's generator is PCG64, so a torch "
            "(Mersenne twister) state cannot be loaded")
    raw = bytes(state.detach()._host().tobytes())
    if not raw.startswith(_TAG):
        raise EmberValueError(f"{where}: the tensor is not an ember generator state (its tag "
                              "is missing); pass what get_rng_state() returned")
    body = raw[len(_TAG):]
    return {"bit_generator": "PCG64",
            "state": {"state": int.from_bytes(body[:16], "little"),
                      "inc": int.from_bytes(body[16:32], "little")},
            "has_uint32": body[32], "uinteger": int.from_bytes(body[33:37], "little")}


default_generator = _DefaultGenerator()


def manual_seed(seed: int) -> Generator:
    """Seed the stream every device draws from (host generation, then a copy); returns the
    default generator, as torch's.

    PyTorch
    -------
    ``torch.manual_seed``
    """
    global _rng, _seed
    _seed = int(seed)
    _rng = np.random.default_rng(_seed)
    return default_generator


def initial_seed() -> int:
    """The seed the global generator was last seeded with.

    Returns
    -------
    int

    PyTorch
    -------
    ``torch.initial_seed``
    """
    return _seed


def get_rng_state() -> Tensor:
    """The global generator's state, for :func:`set_rng_state`.

    Returns
    -------
    Tensor
        A uint8 tensor (a ByteTensor, as PyTorch's) holding the PCG64 state.

    PyTorch
    -------
    ``torch.get_rng_state``; ember's generator is NumPy's PCG64 (random streams differ from
    PyTorch's for the same seed), so the bytes differ from torch's Mersenne twister's.
    """
    return _state_bytes(_rng.bit_generator.state)


def set_rng_state(state) -> None:
    """Restore the global generator to a state from :func:`get_rng_state`.

    PyTorch
    -------
    ``torch.set_rng_state``
    """
    _rng.bit_generator.state = _state_dict(state, "set_rng_state")


def _gen(generator):
    return _rng if generator is None else generator._rng


def _random(name, size, dtype, device, requires_grad, draw):
    shape = _sized(size, name)
    dtype = D.get_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if dtype.category == D.COMPLEX and name in ("rand", "randn"):
        # torch: each part drawn on its own, randn's parts of variance 1/2 (|z|^2 has mean 1)
        scale = 0.5 ** 0.5 if name == "randn" else 1.0

        def host():
            parts = draw((*shape, 2))
            return ((parts[..., 0] + 1j * parts[..., 1]) * scale).astype(dtype.np)
        return _made(host, device, requires_grad, random=True, name=name)
    if dtype.category != D.FLOAT:
        raise EmberTypeError(f"{name}: expected a floating dtype, got {dtype.name}; use "
                             "randint for integers")
    return _made(lambda: draw(shape).astype(dtype.np), device, requires_grad, random=True,
                 name=name)


@factory("layout", "pin_memory", "out")
@size_keyword
def rand(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Samples uniform on [0, 1) in a tensor of the given size (default float dtype).

    Parameters
    ----------
    *sizes : int or sequence of int
        The shape.
    generator : Generator, optional
        The generator to draw from instead of the global one.

    PyTorch
    -------
    ``torch.rand``; the samples differ from PyTorch's for the same seed (another generator).
    """
    return _random("rand", size, dtype, device, requires_grad,
                   lambda s: _gen(generator).random(s))


@factory("layout", "pin_memory", "out")
@size_keyword
def randn(*size, dtype=None, device=None, requires_grad=False, generator=None) -> Tensor:
    """Samples from the standard normal distribution in a tensor of the given size.

    Parameters
    ----------
    *sizes : int or sequence of int
        The shape.
    generator : Generator, optional
        The generator to draw from instead of the global one.

    PyTorch
    -------
    ``torch.randn``; the samples differ from PyTorch's for the same seed (another generator).
    """
    return _random("randn", size, dtype, device, requires_grad,
                   lambda s: _gen(generator).standard_normal(s))


def normal(mean=0.0, std=1.0, size=(), *, dtype=None, device=None, generator=None,
           layout=None, requires_grad: bool = False):
    """Samples from a normal distribution: ``normal(mean, std, size)`` with numbers, or
    elementwise with tensor ``mean`` and/or ``std`` (their broadcast shape); layout must be
    strided, requires_grad makes a leaf.

    Raises
    ------
    ValueError
        A negative ``std`` (``ember.EmberValueError``, a ValueError).

    PyTorch
    -------
    ``torch.normal``; the samples differ from PyTorch's for the same seed (another generator).
    """
    if layout is not None and str(layout).rsplit(".", 1)[-1] != "strided":
        raise EmberValueError(f"normal(layout={layout}): ember has only the strided layout; "
                              "drop layout=")
    if requires_grad:
        return normal(mean, std, size, dtype=dtype, device=device,
                      generator=generator).requires_grad_(True)
    if type(mean) is Tensor or type(std) is Tensor:
        return _normal_tensors(mean, std, generator)
    if std < 0:
        raise EmberValueError(f"normal: std must be >= 0, got {std}")
    return _random("normal", tuple(size), dtype, device, False,
                   lambda s: _gen(generator).normal(mean, std, s))


def _normal_tensors(mean, std, generator) -> Tensor:
    """torch.normal with a tensor mean and/or std: one draw per element of their broadcast
    shape. Like PyTorch, the draw carries no gradient to mean or std."""
    from ..autograd.grad_mode import no_grad
    like = mean if type(mean) is Tensor else std
    if like._dtype.category != D.FLOAT:
        raise EmberTypeError(f"normal: expected a floating mean/std tensor, got "
                             f"{like._dtype.name}")
    bad = (std < 0).any().item() if type(std) is Tensor else std < 0
    if bad:
        raise EmberValueError(f"normal: std must be >= 0 everywhere, got {std}")
    shape = broadcast_shapes("normal", *(tuple(t.shape) for t in (mean, std)
                                         if type(t) is Tensor))
    noise = randn(*shape, dtype=like._dtype, device=like._device, generator=generator)
    with no_grad():
        return mean + std * noise


def uniform(low, high, size, *, dtype=None, device=None, generator=None):
    """Samples uniform on [``low``, ``high``) in a tensor of shape ``size``.

    PyTorch
    -------
    None: ember's own factory; PyTorch writes ``torch.empty(size).uniform_(low, high)``
    (``torch.Tensor.uniform_``).
    """
    return _random("uniform", tuple(size), dtype, device, False,
                   lambda s: _gen(generator).uniform(low, high, s))


@factory("layout", "pin_memory", "out")
def randint(low, high=None, size=(), *, dtype=None, device=None, generator=None,
            requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [``low``, ``high``) in a tensor of shape ``size``
    (int64); ``randint(high, size)`` starts at 0.

    PyTorch
    -------
    ``torch.randint``; the samples differ from PyTorch's for the same seed.
    """
    if isinstance(high, (tuple, list)):        # randint(high, size), as PyTorch
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise EmberValueError(f"randint: expected low < high, got low={low}, high={high}")
    dtype = D.get_dtype(dtype) if dtype is not None else D.int64
    if dtype.category == D.INT:
        info = np.iinfo(dtype.np)
        if low < info.min or high - 1 > info.max:
            raise EmberValueError(f"randint: [{low}, {high}) is out of bounds for "
                                  f"{dtype.name} ([{info.min}, {info.max}]); use a wider "
                                  "dtype")
    shape = _sized(tuple(size), "randint")
    return _made(lambda: _gen(generator).integers(low, high, size=shape).astype(dtype.np),
                 device, requires_grad, random=True, name="randint")


@factory("layout", "pin_memory", "out")
def randperm(n: int, *, dtype=None, device=None, generator=None) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64).

    PyTorch
    -------
    ``torch.randperm``; the permutation differs from PyTorch's for the same seed.
    """
    dtype = D.get_dtype(dtype) if dtype is not None else D.int64
    _sized((n,), "randperm")                   # a negative n raises, as torch
    return _made(lambda: _gen(generator).permutation(n).astype(dtype.np), device, False,
                 random=True, name="randperm")


def bernoulli_mask(shape, p: float, dtype, device, generator=None) -> Tensor:
    """A {0, 1} mask with P(1) = p (dropout)."""
    return _made(lambda: (_gen(generator).random(shape) < p).astype(dtype.np), device, False,
                 random=True, name="bernoulli")


