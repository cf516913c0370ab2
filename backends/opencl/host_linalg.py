"""The decompositions on OpenCL, computed ON THE HOST: no OpenCL LAPACK exists here.

Each kernel copies its inputs to the host (to_host), runs NumPy's LAPACK (np.linalg, via
array_api.linalg_kernels) and copies the result back (from_host).  Correct on every device,
not fast: the matrices travel twice per call.
"""
from __future__ import annotations

import numpy as np

from .. import array_api


def _on_host(kernel):
    def run(*arrays, **attrs):
        from ember import dtypes as D
        rt = arrays[0].runtime
        with np.errstate(all="ignore"):     # NumPy's notes on inf and nan: PyTorch is silent
            out = kernel(*(rt.to_host(a) for a in arrays), **attrs)
        out = np.asarray(out, order="C")     # keeps 0-d (det of one matrix) 0-d
        return rt.from_host(out, D.from_numpy_dtype(out.dtype))
    return run


def table() -> dict:
    return {name: _on_host(k) for name, k in {**array_api.linalg_kernels(np),
                                              **array_api.eig_kernels(np)}.items()}
