"""A PyTorch-like repr for tensors."""
from __future__ import annotations

import numpy as np

from . import dtypes as D

_DEFAULT_SHOWN = {"float32", "int64", "bool"}
_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
             "sci_mode": None}
OPTIONS = dict(_DEFAULTS)
_PROFILES = {"default": _DEFAULTS, "short": {"precision": 2, "threshold": 1000,
                                             "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": 2 ** 63 - 1, "edgeitems": 3,
                      "linewidth": 80}}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """torch.set_printoptions: digits, summarising threshold, edge items, line width.

    PyTorch
    -------
    ``torch.set_printoptions``
    """
    if profile is not None:
        OPTIONS.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold),
                       ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            OPTIONS[key] = value
    OPTIONS["sci_mode"] = sci_mode


def _summarized(values: np.ndarray) -> np.ndarray:
    """The values a summarized repr shows (torch's get_summarized_data): the first and last
    edgeitems along every dim longer than twice that; torch's formatter chooses its
    format from these alone."""
    edge = OPTIONS["edgeitems"]
    for axis, n in enumerate(values.shape):
        if n > 2 * edge:
            values = np.take(values, np.r_[0:edge, n - edge:n], axis=axis)
    return values


def _float_formatter(values: np.ndarray):
    """torch's _Formatter for floats: integers shown as "3." unless the nonzero finite
    values span more than 1000x or reach 1e8 (then scientific); other values in fixed
    point unless they span more than 1000x, reach 1e8 or go below 1e-4; sci_mode set by
    set_printoptions decides where given."""
    digits, sci = OPTIONS["precision"], OPTIONS["sci_mode"]
    if values.size > OPTIONS["threshold"]:
        values = _summarized(values)
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    int_mode = bool(np.all(finite == np.ceil(finite)))
    if nonzero.size == 0:
        use_sci = False
    else:
        big, small = nonzero.max(), nonzero.min()
        use_sci = bool(big / small > 1000.0 or big > 1.0e8 or (not int_mode and small < 1.0e-4))
    if sci is not None:
        use_sci = bool(sci)
    if use_sci:
        return lambda v: f"{v:.{digits}e}" if np.isfinite(v) else str(v)
    if int_mode:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    return lambda v: f"{v:.{digits}f}" if np.isfinite(v) else str(v)


def _complex_formatter(host: np.ndarray):
    """torch's complex repr: the real and the imaginary parts each with its own float
    format, the real parts right-aligned to one width (``1.0000e+09+2.j``, ``nan+1.j``)."""
    re, im = host.real.astype(np.float64), host.imag.astype(np.float64)
    fre, fim = _float_formatter(re), _float_formatter(im)
    shown = re.reshape(-1)        # torch's width: of the nonzero finite real parts only
    width = max((len(fre(v)) for v in shown[np.isfinite(shown) & (shown != 0)]), default=0)

    def fmt(v):
        i = fim(abs(v.imag)) if not np.isnan(v.imag) else "nan"
        sign = "-" if np.signbit(v.imag) and not np.isnan(v.imag) else "+"
        return f"{fre(v.real):>{width}}{sign}{i}j"
    return fmt


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    """torch's _add_suffixes: each suffix on the last line while it fits the line width,
    else on a line of its own."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def _real_body(host: np.ndarray, category: int, indent: int) -> str:
    """torch's _tensor_str for real dtypes: every value right-aligned to the widest one
    shown, as many per line as fit linewidth, " ..." where a summarized dim skips."""
    summarize = host.size > OPTIONS["threshold"]
    shown = _summarized(host) if summarize else host
    if category == D.FLOAT:
        fmt = _float_formatter(shown.astype(np.float64))
    elif host.dtype == np.bool_:
        def fmt(v):
            return str(bool(v))
    else:
        def fmt(v):
            return str(int(v))
    flat = shown.reshape(-1)
    if category == D.FLOAT:       # torch's width: of the nonzero finite values only
        flat = flat[np.isfinite(flat) & (flat != 0)]
    width = max((len(fmt(v)) for v in flat), default=1)

    def value(v) -> str:
        s = fmt(v)
        return " " * (width - len(s)) + s
    edge = OPTIONS["edgeitems"]

    def vector(row, ind) -> str:
        per_line = max(1, (OPTIONS["linewidth"] - ind) // (width + 2))
        if summarize and not edge:
            data = ["..."]
        elif summarize and len(row) > 2 * edge:
            data = [value(v) for v in row[:edge]] + [" ..."] + [value(v) for v in row[-edge:]]
        else:
            data = [value(v) for v in row]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + ("," + "\n" + " " * (ind + 1)).join(lines) + "]"

    def block(a, ind) -> str:
        if a.ndim == 0:
            return value(a)
        if a.ndim == 1:
            return vector(a, ind)
        if summarize and a.shape[0] > 2 * edge:
            parts = [block(a[i], ind + 1) for i in range(edge)] + ["..."] + \
                    [block(a[i], ind + 1) for i in range(len(a) - edge, len(a))]
        else:
            parts = [block(a[i], ind + 1) for i in range(a.shape[0])]
        return "[" + ("," + "\n" * (a.ndim - 1) + " " * (ind + 1)).join(parts) + "]"
    return block(host, indent)


def format_tensor(t) -> str:
    host = t.detach()._host()
    if t._dtype is D.bfloat16 or t._dtype is D.float16:
        host = host.astype(np.float32)
    if host.size == 0:
        body = "[]"
    elif t._dtype.category == D.COMPLEX:
        body = np.array2string(host, separator=", ", prefix="tensor(",
                               threshold=OPTIONS["threshold"], edgeitems=OPTIONS["edgeitems"],
                               max_line_width=OPTIONS["linewidth"],
                               formatter={"complex_kind": _complex_formatter(host)})
    else:
        body = _real_body(host, t._dtype.category, len("tensor("))
    extras = []
    if t._device.type != "cpu":
        extras.append(f"device='{t._device}'")
    if host.size == 0:            # torch: an empty tensor's size, then any dtype not default
        if host.shape != (0,):
            extras.append(f"size={tuple(host.shape)}")
        if t._dtype is not D.get_default_dtype():
            extras.append(f"dtype=ember.{t._dtype.name}")
    elif t._dtype.name not in _DEFAULT_SHOWN and not (
            t._dtype.category == D.COMPLEX and t._dtype.to_real() is D.get_default_dtype()) \
            or (t._dtype.category == D.FLOAT and t._dtype is not D.get_default_dtype()):
        extras.append(f"dtype=ember.{t._dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    text = _add_suffixes("tensor(" + body, extras, len("tensor("))
    if t._meta is not None and t._meta.get("param"):
        return "Parameter containing:\n" + text
    return text
