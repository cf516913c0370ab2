"""The conformance table's rows: their types, `Rows` to add them, and what rows share.

A case names an ember function, its NumPy reference and its inputs.  Input kinds:
'f' float (the dtype under test, standard normal), 'p' positive float, 'u' float in
(-0.9, 0.9), 's' special float values (NaN, +-inf, +-0, halves, tiny), 'i' int in
[-5, 5), 'n' int in [1, 5), 'z' non-zero int of either sign, 'e' int exponent in [0, 4),
'b' bool, 'ix<n>' int64 index in [0, n).  Unsigned dtypes take absolute values.  Each row
also runs on strided, transposed, negative-step, offset and expanded views of its inputs
(`layouts=False` opts out), and differentiable rows go through gradcheck and
gradgradcheck.  The rows live in this package, one module per op family (the nn.functional
composites in the nn_* ones); every row is checked against NumPy on every device.
Third-party backends reuse the table through `pytest --pyargs ember.testing` (see README).
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Input:
    shape: tuple
    kind: str = "f"
    values: tuple | None = None      # explicit values (edge cases), cast to the dtype


@dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable                      # fn(ember, *tensors) -> Tensor or tuple of Tensors
    ref: Callable                     # ref(np, *arrays) -> ndarray or tuple
    inputs: tuple
    dtypes: tuple = ("float32", "float64")
    out_dtype: str | tuple | None = None   # None: the dtype under test
    grad: bool = True
    gradgrad: bool = True             # second derivatives too (where grad is checked)
    full_jacobian: bool = False       # gradcheck's full Jacobian (inputs on a kink: ties)
    needs: tuple = ()                 # further dtypes the device must have (casts to them)
    layouts: bool = True
    family: str = "elementwise"
    ops: tuple = ()                   # the ops and declared kernels the row exercises
    ref_float64: bool = True          # False: the reference computes in the dtype under test
    atol: float = 1e-5
    rtol: float = 1e-5


FLOATS = ("float32", "float64")
ALL_FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
SPECIAL = (math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, -1.0, 3.0, 1e-30)
# complex special values: nan and the infinities in either part, signed zeros, tiny parts
COMPLEX = ("complex64", "complex128")
COMPLEX_SPECIAL = tuple(complex(re, im) for re, im in (
    (math.nan, 0.0), (0.0, math.nan), (math.nan, math.nan), (math.inf, 0.0),
    (-math.inf, 0.0), (0.0, math.inf), (0.0, -math.inf), (math.inf, math.inf),
    (math.inf, math.nan), (-math.inf, math.nan), (math.nan, math.inf), (1.0, math.inf),
    (1.0, math.nan), (-0.0, 0.0), (0.0, -0.0), (1e-30, 1e-30), (2.5, -1.5), (-1.0, 0.0)))


class Rows(list):
    """The rows of one family module, in the order its `case` calls add them.

    `family` is the group the report puts them in (OpCase.family); `section` changes it for
    the rows that follow."""

    def __init__(self, family: str):
        super().__init__()
        self.family = family

    def section(self, family: str) -> None:
        """The op family of the rows that follow (the report groups results by it)."""
        self.family = family

    def case(self, name, fn, ref, *inputs, **kw) -> None:
        if not _takes_np(ref):
            ref = (lambda r: lambda np_, *arrays: r(*arrays))(ref)
        specs = tuple(i if isinstance(i, Input) else Input(*i) if isinstance(i, tuple) and
                      i and isinstance(i[0], tuple) else Input(i) for i in inputs)
        kw.setdefault("family", self.family)
        if ":special" in name:
            kw.setdefault("ref_float64", False)
        kw["ops"] = tuple(kw.get("ops", ())) or (name.split(":")[0],)
        self.append(OpCase(name, fn, ref, specs, **kw))


def _takes_np(ref) -> bool:
    """References are written either as f(np, *arrays) or as a plain f(*arrays)."""
    try:
        params = list(inspect.signature(ref).parameters)
    except (TypeError, ValueError):         # ufuncs
        return False
    return bool(params) and params[0] == "np"


def _method(name):
    return lambda E, *xs: getattr(xs[0], name)(*xs[1:])


def _function(name):
    return lambda E, *xs: getattr(E, name)(*xs)


S, M = (3, 4), (2, 3, 4)
SPECIAL_IN = Input((len(SPECIAL),), "s")
SPECIAL_ROW, SPECIAL_COL = Input((1, len(SPECIAL)), "s"), Input((len(SPECIAL), 1), "s")


def F(E):
    return E.nn.functional
