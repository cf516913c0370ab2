"""The backend contract: what a plugin's backend object provides (Protocols), its reports, and
the check the plugin host runs on a backend when it loads.

A kernel table to start from: `ember.backends.array_api.kernels(xp)` (import
`ember.backends.array_api`) holds every required kernel, written against the Python array
API standard for a namespace `xp`, except the ones named in its `LIBRARY_SPECIFIC` (erf,
index_add, scatter_add, index_put, assign), which a library supplies itself
(`numpy_extras(np)` are NumPy's).  README.md, "Writing a backend plugin", is the guide."""
from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Collection
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# the plugin contract, as the API reference documents it (docs/api/backend)
__all__ = ["VIEWS", "Backend", "OptionalMembers", "Probe", "DeviceInfo", "Capabilities",
           "optional", "is_device_type", "check_kernels", "validate", "autotuning",
           "autotune_requested"]

# What a backend's movement kernels (slice, reshape, permute, expand, diagonal) return:
#   "strided"         NumPy-like views over the input's memory, negative steps included:
#                     a write through the result reaches the input
#   "positive-steps"  views for positive steps only; a negative step returns a copy
#   "none"            every movement kernel returns a copy (immutable arrays: always)
# Where a kernel may return a copy, the core tracks views itself: setitem and in-place ops
# on a view are made functional (slice_scatter into the base, written back; index_put at
# the elements an expanded view's strides reach), views are recomputed after a write into
# their base, and a reshape that PyTorch's strides cannot express as a view is new memory,
# so every backend behaves as PyTorch does (core/testing/views.py).
VIEWS = ("strided", "positive-steps", "none")


@dataclass(frozen=True)
class Probe:
    """Whether a backend can run here; when not, the first failing step and the fix.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """

    available: bool
    reason: str = ""            # plain words: "no NVIDIA driver was found"
    fix: str = ""               # the next command to run
    reference: str = ""         # stable slug, e.g. "cuda-no-driver"
    details: dict = field(default_factory=dict)   # versions and other facts seen


@dataclass(frozen=True)
class DeviceInfo:
    """One device of a backend, as `ember devices` prints it.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """

    index: int | None
    name: str
    kind: str = "cpu"           # "cpu", "gpu", "accelerator"
    platform: str = ""
    version: str = ""
    memory: int | None = None   # bytes
    fp64: bool = True
    fp16: bool = True

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"


@dataclass(frozen=True)
class Capabilities:
    """What a device can do; `dtypes` are ember dtype names.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """

    dtypes: frozenset
    memory: int | None = None
    extra: dict = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """The members every backend has; the host refuses a backend that lacks one.

    name: the device type it serves ('cpu', 'opencl', 'mydev': lowercase letters, digits
        and '_', starting with a letter; not 'auto').
    kernels: op name -> callable on native arrays.  Names are those `ember ops --json`
        lists (primitives and declared kernels, each with its signature); an unknown name
        is refused at load, with the closest declared name.  May be a property when the
        table needs a library imported (it is then checked the first time it is used).

        A kernel receives the op's inputs in signature order as natives of this backend
        on the device the table serves, already in the op's compute dtype, or a Python
        int/float/bool where the signature says `array|scalar`; its attributes come as
        keywords of plain Python values (shapes resolved, dims non-negative, builtin
        slices, strings, numbers, ember dtypes for `dtype`).  It returns a new native
        array of the op's dtype and shape (0-d for a 0-d result), never a Python or NumPy
        scalar; only reshape/permute/expand/slice may return views of an input (see
        OptionalMembers.views).  In-place kernels (assign, add_, ...) write into their
        first input and return None.  EMBER_CHECK_KERNELS=1 checks every result.

    Natives never leave the backend except through to_host; each has a `shape` (a tuple
    of ints), which ember reads.  Tensors that share memory (detach(), .data) share the
    native object, and every write ember makes ends in the `assign` kernel (or in an
    optional in-place kernel the backend has): a backend over immutable arrays (JAX) makes
    its native a mutable box around the array, every kernel unboxing its inputs and boxing
    its result, and `assign` replacing the array in the destination's box.
    The optional members are in OptionalMembers; read them with `optional(backend, name)`.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """

    name: str
    kernels: dict[str, Callable[..., Any]]

    def probe(self) -> Probe:
        """Whether the backend can run here; never raises (a failure is a Probe saying why
        and what to install)."""

    def devices(self) -> list[DeviceInfo]:
        """The devices it serves, in a stable order (their index is `type:N`)."""

    def from_host(self, array, index: int | None):
        """A native copy of a NumPy array on device `index`."""

    def to_host(self, native):
        """A NumPy array with a native array's values.  It may be read-only, or the native
        itself where natives are NumPy arrays: ember copies it before writing into it
        (tensor.cpu()); tensor.numpy() returns it as it is."""

    def capabilities(self, index: int | None) -> Capabilities:
        """The dtypes (and memory) of device `index`; checked before any kernel runs (other
        dtypes raise DtypeNotSupportedError).  None is required, but in practice float32,
        int64 (every index: indexing, gather/scatter, argmax, class targets) and bool
        (every comparison and mask)."""


