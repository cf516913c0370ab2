"""Dtypes of the array API namespace: kinds, the standard's promotion, and argument checks.

The standard's promotion lattice over the dtypes ember has (bool, int8..int64, uint8,
float32, float64) is the one `ember.promote_types` implements; where the namespace departs
from ember's PyTorch-style operators is in *who* takes part: 0-d arrays promote like any
array (PyTorch lets a dimensioned tensor win), and a Python scalar takes the array's dtype.
Mixed kinds (int with float arrays, bool with int), which the standard leaves undefined,
follow ember's rule: the higher kind wins.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import dtypes as D
from ..errors import DtypeNotSupportedError, EmberTypeError, EmberValueError
from ..tensor import Tensor

# the standard's kinds; float16 and bfloat16 are extensions of kind "real floating"
KINDS = {
    "bool": (D.bool_,),
    "signed integer": (D.int8, D.int16, D.int32, D.int64),
    "unsigned integer": (D.uint8,),
    "integral": D.INTEGRAL,
    "real floating": D.FLOATING,
    "complex floating": D.COMPLEXES,
    "numeric": D.INTEGRAL + D.FLOATING + D.COMPLEXES,
}
# what each function's inputs may be (the standard's "should have a ... data type")
ACCEPTS = {
    "any": D.ALL,
    "bool": (D.bool_,),
    "integer": D.INTEGRAL,
    "integer or boolean": D.INTEGRAL + (D.bool_,),
    "numeric": D.INTEGRAL + D.FLOATING + D.COMPLEXES,
    "real numeric": D.INTEGRAL + D.FLOATING,
    "floating-point": D.FLOATING + D.COMPLEXES,
    "real floating-point": D.FLOATING,
    "complex floating-point": D.COMPLEXES,
}


def need(name: str, x, accepts: str = "any") -> Tensor:
    """x itself, checked to be an ember Tensor whose dtype `name` accepts."""
    if type(x) is not Tensor:
        raise EmberTypeError(
            f"ember.array_api.{name}: expected an ember Tensor (an array of this namespace), "
            f"got {type(x).__name__}; convert it with ember.array_api.asarray(...)")
    if x._dtype not in ACCEPTS[accepts]:
        raise DtypeNotSupportedError(
            f"ember.array_api.{name}: expected an input of {accepts} dtype, got "
            f"{x._dtype.name}; convert it with ember.array_api.astype(x, ...) first")
    return x


def _scalar_fits(name: str, value, dtype: D.DType) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and dtype in D.INTEGRAL:
        info = np.iinfo(dtype.np)
        if not info.min <= value <= info.max:
            raise EmberValueError(
                f"ember.array_api.{name}: the Python int {value} does not fit the array's "
                f"dtype {dtype.name} (range [{info.min}, {info.max}]); cast the array to a "
                "wider dtype first")


def promote(name: str, x1, x2, accepts: str = "any"):
    """(x1, x2) ready for an ember binary op under the standard's promotion: two tensors
    cast to their result_type; a Python scalar left as it is (ember gives it the tensor's
    dtype where the kinds agree)."""
    t1, t2 = type(x1) is Tensor, type(x2) is Tensor
    if t1 and t2:
        need(name, x1, accepts), need(name, x2, accepts)
        if x1._dtype is not x2._dtype:
            d = D.promote_types(x1._dtype, x2._dtype)
            x1, x2 = x1.to(d), x2.to(d)
        return x1, x2
    if not t1 and not t2:
        need(name, x1)                       # raises: at least one array is needed
    tensor, scalar = (x1, x2) if t1 else (x2, x1)
    need(name, tensor, accepts)
    if isinstance(scalar, (np.bool_, np.integer, np.floating, np.complexfloating)):
        scalar = scalar.item()               # a NumPy scalar counts as the Python one
    if not isinstance(scalar, (int, float, complex)):
        raise EmberTypeError(f"ember.array_api.{name}: expected an array or a Python scalar, "
                             f"got {type(scalar).__name__}")
    _scalar_fits(name, scalar, tensor._dtype)
    if isinstance(scalar, complex) and tensor._dtype.category == D.FLOAT:
        # a complex scalar with a real floating array: the complex dtype of its width
        tensor = tensor.to(tensor._dtype.to_complex())
    return (tensor, scalar) if t1 else (scalar, tensor)


def as_dtype(dtype) -> D.DType:
    if type(dtype) is not D.DType:
        raise EmberTypeError(f"expected an ember.array_api dtype (e.g. ember.array_api.float32)"
                             f", got {dtype!r}")
    return dtype


# -- the data type functions of the standard ---------------------------------------------

def astype(x: Tensor, dtype: D.DType, /, *, copy: bool = True, device=None) -> Tensor:
    """x converted to dtype (and device); a new array unless copy=False allows x itself.

    PyTorch
    -------
    ``torch.Tensor.to`` (the array API's ``astype``).
    """
    need("astype", x)
    dtype = as_dtype(dtype)
    out = x.to(dtype) if device is None else x.to(device=device, dtype=dtype)
    return out.clone() if copy and out is x else out


def can_cast(from_, to: D.DType, /) -> bool:
    """Whether the standard's promotion takes from_ to `to` (same kind, no narrowing).

    PyTorch
    -------
    ``torch.can_cast``
    """
    src = from_._dtype if type(from_) is Tensor else as_dtype(from_)
    to = as_dtype(to)
    if src is to:
        return True
    if (src is D.bool_) != (to is D.bool_) or src.category != to.category:
        return False
    return D.promote_types(src, to) is to


def result_type(*arrays_and_dtypes) -> D.DType:
    """The dtype the standard's promotion gives these arrays, dtypes and Python scalars.

    PyTorch
    -------
    ``torch.result_type``
    """
    dtypes = [x._dtype if type(x) is Tensor else x for x in arrays_and_dtypes
              if type(x) is Tensor or type(x) is D.DType]
    scalars = [x for x in arrays_and_dtypes if type(x) is not Tensor and type(x) is not D.DType]
    for s in scalars:
        if not isinstance(s, (int, float, complex)):
            raise EmberTypeError(f"ember.array_api.result_type: expected arrays, dtypes or "
                                 f"Python scalars, got {type(s).__name__}")
    if not dtypes:
        raise EmberValueError("ember.array_api.result_type: expected at least one array or "
                              "dtype (Python scalars alone have no array dtype)")
    out = dtypes[0]
    for d in dtypes[1:]:
        out = D.promote_types(out, d)
    for s in scalars:                      # a scalar only lifts the kind (ember's rule)
        if isinstance(s, complex) and out.category != D.COMPLEX:
            out = out.to_complex() if out.category == D.FLOAT else \
                D.get_default_dtype().to_complex()
        elif isinstance(s, float) and out.category < D.FLOAT:
            out = D.get_default_dtype()
        elif isinstance(s, int) and not isinstance(s, bool) and out is D.bool_:
            out = D.int64
    return out


def isdtype(dtype: D.DType, kind) -> bool:
    """Whether dtype is of `kind`: a dtype, a kind name ('integral', ...) or a tuple.

    PyTorch
    -------
    None: the array API standard's ``isdtype``; PyTorch writes ``dtype.is_floating_point``.
    """
    dtype = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if type(kind) is D.DType:
        return dtype is kind
    if kind not in KINDS:
        raise EmberValueError(f"ember.array_api.isdtype: unknown kind {kind!r}; expected a "
                              f"dtype or one of {', '.join(map(repr, KINDS))}")
    return dtype in KINDS[kind]


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: D.DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: D.DType


def _of(type_, name, kinds):
    d = type_._dtype if type(type_) is Tensor else as_dtype(type_)
    if d not in kinds:
        raise DtypeNotSupportedError(f"ember.array_api.{name}: expected a "
                                     f"{'floating' if name == 'finfo' else 'integer'} dtype, "
                                     f"got {d.name}")
    return d


def finfo(type_, /) -> finfo_object:
    """Machine limits of a floating dtype (bits, eps, max, min, smallest_normal).

    PyTorch
    -------
    ``torch.finfo``
    """
    d = _of(type_, "finfo", D.FLOATING + D.COMPLEXES).to_real()   # a complex one's parts
    if d is D.bfloat16:
        import ml_dtypes
        f = ml_dtypes.finfo(ml_dtypes.bfloat16)
    else:
        f = np.finfo(d.np)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), d)


def iinfo(type_, /) -> iinfo_object:
    """Limits of an integer dtype (bits, max, min).

    PyTorch
    -------
    ``torch.iinfo``
    """
    d = _of(type_, "iinfo", D.INTEGRAL)
    i = np.iinfo(d.np)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), d)
