"""Tensor's methods, operators and in-place forms: every name bound once, from one table.

The elementwise methods, their operators and in-place forms follow from the op declarations
(ops.UNARY/BINARY, each Op's `operator`, `inplace` and `public`): a new elementwise primitive
needs no line here.  Everything else is one row of METHODS below, pointing at the function
that implements it (ops, ember.functional, ember.linalg, or this package's inplace,
conversion, grad and interop modules).  Binding a name twice is an error at import.
"""
from __future__ import annotations

from .. import dispatch, legacy, ops, sparse
from .. import dtypes as D
from .. import functional as F
from .._torch_gaps import install_tensor_gaps
from ..errors import EmberTypeError, NotInEmberError, ShapeError
from ..functional import index as FI
from ..functional import linalg as FL
from ..functional import movement as FM
from ..functional import reduce as FR
from ..ops import index as _index
from ..ops import layout, sampling
from ..ops._util import spread_or_keyword
from ..signatures import numpy_names
from ..tensor import Tensor, preserve_format, strided
from . import conversion, grad, interop
from .docs import document
from .inplace import (
    _add_scaled,
    _direct_inplace,
    _fill,
    _inplace,
    _reshaping,
    _setitem,
    _sub_scaled,
    _zero,
    copy_,
    resize,
    resize_,
    resize_as_,
)

_binary, _rbinary, _unary = dispatch.binary, dispatch.rbinary, dispatch.unary
_OPS, _K = ops.OPS, ops.KERNELS

METHODS: dict = {}          # Tensor attribute name -> what it is bound to


def method(name: str, fn) -> None:
    """One row of the table; a name bound twice (or one Tensor defines itself) is a bug."""
    if name in METHODS or name in vars(Tensor):
        raise ImportError(f"ember.methods: Tensor.{name} is bound twice; each Tensor name has "
                          "one row in core/methods/__init__.py")
    METHODS[name] = fn


