"""Comparing a result of ember's with torch's, for the tests generated against PyTorch
(test_creation.py, test_shape_index.py)."""

from __future__ import annotations

import ember
import numpy as np
import torch


def _host(r):
    if r.dtype in (torch.bfloat16, ember.bfloat16):
        r = r.float()
    if isinstance(r, torch.Tensor):
        return r.detach().resolve_conj().numpy()
    return r.numpy()


def _summary(r):
    """(dtype name, shape, values) of a tensor, lists of them element by element, other
    results as they are (dtype objects by name)."""
    if (
        isinstance(r, (tuple, list))
        and r
        and all(hasattr(x, "dtype") for x in r)
        and not isinstance(r, torch.Size)
    ):
        return [_summary(x) for x in r]
    if hasattr(r, "dtype") and hasattr(r, "shape"):
        return (str(r.dtype).split(".")[-1], tuple(r.shape), _host(r))
    if isinstance(r, torch.Size) or type(r).__name__ == "Size":
        return tuple(r)
    if type(r).__name__ in ("dtype", "DType"):
        return str(r).split(".")[-1]
    if isinstance(r, str):
        return r.replace("torch.", "").replace("ember.", "")
    return r


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
        if not (isinstance(b, tuple) and len(b) == 3 and isinstance(b[2], np.ndarray)):
            return False
        if a[:2] != b[:2]:
            return False
        return a[2].size == 0 or bool(
            np.allclose(
                a[2].astype(np.complex128),
                b[2].astype(np.complex128),
                equal_nan=True,
                rtol=1e-5,
                atol=1e-6,
            )
        )
    return type(a) is type(b) and a == b if not isinstance(a, float) else a == b


def _raised(r) -> bool:
    return isinstance(r, tuple) and len(r) == 3 and r[0] == "raise"
