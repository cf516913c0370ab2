"""dtype objects, PyTorch's promotion rules, and name lookup."""
from __future__ import annotations

import numpy as np

from .errors import EmberTypeError, EmberValueError

# Categories order the kinds for promotion: bool < integer < floating < complex.
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class DType:
    """An ember dtype: a PyTorch name, its NumPy twin and its promotion category.

    PyTorch
    -------
    ``torch.dtype``
    """

    __slots__ = ("name", "itemsize", "category", "is_signed", "_np_name")

    def __init__(self, name: str, itemsize: int, category: int, is_signed: bool, np_name: str):
        self.name = name
        self.itemsize = itemsize
        self.category = category
        self.is_signed = is_signed
        self._np_name = np_name

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == COMPLEX

    def to_real(self) -> DType:
        """The real dtype of a complex one's parts (complex64 -> float32); a real dtype
        is its own (torch.Tensor.real's dtype)."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> DType:
        """The complex dtype whose parts are this float (float32 -> complex64), as torch's
        toComplexType; float16 and bfloat16 have none in ember (torch's complex32 is not
        built) and integers none at all."""
        c = _TO_COMPLEX.get(self)
        if c is None:
            if self.category == COMPLEX:
                return self
            from .errors import NotInEmberError
            if self is float16:
                raise NotInEmberError(
                    "complex32 (torch.chalf, the complex dtype of float16 parts) is not built "
                    "in ember; compute in float32 (.float()) to get complex64")
            raise EmberTypeError(f"{self.name} has no complex dtype (as torch: only float32 "
                                 "and float64 have one in ember)")
        return c

    @property
    def np(self) -> np.dtype:
        """The NumPy dtype of host copies (bfloat16 comes from ml_dtypes)."""
        return _np_dtype(self)

    def __repr__(self) -> str:
        return f"ember.{self.name}"

    def __reduce__(self):
        return (get_dtype, (self.name,))


bool_ = DType("bool", 1, BOOL, False, "bool")
uint8 = DType("uint8", 1, INT, False, "uint8")
int8 = DType("int8", 1, INT, True, "int8")
int16 = DType("int16", 2, INT, True, "int16")
int32 = DType("int32", 4, INT, True, "int32")
int64 = DType("int64", 8, INT, True, "int64")
float16 = DType("float16", 2, FLOAT, True, "float16")
bfloat16 = DType("bfloat16", 2, FLOAT, True, "bfloat16")
float32 = DType("float32", 4, FLOAT, True, "float32")
float64 = DType("float64", 8, FLOAT, True, "float64")
complex64 = DType("complex64", 8, COMPLEX, True, "complex64")
complex128 = DType("complex128", 16, COMPLEX, True, "complex128")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
       complex64, complex128)
REAL = ALL[:-2]
FLOATING = (float16, bfloat16, float32, float64)
COMPLEXES = (complex64, complex128)
INTEGRAL = (uint8, int8, int16, int32, int64)
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float32: complex64, float64: complex128}

_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({
    "bool_": bool_, "half": float16, "float": float32, "double": float64, "long": int64,
    "int": int32, "short": int16, "byte": uint8, "char": int8,
    "cfloat": complex64, "cdouble": complex128,
})
_NP_CACHE: dict[DType, np.dtype] = {}
_FROM_NP: dict[np.dtype, DType] = {}


def _np_dtype(d: DType) -> np.dtype:
    cached = _NP_CACHE.get(d)
    if cached is None:
        if d is bfloat16:
            import ml_dtypes
            cached = np.dtype(ml_dtypes.bfloat16)
        else:
            cached = np.dtype(d._np_name)
        _NP_CACHE[d] = cached
        _FROM_NP[cached] = d
    return cached


for _d in ALL:
    if _d is not bfloat16:
        _np_dtype(_d)

_default_float = float32


def get_default_dtype() -> DType:
    """The floating dtype new tensors get from Python floats (``float32`` unless
    :func:`set_default_dtype` chose another).

    Returns
    -------
    dtype

    PyTorch
    -------
    ``torch.get_default_dtype``
    """
    return _default_float


def set_default_dtype(dtype) -> None:
    """Set the dtype of Python floats and float factories (float32 or float64, as PyTorch).

    PyTorch
    -------
    ``torch.set_default_dtype``
    """
    global _default_float
    d = get_dtype(dtype)
    if d.category != FLOAT:
        raise EmberTypeError(
            f"set_default_dtype: expected a floating dtype, got {d.name}; "
            "use ember.float32 or ember.float64")
    _default_float = d


def get_dtype(spec) -> DType:
    """Resolve a DType, a name ('float32', 'float'), a NumPy dtype or a Python type."""
    if type(spec) is DType:
        return spec
    if isinstance(spec, str):
        d = _BY_NAME.get(spec.removeprefix("ember.").removeprefix("torch."))
        if d is None:
            raise EmberValueError(
                f"unknown dtype name {spec!r}; expected one of "
                f"{', '.join(x.name for x in ALL)}")
        return d
    if spec is bool:
        return bool_
    if spec is int:
        return int64
    if spec is float:
        return _default_float
    if spec is complex:
        return _TO_COMPLEX[_default_float]
    try:
        npd = np.dtype(spec)
    except TypeError:
        npd = None
    if npd is not None:
        if npd not in _FROM_NP:
            _np_dtype(bfloat16)
        d = _FROM_NP.get(npd)
        if d is not None:
            return d
    raise EmberTypeError(
        f"unsupported dtype {spec!r}; expected an ember dtype or one of "
        f"{', '.join(x.name for x in ALL)}")


def from_numpy_dtype(npd: np.dtype) -> DType:
    d = _FROM_NP.get(npd)
    if d is None:
        _np_dtype(bfloat16)
        d = _FROM_NP.get(npd)
        if d is None:
            raise EmberTypeError(
                f"NumPy dtype {npd} has no ember twin; expected one of "
                f"{', '.join(x.name for x in ALL)} (convert with .astype first)")
    return d


# --- promotion: PyTorch's torch.promote_types and torch.result_type --------------------

def promote_types(a: DType, b: DType) -> DType:
    """The smallest dtype both a and b convert to, exactly as torch.promote_types.

    PyTorch
    -------
    ``torch.promote_types``
    """
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT and lo.itemsize * 2 > hi.itemsize:
            return complex128               # float64 + complex64 -> complex128 (torch)
        return hi
    if a.category >= FLOAT:
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize > b.itemsize else b
    # both integers: an unsigned and a signed of the same size need the next signed size
    if a.is_signed == b.is_signed:
        return a if a.itemsize > b.itemsize else b
    unsigned, signed = (a, b) if not a.is_signed else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return {1: int16, 2: int32, 4: int64, 8: int64}[unsigned.itemsize]


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar has on its own (bool, int64, default float, the complex
    dtype of the default float's size)."""
    t = type(value)
    if t is bool or t is np.bool_:
        return bool_
    if t is int or isinstance(value, np.integer):
        return int64
    if t is float or isinstance(value, np.floating):
        return _default_float
    if t is complex:
        return _TO_COMPLEX[_default_float]
    if isinstance(value, np.complexfloating):
        return _FROM_NP[value.dtype]
    raise EmberTypeError(f"expected a tensor or a Python number, got {t.__name__}")


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    # torch's combine_categories: a lower-priority operand only matters when it belongs
    # to a higher category (an int tensor plus a float scalar gives a float).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        # torch keeps the higher operand's float width: float64 tensor * 1j -> complex128
        # (bfloat16's range is float32's: torch's toComplexType maps it to complex64)
        if higher.category == FLOAT:
            return complex64 if higher is bfloat16 else higher.to_complex()
        return lower
    if higher.category == FLOAT:
        return higher
    if higher is bool_ or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> DType:
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors outrank 0-d tensors, which outrank Python scalars; a lower rank
    only lifts the category (bool -> int -> float -> complex), never the width (a float
    tensor with a complex number takes the complex dtype of its own float width).

    PyTorch
    -------
    ``torch.result_type``
    """
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is None:
            if x is None:
                continue
            s = scalar_dtype(x)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif x.ndim:
            dim = d if dim is None else promote_types(dim, d)
        else:
            zero = d if zero is None else promote_types(zero, d)
    out = _combine(dim, _combine(zero, wrapped))
    if out is None:
        raise EmberTypeError("result_type: expected at least one tensor or number, got none")
    return out


def can_cast(from_: DType, to: DType) -> bool:
    """Whether from_ casts to to under PyTorch's same-kind rule (the one in-place results
    follow): never to a lower category (complex > floating > integer > bool).

    PyTorch
    -------
    ``torch.can_cast``
    """
    if not isinstance(from_, DType) or not isinstance(to, DType):
        from .errors import EmberTypeError
        raise EmberTypeError(f"can_cast: expected two ember dtypes, got "
                             f"{type(from_).__name__} and {type(to).__name__}")
    return from_.category <= to.category


# --- torch.finfo / torch.iinfo ------------------------------------------------------------

class finfo:
    """torch.finfo: bits, eps, max, min, tiny (smallest_normal), resolution of a float
    dtype (the default float when none is given).

    PyTorch
    -------
    ``torch.finfo``
    """

    def __init__(self, type=None):
        dtype = get_default_dtype() if type is None else get_dtype(type)
        if dtype.category == COMPLEX:      # torch: the finfo of the parts' float
            dtype = dtype.to_real()
        if dtype.category != FLOAT:
            raise TypeError(f"finfo: expected a floating point dtype, got {dtype.name}")
        info = np.finfo(dtype.np) if dtype is not bfloat16 else _bf16_info()
        self.dtype = dtype
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)      # torch: exactly 10 ** -precision

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
                f"eps={self.eps}, smallest_normal={self.tiny}, bits={self.bits}, "
                f"dtype={self.dtype.name})")


def _bf16_info():
    import ml_dtypes
    return ml_dtypes.finfo(ml_dtypes.bfloat16)


class iinfo:
    """torch.iinfo: bits, min, max of an integer dtype.

    PyTorch
    -------
    ``torch.iinfo``
    """

    def __init__(self, type):
        dtype = get_dtype(type)
        if dtype.category >= FLOAT:
            raise TypeError(f"iinfo: expected an integer dtype, got {dtype.name}")
        info = np.iinfo(np.uint8 if dtype is bool_ else dtype.np)
        self.dtype, self.bits = dtype, int(info.bits)
        self.min, self.max = int(info.min), int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype.name})"