def _named(name: str, fn):
    """fn under another __name__ (_inplace names the in-place method after its function)."""
    if fn.__name__ == name:
        return fn

    def f(*args, **kwargs):
        return fn(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    return f


# -- operators, from the declarations -----------------------------------------------------

def _bin(op):
    def method(self, other):
        return _binary(op, self, other)

    def reflected(self, other):
        return _rbinary(op, other, self)
    method.__name__ = op.name
    return method, reflected


_REFLECTED = ("add", "sub", "mul", "truediv", "pow", "mod", "floordiv")
_OPERATORS = {}                     # Python operator name -> x.__op__(y)
for _op in _OPS.values():
    if _op.kind == "binary" and _op.operator is not None:
        _m, _r = _bin(_op)
        _OPERATORS[_op.operator] = _m
        method(f"__{_op.operator}__", _m)
        if _op.operator in _REFLECTED:
            method(f"__r{_op.operator}__", _r)


def _require_bool(sym, a, b):
    for x in (a, b):
        d = x._dtype if type(x) is Tensor else D.scalar_dtype(x)
        if d is not D.bool_:
            raise EmberTypeError(f"`{sym}` on tensors is supported for bool tensors only, got "
                                 f"{d.name}; compare first (e.g. (x > 0) {sym} (y > 0))")
    return None


def _integer(x) -> bool:
    dtype = x._dtype if type(x) is Tensor else D.scalar_dtype(x)
    return dtype in F._util._INTS


def _logical_or_bits(sym, logical, bits, reflected=False):
    """x & y, x | y, x ^ y: bit operations on integers; logical ones on bool tensors (and
    the bool-only error for floats)."""
    def method(self, other):
        if _integer(self) and (_integer(other) or type(other) is bool):
            return bits(other, self) if reflected else bits(self, other)
        return _require_bool(sym, self, other) or logical(self, other)
    return method


for _sym, _name in (("&", "and"), ("|", "or"), ("^", "xor")):
    _logical = ops.BINARY[f"logical_{_name}"]
    _bits = getattr(F, f"bitwise_{_name}")
    method(f"__{_name}__", _logical_or_bits(_sym, _logical, _bits))
    method(f"__r{_name}__", _logical_or_bits(_sym, _logical, _bits, reflected=True))


def _raise(exc):
    raise exc


def _invert(self):
    if _integer(self):
        return F.bitwise_not(self)
    if self._dtype is D.bool_:
        return _unary(_OPS["logical_not"], self)
    return _raise(EmberTypeError("`~` is supported for bool tensors only"))


method("__invert__", _invert)
method("__neg__", lambda self: _unary(_OPS["neg"], self))
method("__pos__", lambda self: F.positive(self))   # (bool refused, as torch)
method("__abs__", lambda self: _unary(_OPS["abs"], self))
method("__matmul__", lambda self, other: ops.matmul(self, other))
method("__rmatmul__", lambda self, other: ops.matmul(other, self))
method("__lshift__", lambda self, other: F.bitwise_left_shift(self, other))
method("__rlshift__", lambda self, other: F.bitwise_left_shift(other, self))
method("__rshift__", lambda self, other: F.bitwise_right_shift(self, other))
method("__rrshift__", lambda self, other: F.bitwise_right_shift(other, self))
method("__getitem__", _index.getitem)
method("__setitem__", _setitem)
method("__iadd__", _direct_inplace(_K["add_"], _inplace(_OPERATORS["add"])))
method("__isub__", _direct_inplace(_K["sub_"], _inplace(_OPERATORS["sub"])))
method("__imul__", _direct_inplace(_K["mul_"], _inplace(_OPERATORS["mul"])))
method("__itruediv__", _direct_inplace(_K["div_"], _inplace(_OPERATORS["truediv"]),
                                       floats_only=True))
method("__ipow__", _inplace(_OPERATORS["pow"]))
method("__imod__", _inplace(_OPERATORS["mod"]))
method("__ifloordiv__", _inplace(_OPERATORS["floordiv"]))
method("__reduce__", interop.__reduce__)
method("__dlpack__", interop.__dlpack__)
method("__dlpack_device__", interop.__dlpack_device__)
method("__array_namespace__", interop.__array_namespace__)
# PyTorch's legacy constructor: Tensor(2, 3), Tensor([1.0]) (ops build tensors through
# tensor.wrap(), which never comes here)
method("__new__", staticmethod(legacy.tensor_new))

# -- elementwise methods and their in-place forms, from the declarations -------------------

# torch's add/sub take alpha= (x.add(y, alpha=2)); ember.add is the plain op
_ELEMENTWISE_METHODS = {"add": _add_scaled, "sub": _sub_scaled, "div": F.div}
# these in-place forms go through the backend's own in-place kernel when they can
_DIRECT = {"add": (_K["add_"], False), "sub": (_K["sub_"], False), "mul": (_K["mul_"], False),
           "div": (_K["div_"], True)}
for _name, _fn in (*ops.UNARY.items(), *ops.BINARY.items()):
    _op = _OPS[_name]
    if not _op.public:
        continue
    _fn = _ELEMENTWISE_METHODS.get(_name, _fn)
    method(_name, _fn)
    if _op.inplace:
        _form = _inplace(_fn)
        if _name in _DIRECT:
            _form = _direct_inplace(_DIRECT[_name][0], _form, floats_only=_DIRECT[_name][1])
        method(_name + "_", _form)


def _spelled_inplace(name, fn):
    """name_: the in-place form of fn (named after name: _inplace names the method)."""
    method(name + "_", _inplace(_named(name, fn)))


# -- the table ----------------------------------------------------------------------------

# elementwise functions of ember.functional that are methods too, with in-place forms
_MATH = ("log2", "log10", "exp2", "sinh", "cosh", "trunc", "fix", "frac", "fmod", "logaddexp",
         "hypot", "erfc", "logit", "xlogy", "deg2rad", "rad2deg", "sgn", "positive",
         "float_power")


def _addcmul(self, tensor1, tensor2, value=1):
    return self + tensor1 * tensor2 * value


def _conj(x):
    return x.conj() if x.is_complex() else x


def _t(self):
    if self.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                         f"{self.ndim}D; use .mT or .transpose(dim0, dim1)")
    return self if self.ndim < 2 else ops.transpose(self, 0, 1)