class OptionalMembers(Protocol):
    """Members a backend may have; the host checks their type when it loads the backend.

    aliases: further device types it answers to (a ROCm backend answers to 'cuda', as in
        PyTorch); default ().
    upcast_bfloat16: compute bfloat16 elementwise math in float32 and round the result
        (the CPU backend: NumPy mixes ml_dtypes' bfloat16 with Python numbers in float32);
        default False.
    views: what its movement kernels return, one of VIEWS; default "none", the safe
        assumption: a backend that returns views but says "none" pays for copies, one
        that returns copies but claims views would lose writes.  With "none" or
        "positive-steps" the core tracks views itself (see VIEWS), as PyTorch has them.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """

    aliases: tuple[str, ...]
    upcast_bfloat16: bool
    views: str

    def kernels_for(self, index: int | None) -> dict[str, Callable[..., Any]]:
        """The kernel table for device `index` (per-device tables: each kernel runs on that
        device); without it every device uses `kernels`."""

    def synchronize(self, index: int | None = None) -> None:
        """Wait for the kernels queued on device `index` (every device when None)."""

    def copy_to(self, native, index: int | None):
        """A copy of `native` on device `index` of the same backend without the host
        (peer copy); without it `tensor.to()` copies through the host."""

    def empty_cache(self) -> None:
        """Give cached, unused memory back to the driver (`ember.cuda.empty_cache()`)."""

    def memory_allocated(self, index: int | None = None) -> int:
        """Bytes held by arrays on device `index`."""

    def memory_reserved(self, index: int | None = None) -> int:
        """Bytes the backend's allocator holds on device `index`, in use or cached."""

    def strides(self, native) -> tuple[int, ...]:
        """A native's strides in elements (Tensor.stride()); a backend whose views are
        "strided" has it (without it Tensor.stride() raises NotInEmberError); for the
        others the core tracks the strides of views itself (row-major natives)."""

    def data_ptr(self, native) -> int:
        """The address of a native's first element (Tensor.data_ptr(): a view's is its
        base's plus its offset in bytes); a backend whose memory has no address the host
        can see lacks it (Tensor.data_ptr() then raises NotInEmberError)."""

    def offset(self, native, base) -> int | None:
        """How many elements into base's memory a native starts (Tensor.storage_offset()
        of a view), None where it has memory of its own, for a backend whose views are
        "strided"; without it the core takes the difference of data_ptr's addresses."""

    def compile_graph(self, graph) -> Callable[[list], tuple] | None:
        """A replay of an ember.graph.Graph (ember.compile) made by the backend: a function
        of the input natives (in graph.inputs order) returning (outputs, gradients) as
        ember.graph.replay.generate's does; None to let ember generate it (the default:
        the recorded kernels called in order from generated Python)."""

    def profile_device(self, on: bool) -> list | None:
        """Device time for ember.profiler: on, record every kernel its devices run from now
        on with the device's timestamps; off, stop and return them as (device index, kernel
        name, host time.perf_counter_ns() at enqueue, queued, submit, start, end ns on the
        device's own clock).  Without it the profiler records host time only."""

    def set_num_threads(self, n: int) -> None:
        """Use n threads for the backend's work inside one op (ember.set_num_threads): the
        CPU backend limits NumPy's BLAS, the OpenCL backend a CPU device's worker threads.
        The host calls it on every loaded backend, and on a backend loaded later before
        its first probe; a count it can no longer apply is a warning saying so."""


def _members(protocol) -> tuple[str, ...]:
    """A Protocol's attributes and methods, in the order written."""
    methods = [n for n, v in vars(protocol).items() if inspect.isfunction(v)
               and not n.startswith("_")]
    return (*protocol.__annotations__, *methods)


REQUIRED = _members(Backend)
OPTIONAL = _members(OptionalMembers)
# what optional() answers for a member a backend lacks (None: a method it does not have)
DEFAULTS: dict[str, Any] = {**dict.fromkeys(OPTIONAL), "aliases": (),
                            "upcast_bfloat16": False, "views": "none"}
METHODS = tuple(m for m in (*REQUIRED, *OPTIONAL) if DEFAULTS.get(m, None) is None
                and m not in Backend.__annotations__)
_DEVICE_TYPE = re.compile(r"[a-z][a-z0-9_]*")
_ABSENT = object()


def optional(backend, name: str):
    """An optional member of a backend (see OptionalMembers), or its default when the
    backend lacks it: None for a method, so `fn = optional(b, "synchronize")` then
    `if fn is not None: fn(index)`.  The one way core code reads an optional member.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """
    try:
        default = DEFAULTS[name]
    except KeyError:
        from .errors import EmberValueError
        raise EmberValueError(f"optional({name!r}): not an optional Backend member; "
                              f"expected one of {', '.join(OPTIONAL)}") from None
    return getattr(backend, name, default)


