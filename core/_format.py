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


def _float_formatter(values: np.ndarray):
    digits, sci = OPTIONS["precision"], OPTIONS["sci_mode"]
    finite = values[np.isfinite(values)]
    if finite.size == 0 or sci is not True and (np.all(finite == np.round(finite)) and
                                                np.abs(finite).max() < 1e8):
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    big, small = np.abs(finite).max(), np.abs(finite[finite != 0]).min(initial=1.0)
    if sci is True or (sci is None and (big >= 1e8 or small < 1e-4)):
        return lambda v: f"{v:.{digits}e}" if np.isfinite(v) else str(v)
    return lambda v: f"{v:.{digits}f}" if np.isfinite(v) else str(v)


def _complex_formatter(host: np.ndarray):
    """torch's complex repr: the real and the imaginary parts each with its own float
    format, the real parts right-aligned to one width (``1.0000e+09+2.j``, ``nan+1.j``)."""
    re, im = host.real.astype(np.float64), host.imag.astype(np.float64)
    fre, fim = _float_formatter(re), _float_formatter(im)
    width = max((len(fre(v)) for v in re.reshape(-1)), default=0)

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


def format_tensor(t) -> str:
    host = t.detach()._host()
    if t._dtype is D.bfloat16 or t._dtype is D.float16:
        host = host.astype(np.float32)
    opts = {}
    if t._dtype.category == D.FLOAT:
        opts["formatter"] = {"float_kind": _float_formatter(host.astype(np.float64))}
    elif t._dtype.category == D.COMPLEX:
        opts["formatter"] = {"complex_kind": _complex_formatter(host)}
    if host.size == 0:
        body = "[]"
    else:
        body = np.array2string(host, separator=", ", prefix="tensor(",
                               threshold=OPTIONS["threshold"], edgeitems=OPTIONS["edgeitems"],
                               max_line_width=OPTIONS["linewidth"], **opts)
    extras = []
    if t._device.type != "cpu":
        extras.append(f"device='{t._device}'")
    if t._dtype.name not in _DEFAULT_SHOWN and not (
            t._dtype.category == D.COMPLEX and t._dtype.to_real() is D.get_default_dtype()) \
            or (t._dtype.category == D.FLOAT and t._dtype is not D.get_default_dtype()):
        extras.append(f"dtype=ember.{t._dtype.name}")
    if host.size == 0 and host.shape != (0,):
        extras.append(f"size={tuple(host.shape)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    text = _add_suffixes("tensor(" + body, extras, len("tensor("))
    if t._meta is not None and t._meta.get("param"):
        return "Parameter containing:\n" + text
    return text