def _H(self):
    if self.ndim > 2:
        raise ShapeError(f"Tensor.H: expected a matrix or vector, got {self.ndim} dims; use "
                         f".mH for the conjugate transpose of the last two dims")
    return _conj(self if self.ndim < 2 else ops.transpose(self, 0, 1))


def _addcdiv(self, tensor1, tensor2, value=1):
    return self + tensor1 / tensor2 * value


def _lerp(self, end, weight):
    return self + (end - self) * weight


_addcmul.__name__, _addcdiv.__name__, _lerp.__name__ = "addcmul", "addcdiv", "lerp"


def _no_shared_memory(self):
    raise NotInEmberError(
        "share_memory_: ember has no shared-memory tensors: ember.multiprocessing sends a "
        "tensor to another process by value, so a worker's updates would not reach this "
        "one (PyTorch's Hogwild training); train in one process, or use "
        "ember.distributed (DistributedDataParallel) to keep copies in step")


def _cuda(self, device=None, non_blocking: bool = False, memory_format=preserve_format):
    """x.cuda(): x on a CUDA device.  ember copies through the host synchronously and has
    no pinned memory (pin_memory() is the tensor itself), so non_blocking changes nothing,
    as in PyTorch for memory that is not pinned."""
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    out = conversion.to(self, device if device is not None else "cuda",
                        non_blocking=non_blocking)
    if memory_format is not preserve_format:
        out = layout.contiguous(out, memory_format) if out is self else \
            layout.clone(out, memory_format)
    return out

