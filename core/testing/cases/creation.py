"""Conformance rows of the creation functions (full, arange, tensor)."""
from __future__ import annotations

from ._table import ALL_FLOATS, Input, Rows, S

ROWS = Rows("creation")
case = ROWS.case

case("full", lambda E, x: (E.full((2, 3), 1.5, device=x.device), E.zeros(0, 3, device=x.device),
                           E.ones(2, dtype=E.int64, device=x.device), E.full_like(x, 7),
                           E.full((), -2.0, device=x.device)),
     lambda np, x: (np.full((2, 3), 1.5), np.zeros((0, 3)), np.ones(2, np.int64),
                    np.full_like(x, 7), np.array(-2.0)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("float32", "float32", "int64", "float32", "float32"))
case("full:dtypes", lambda E, x: tuple(E.full((2,), 1, dtype=d, device=x.device) for d in (
    E.bool, E.uint8, E.int8, E.int16, E.int32, E.int64, E.float32)),
     lambda np, x: tuple(np.full((2,), 1, dtype=d) for d in (
         np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float32)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("bool", "uint8", "int8", "int16", "int32", "int64", "float32"))
case("full:half_floats", lambda E, x: E.full((3,), 1.1, dtype=x.dtype, device=x.device),
     lambda np, x: np.full((3,), 1.1).astype(x.dtype), Input(S), dtypes=ALL_FLOATS,
     grad=False, layouts=False)
case("arange", lambda E, x: (E.arange(10, device=x.device), E.arange(2, 11, 3, device=x.device),
                             E.arange(0.5, 3.0, 0.25, device=x.device),
                             E.arange(5, 1, -1, device=x.device), E.arange(0, device=x.device),
                             E.arange(3, dtype=E.float64, device=x.device)),
     lambda np, x: (np.arange(10), np.arange(2, 11, 3), np.arange(0.5, 3.0, 0.25, dtype=np.float32),
                    np.arange(5, 1, -1), np.arange(0), np.arange(3.0)),
     Input(S), dtypes=("float64",), grad=False, layouts=False,
     out_dtype=("int64", "int64", "float32", "int64", "int64", "float64"))
case("tensor", lambda E, x: (E.tensor([[1, 2], [3, 4]], device=x.device),
                             E.tensor([1.5, -2.0], device=x.device),
                             E.tensor([True, False], device=x.device),
                             E.tensor(x.numpy(), device=x.device), E.tensor(3, device=x.device)),
     lambda np, x: (np.array([[1, 2], [3, 4]]), np.array([1.5, -2.0], np.float32),
                    np.array([True, False]), x, np.array(3)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("int64", "float32", "bool", "float32", "int64"), ops=("full",))

case("scalar_tensor", lambda E, x: E.scalar_tensor(2.5, dtype=x.dtype, device=x.device) + x,
     lambda np, x: 2.5 + x, Input(S), dtypes=ALL_FLOATS, grad=False)

# torch.signal.windows (ember.signal.windows): NumPy's symmetric windows
case("signal_windows", lambda E, x: tuple(
    w(7, dtype=x.dtype, device=x.device) + x[:7] * 0 for w in (
        E.signal.windows.hann, E.signal.windows.hamming, E.signal.windows.blackman,
        E.signal.windows.bartlett, lambda m, **kw: E.signal.windows.kaiser(m, beta=5.0, **kw))),
     lambda np, x: (np.hanning(7), np.hamming(7), np.blackman(7), np.bartlett(7),
                    np.kaiser(7, 5.0)), Input((7,)), dtypes=("float32", "float64"),
     grad=False, layouts=False,
     ops=("signal.windows.hann", "signal.windows.hamming", "signal.windows.blackman",
          "signal.windows.bartlett", "signal.windows.kaiser"))
