"""ember.linalg (torch.linalg): norms and products (norms.py), decompositions and solvers
(decompositions.py), written with ember ops.

lstsq is in least_squares.py, the LU family in lu_decomposition.py, matrix_exp and cond
in matrix_functions.py, Householder reflectors (householder_product) in householder.py,
L D L^T in ldl_decomposition.py.  The names still missing raise the ember-gap error (see
_torch_gaps.py).
"""
from __future__ import annotations

from . import (
    decompositions,
    householder,
    ldl_decomposition,
    least_squares,
    lu_decomposition,
    matrix_functions,
    norms,
)
from .decompositions import *  # noqa: F403
from .householder import *  # noqa: F403
from .ldl_decomposition import *  # noqa: F403
from .least_squares import *  # noqa: F403
from .lu_decomposition import *  # noqa: F403
from .matrix_functions import *  # noqa: F403
from .norms import *  # noqa: F403

__all__ = [*norms.__all__, *decompositions.__all__, *least_squares.__all__,
           *lu_decomposition.__all__, *matrix_functions.__all__, *householder.__all__,
           *ldl_decomposition.__all__]


def __getattr__(name: str):
    from .._torch_gaps import missing
    raise missing("linalg", name)