for _name, _fn in {
    # torch's other names for elementwise methods
    "subtract": ops.sub, "multiply": ops.mul, "divide": F.div, "true_divide": ops.div,
    "negative": ops.neg, "absolute": ops.abs,
    # reductions (they take axis=/keepdims= too: ember.signatures)
    "sum": ops.sum, "prod": ops.prod, "amax": ops.amax, "amin": ops.amin, "any": ops.any,
    "all": ops.all, "argmax": ops.argmax, "argmin": ops.argmin, "mean": F.mean, "var": F.var,
    "std": F.std, "logsumexp": F.logsumexp, "max": F.max, "min": F.min,
    "count_nonzero": F.count_nonzero, "norm": F.norm, "median": ops.median,
    "aminmax": F.aminmax, "quantile": F.quantile, "nanquantile": F.nanquantile,
    "mode": F.mode, "histc": F.histc, "histogram": F.histogram, "bincount": F.bincount,
    "dist": F.dist,
    "sum_to_size": FR.sum_to_size,
    # scans and sorting
    "cumsum": ops.cumsum, "cumprod": ops.cumprod, "logcumsumexp": ops.logcumsumexp,
    "cummax": F.cummax, "cummin": F.cummin, "sort": ops.sort, "argsort": ops.argsort,
    "topk": ops.topk, "kthvalue": ops.kthvalue, "msort": ops.msort, "unique": ops.unique,
    "unique_consecutive": ops.unique_consecutive,
    # activations
    "softmax": F.softmax, "log_softmax": F.log_softmax, "relu": ops.relu,
    # elementwise composites
    "clamp": F.clamp, "clip": F.clamp, "square": F.square, "clamp_min": F.clamp_min,
    "clamp_max": F.clamp_max, "nan_to_num": F.nan_to_num, "isclose": F.isclose,
    "allclose": F.allclose, "equal": F.equal, "fmax": F.fmax, "fmin": F.fmin,
    "round": F.round, "heaviside": F.heaviside, "atan2": F.atan2, "arctan2": F.arctan2,
    "arcsin": F.arcsin, "arccos": F.arccos, "arctan": F.arctan, "arcsinh": F.arcsinh,
    "arccosh": F.arccosh, "arctanh": F.arctanh, "nansum": F.nansum, "nanmean": F.nanmean,
    "nanmedian": F.nanmedian, "cov": F.cov, "corrcoef": F.corrcoef, "renorm": F.renorm,
    "addr": F.addr, "i0": F.i0, "isin": F.isin, "mvlgamma": F.mvlgamma,
    "cholesky_inverse": F.cholesky_inverse, "cholesky_solve": F.cholesky_solve,
    "triangular_solve": F.triangular_solve,
    "copysign": F.copysign, "signbit": F.signbit, "ldexp": F.ldexp,
    "logaddexp2": F.logaddexp2, "isposinf": F.isposinf, "isneginf": F.isneginf,
    "isreal": F.isreal, "angle": F.angle, "conj": F.conj, "conj_physical": F.conj_physical,
    "resolve_conj": F.resolve_conj, "resolve_neg": F.resolve_neg, "gcd": F.gcd, "lcm": F.lcm,
    "frexp": F.frexp, "real": property(F.real), "imag": property(F.imag),
    "is_conj": F.is_conj, "is_neg": F.is_neg,
    "__rdiv__": lambda self, other: ops.div(other, self),
    "polygamma": lambda self, n: F.polygamma(n, self),
    "igamma": F.igamma, "igammac": F.igammac, "nextafter": F.nextafter,
    "lgamma": F.lgamma, "digamma": F.digamma, "erfinv": F.erfinv, "sinc": F.sinc,
    "xlog1py": F.xlog1py, "bitwise_and": F.bitwise_and, "bitwise_or": F.bitwise_or,
    "bitwise_xor": F.bitwise_xor, "bitwise_not": F.bitwise_not,
    "bitwise_left_shift": F.bitwise_left_shift, "bitwise_right_shift": F.bitwise_right_shift,
    **{name: getattr(F, name) for name in _MATH},
    # movement
    "permute": ops.permute, "expand": ops.expand, "flatten": ops.flatten,
    "squeeze": ops.squeeze, "unsqueeze": ops.unsqueeze, "transpose": ops.transpose,
    "flip": ops.flip, "contiguous": layout.contiguous, "movedim": ops.movedim,
    "stride": layout.stride, "is_contiguous": layout.is_contiguous,
    "data_ptr": layout.data_ptr, "storage_offset": layout.storage_offset,
    "split": numpy_names(lambda self, split_size, dim=0: ops.split(self, split_size, dim)),
    "chunk": numpy_names(lambda self, chunks, dim=0: ops.chunk(self, chunks, dim)),
    "reshape": ops.reshape,
    "view": conversion.view,
    "view_as": lambda self, other: ops.reshape(self, other.shape),
    "reshape_as": lambda self, other: ops.reshape(self, other.shape),
    "expand_as": lambda self, other: ops.expand(self, other.shape),
    "T": property(lambda self: self if self.ndim < 2 else ops.permute(
        self, tuple(reversed(range(self.ndim))))),
    "mT": property(lambda self: ops.transpose(self, -2, -1)),
    # the conjugate transposes (mT and T for real tensors)
    "mH": property(lambda self: _conj(ops.transpose(self, -2, -1))),
    "H": property(_H),
    "adjoint": lambda self: _conj(ops.transpose(self, -2, -1)),
    "t": _t,
    "roll": F.roll, "narrow": F.narrow, "select": F.select, "unbind": F.unbind,
    "unflatten": F.unflatten, "broadcast_to": F.broadcast_to,
    "repeat": lambda self, *sizes: FM.repeat(self, *sizes), "tile": F.tile,
    "as_strided": F.as_strided,
    "repeat_interleave": F.repeat_interleave, "swapaxes": F.swapaxes, "swapdims": F.swapdims,
    "ravel": F.ravel, "rot90": F.rot90, "tensor_split": F.tensor_split, "diff": F.diff,
    "unfold": FM.unfold_windows, "stft": F.stft, "istft": F.istft,
    # index
    "index_select": ops.index_select, "nonzero": ops.nonzero, "argwhere": ops.argwhere,
    "masked_fill": F.masked_fill,
    "where": lambda self, condition, other: ops.where(condition, self, other),
    "take": lambda self, index: ops.take(self, index),
    "gather": ops.gather,
    "scatter_add": numpy_names(lambda self, dim, index, src: ops.scatter_add(self, dim, index,
                                                                             src)),
    "index_add": numpy_names(lambda self, dim, index, source, *, alpha=1: ops.index_add(
        self, dim, index, source, alpha=alpha)),
    "scatter": F.scatter, "scatter_reduce": F.scatter_reduce, "index_fill": F.index_fill,
    "masked_select": F.masked_select, "take_along_dim": F.take_along_dim,
    "index_put": F.index_put, "masked_scatter": F.masked_scatter,
    "index_copy": F.index_copy, "put": F.put,
    # products and linear algebra
    "matmul": lambda self, other: ops.matmul(self, other),
    "mm": F.mm, "bmm": F.bmm, "mv": F.mv, "dot": F.dot, "vdot": F.vdot, "inner": F.inner,
    "outer": F.outer, "ger": F.ger, "addmm": F.addmm, "addmv": F.addmv, "baddbmm": F.baddbmm,
    "addbmm": F.addbmm, "tril": F.tril, "triu": F.triu, "diag": F.diag,
    "diagonal": F.diagonal, "diag_embed": F.diag_embed, "trace": F.trace, "cross": F.cross,
    "kron": F.kron, "inverse": FL.inverse, "det": FL.det, "logdet": FL.logdet,
    "slogdet": FL.slogdet, "cholesky": FL.cholesky, "matrix_power": FL.matrix_power,
    "svd": FL.svd, "pinverse": FL.pinverse, "qr": FL.qr, "lu": FL.lu, "lu_solve": FL.lu_solve,
    "matrix_exp": FL.matrix_exp, "geqrf": FL.geqrf, "ormqr": FL.ormqr, "orgqr": FL.orgqr,
    # the method forms of elementwise math written as methods (self first, value positional)
    "addcmul": _addcmul, "addcdiv": _addcdiv, "lerp": _lerp,
    # sampling
    **{name: getattr(sampling, name) for name in (
        "multinomial", "bernoulli", "uniform_", "normal_", "bernoulli_", "exponential_",
        "log_normal_", "geometric_", "cauchy_", "random_")},
    # conversion and copies
    "to": conversion.to,
    "cpu": lambda self, memory_format=preserve_format: conversion.to(
        self, "cpu", memory_format=memory_format),
    "cuda": _cuda,
    **{name: conversion.converter(name, dtype) for name, dtype in (
        ("float", D.float32), ("double", D.float64), ("half", D.float16),
        ("bfloat16", D.bfloat16), ("int", D.int32), ("long", D.int64), ("bool", D.bool_),
        ("short", D.int16), ("byte", D.uint8), ("char", D.int8), ("cfloat", D.complex64),
        ("cdouble", D.complex128))},
    "type_as": lambda self, other: ops.cast(self, other._dtype),
    "type": legacy.tensor_type, "new": legacy.tensor_legacy_new,
    "clone": layout.clone, "detach": conversion.detach, "detach_": conversion.detach_,
    "requires_grad_": conversion.requires_grad_,
    "new_zeros": lambda self, *sizes, size=None, dtype=None, device=None: ops.zeros(
        *spread_or_keyword(sizes, size, "new_zeros", "size"), dtype=dtype or self._dtype,
        device=device or self._device),
    "new_ones": lambda self, *sizes, size=None, dtype=None, device=None: ops.ones(
        *spread_or_keyword(sizes, size, "new_ones", "size"), dtype=dtype or self._dtype,
        device=device or self._device),
    "new_full": lambda self, size, fill_value, dtype=None, device=None: ops.full(
        size, fill_value, dtype=dtype or self._dtype, device=device or self._device),
    "new_tensor": lambda self, data, dtype=None, device=None: ops.tensor(
        data, dtype=dtype or self._dtype, device=device or self._device),
    "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: ops.zeros(
        *size, dtype=dtype or self._dtype, device=device or self._device,
        requires_grad=requires_grad),
    "new_empty_strided": lambda self, size, stride, dtype=None, device=None, *,
        requires_grad=False: F.empty_strided(
            size, stride, dtype=dtype or self._dtype, device=device or self._device,
            requires_grad=requires_grad),
    "nonzero_static": F.nonzero_static, "index_reduce": F.index_reduce,
    "copy_": copy_, "fill_": _inplace(_fill), "zero_": _inplace(_zero),
    "resize_": resize_, "resize_as_": resize_as_, "resize": resize,
    "fill_diagonal_": _inplace(FI.fill_diagonal),
    "to_device": interop.to_device,
    # to_sparse: a SparseTensor in the COO layout (core/sparse.py); to_dense of a strided
    # tensor is the tensor (in dtype), as torch's; sparse_coo_tensor builds dense tensors,
    # which coalesce() leaves as they are
    "to_sparse": sparse.to_sparse,
    "to_dense": conversion.to_dense,
    "coalesce": lambda self: self,
    "is_coalesced": lambda self: True,
    # autograd
    "backward": grad.backward, "retain_grad": grad.retain_grad,
    "register_hook": grad.register_hook,
    "register_post_accumulate_grad_hook": grad.register_post_accumulate_grad_hook,
    "retains_grad": property(lambda self: self.grad_fn is not None and
                             self.grad_fn.retained is not None),
    # what device and kind of tensor this is
    "is_cpu": property(lambda self: self._device.type == "cpu"),
    "layout": property(lambda self: strided),      # dense, as all ember tensors
    "is_mps": property(lambda self: False),          # ember has no MPS backend
    "is_xpu": property(lambda self: False),          # nor an XPU one
    "is_sparse": property(lambda self: False),       # every ember tensor is dense
    "is_quantized": property(lambda self: False),
    "is_meta": property(lambda self: False),
    "is_complex": lambda self: self._dtype.category == D.COMPLEX,
    "itemsize": property(lambda self: self._dtype.itemsize),
    "nbytes": property(lambda self: self._dtype.itemsize * self.numel()),
    "ndimension": lambda self: self.ndim,
    "get_device": lambda self: -1 if self._device.type == "cpu" else (self._device.index or 0),
    # ember moves data through the host itself: there is no pinned memory to ask for; the
    # tensor is already where pinning would put it
    "pin_memory": lambda self, device=None: self,
    "is_pinned": lambda self, device=None: False,
    # nor shared memory: ember.multiprocessing sends tensors by value (a copy)
    "share_memory_": _no_shared_memory, "is_shared": lambda self: False,
    # the autograd name PyTorch's legacy Variable(name=) set (ember's Variable refuses it)
    "name": property(lambda self: None),
}.items():
    method(_name, _fn)