def is_device_type(name) -> bool:
    """Whether `name` can be a device type ('cpu', 'my_dev2'; never 'auto').

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """
    return isinstance(name, str) and name != "auto" and bool(_DEVICE_TYPE.fullmatch(name))


def _closest(name: str, names: Collection[str], cutoff: float = 0.6) -> str:
    import difflib  # only when a name is wrong: `import ember` stays light
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_kernels(table, declared: Collection[str] | None) -> list[str]:
    """What is wrong with a kernel table: not a dict, names that are not declared ops
    (each with the closest declared name; None: names are not checked), values that are
    not callable.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """
    if not isinstance(table, dict):
        return [f"kernels must be a dict of op name -> callable, got {type(table).__name__}"]
    problems = []
    for name, kernel in table.items():
        if not isinstance(name, str) or (declared is not None and name not in declared):
            hint = _closest(name, declared) if isinstance(name, str) else ""
            problems.append(f"kernel {name!r} is not a declared op or kernel{hint}; "
                            "`ember ops --json` lists every name")
        elif not callable(kernel):
            problems.append(f"kernel {name!r} is not callable (got {type(kernel).__name__})")
    return problems


def _is_property(backend, name: str) -> bool:
    return isinstance(inspect.getattr_static(type(backend), name, None), property)


def validate(backend, declared: Collection[str] | None) -> tuple[list[str], list[str]]:
    """(problems, warnings) of a backend against the Protocols.

    Problems make the host refuse it: a required member missing or not callable, a `name`
    or alias that is not a device type, a kernel table that `check_kernels` faults, an
    optional member of the wrong type.  Warnings: public names that look like a misspelt
    member (`synchronise`), which ember would never call.  Reads no property but `name`,
    so a `kernels` property that imports a library is checked later, on first use.

    PyTorch
    -------
    None: PyTorch has no backend plugin contract of this form; an out-of-tree device
    registers C++ kernels with the dispatcher (``torch.utils.rename_privateuse1_backend``).
    """
    problems, warnings = [], []
    for member in REQUIRED:
        if inspect.getattr_static(backend, member, _ABSENT) is _ABSENT:
            problems.append(f"missing required member {member!r} (see ember.backend.Backend)")
    for member in METHODS:
        value = getattr(backend, member, None)
        if value is not None and not callable(value):
            problems.append(f"{member} must be a method, got {type(value).__name__}")
    name = getattr(backend, "name", None)
    if name is not None and not is_device_type(name):
        problems.append(f"name must be a device type (lowercase letters, digits and '_', "
                        f"starting with a letter, not 'auto'), got {name!r}")
    aliases = optional(backend, "aliases")
    if not isinstance(aliases, (tuple, list)) or not all(map(is_device_type, aliases)):
        problems.append(f"aliases must be a tuple of device types, got {aliases!r}")
    if not isinstance(optional(backend, "upcast_bfloat16"), bool):
        problems.append("upcast_bfloat16 must be a bool, got "
                        f"{optional(backend, 'upcast_bfloat16')!r}")
    if optional(backend, "views") not in VIEWS:
        problems.append(f"views must be one of {', '.join(map(repr, VIEWS))}, got "
                        f"{optional(backend, 'views')!r}")
    if (inspect.getattr_static(backend, "kernels", _ABSENT) is not _ABSENT
            and not _is_property(backend, "kernels")):
        problems += check_kernels(backend.kernels, declared)
    members = set(REQUIRED) | set(OPTIONAL)
    for attr in dir(backend):
        if attr.startswith("_") or attr in members:
            continue
        hint = _closest(attr, members, cutoff=0.85)
        if hint:
            warnings.append(f"{attr!r} is not a Backend member, so ember never uses it{hint}")
    return problems, warnings


# --- kernel tuning (ember.compile's max-autotune modes) ------------------------------------

_tuning = threading.local()


@contextmanager
def autotuning():
    """Within the block (this thread), a backend may time its kernel choices for the exact
    shapes it meets and keep the fastest for them (ember.compile(mode='max-autotune')
    captures under it; the OpenCL backend times its matmul structures per shape).

    PyTorch
    -------
    None: ``torch.compile(mode='max-autotune')`` tunes inside the compiler.
    """
    depth = getattr(_tuning, "depth", 0)
    _tuning.depth = depth + 1
    try:
        yield
    finally:
        _tuning.depth = depth


def autotune_requested() -> bool:
    """Whether this thread is inside `autotuning()` (a backend's kernels ask).

    PyTorch
    -------
    None: ``torch.compile(mode='max-autotune')`` tunes inside the compiler.
    """
    return getattr(_tuning, "depth", 0) > 0