# in-place forms of the composites above (computed out of place, written back)
for _name in ("clamp", "relu", "masked_fill", "tril", "triu", "scatter", "index_fill",
              "clamp_min", "clamp_max", "nan_to_num", "scatter_reduce", "scatter_add",
              "index_add", "cumsum", "cumprod", "atan2", "arctan2", "lgamma", "digamma",
              "polygamma", "igamma", "igammac", "nextafter", "erfinv", "sinc", "xlog1py",
              "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
              "bitwise_right_shift", "index_put",
              "masked_scatter", "heaviside", "round", "addcmul", "addcdiv", "lerp",
              "index_copy", "index_reduce", "put", "renorm", "addr", "i0", "copysign",
              "ldexp", "gcd", "lcm", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
              "arctanh", *(n for n in _MATH if n != "float_power")):
    _spelled_inplace(_name, METHODS[_name])
method("clip_", METHODS["clamp_"])


def _float_power_(self, exponent):
    """torch computes float_power in float64 (complex128) and writes it back only into a
    tensor of that dtype: a float32 base would silently lose the precision asked for."""
    wide = D.complex128 if self._dtype.category == D.COMPLEX or type(exponent) is complex or (
        type(exponent) is Tensor and exponent._dtype.category == D.COMPLEX) else D.float64
    if self._dtype is not wide:
        raise EmberTypeError(
            f"float_power_: the base has dtype {self._dtype.name} but the operation's result "
            f"requires dtype {wide.name} (as in torch); use x = x.double().float_power_(...) "
            "or the out-of-place x.float_power(...)")
    return _float_power_write(self, exponent)


_float_power_write = _inplace(_named("float_power", METHODS["float_power"]))
_float_power_.__name__ = "float_power_"
method("float_power_", _float_power_)
# in-place forms whose result dtype (bool) is cast back to the tensor's own, as PyTorch's
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not",
              "addmm", "baddbmm", "addmv"):
    _spelled_inplace(_name, METHODS[_name])
# the shape-changing in-place forms (outside autograd only: inplace._reshaping says why)
for _name in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims"):
    method(_name + "_", _reshaping(_name + "_", METHODS[_name]))

# torch's other names for in-place forms (x.negative_() is x.neg_(); x.square_())
method("negative_", METHODS["neg_"])
_spelled_inplace("square", METHODS["square"])
# torch's other spellings of comparisons and arithmetic, and their in-place forms
for _alias, _name in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                      ("less_equal", "le"), ("not_equal", "ne")):
    method(_alias, METHODS[_name])
    method(_alias + "_", METHODS[_name + "_"])
for _alias, _name in (("divide_", "div_"), ("true_divide_", "div_"), ("multiply_", "mul_"),
                      ("subtract_", "sub_"), ("absolute_", "abs_")):
    method(_alias, METHODS[_name])
_spelled_inplace("logical_xor", METHODS["logical_xor"])
# functions torch also has as methods
from ..functional import products as _FP  # noqa: E402  (after the table it extends)

for _name in ("fliplr", "flipud", "hsplit", "vsplit", "dsplit", "narrow_copy",
              "select_scatter", "slice_scatter", "diagonal_scatter"):
    method(_name, getattr(FM, _name))
method("diagflat", _FP.diagflat)
method("moveaxis", METHODS["movedim"])
method("split_with_sizes", numpy_names(lambda self, split_sizes, dim=0: ops.split(
    self, list(split_sizes), dim)))
# torch's "unsafe" forms skip its view-aliasing checks; ember's results are the same
method("unsafe_chunk", METHODS["chunk"])
method("unsafe_split", METHODS["split"])
method("is_signed", lambda self: self._dtype.is_signed)
method("is_same_size", lambda self, other: tuple(self.shape) == tuple(other.shape))


def _is_nonzero(self) -> bool:
    from ..settings import is_nonzero  # settings sits above the methods
    return is_nonzero(self)


method("is_nonzero", _is_nonzero)


def _python_map(name, self, fn, others):
    """x.apply_(fn) / x.map_(y, fn) / x.map2_(y, z, fn): fn called in Python on each element
    (with the broadcast elements of the others), the results written into x; torch's
    run on CPU tensors only, ember's on any device through the host (slow on both)."""
    import numpy as np
    if not callable(fn):
        raise EmberTypeError(f"{name}: expected a callable, got {type(fn).__name__}")
    if dispatch.is_grad_enabled():
        _index.check_inplace_target(self)
        if self.requires_grad or any(o.requires_grad for o in others):
            raise NotInEmberError(f"{name}: a Python function per element has no gradient; "
                                  "call it under ember.no_grad() or on a detached tensor")
    host = np.asarray(self.detach().cpu().numpy())
    arrays = [np.broadcast_to(np.asarray(o.detach().cpu().numpy()), host.shape)
              for o in others]
    out = np.empty_like(host)
    for index in np.ndindex(host.shape):
        out[index] = fn(host[index].item(), *(a[index].item() for a in arrays))
    from ..autograd.grad_mode import no_grad
    with no_grad():
        self.copy_(ops.tensor(out, dtype=self.dtype, device=self.device))
    return self


method("apply_", lambda self, callable: _python_map("apply_", self, callable, ()))
method("map_", lambda self, tensor, callable: _python_map("map_", self, callable, (tensor,)))
method("map2_", lambda self, x, y, callable: _python_map("map2_", self, callable, (x, y)))

# names a listing of dir(torch.Tensor) against ember found missing, each as torch's
for _name in ("addbmm", "mvlgamma", "conj_physical"):
    _spelled_inplace(_name, METHODS[_name])
method("to_sparse_coo", lambda self: sparse.to_sparse(self))
method("unsafe_split_with_sizes", METHODS["split_with_sizes"])
method("hardshrink", F.hardshrink)
method("prelu", F.prelu)

# torch's in-place function forms, torch.relu_(x) being x.relu_(): torch's own list (the
# names of dir(torch) that end in "_"), less those whose method ember lacks (the dropouts'
# and nn.functional's activations, as_strided_, conj_physical_, embedding_renorm_,
# resize_as_sparse_); ember.* serves them by name (core/__init__.py)
INPLACE_FUNCTIONS = {_name: METHODS[_name] for _name in (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_",
    "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_")}

document(METHODS)
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
# last: every commonly used Tensor name still missing raises the ember-gap error
install_tensor_gaps(Tensor)
