"""Op declarations by family; this module gathers their public functions.

REGISTRY (name -> Op) holds every declaration; OPS the primitives every backend
implements, KERNELS the declared kernels a backend may implement (see _op.py).  Each family
module's `__all__` names its public functions (ember.add, ember.sum, ...); ember.* takes
them from here.
"""
from __future__ import annotations

from . import (
    bitwise,  # declares bitwise_and/or/xor/not and the shifts (ember.functional runs them)
    complex,  # declares real, imag, conj, complex (ember.functional runs them)
    creation,
    decompositions,  # declares inv, solve, det, cholesky, eigh, svd, qr
    elementwise,
    fft,  # declares fft_c2c, fft_r2c, fft_c2r (ember.fft, core/fft/, runs them)
    incomplete_gamma,  # declares igamma, igammac (ember.functional runs them)
    index,
    layout,  # Tensor.stride, is_contiguous, memory_format= (hands it to creation)
    linalg,
    loss,  # declares cross_entropy and its gradient kernel (nn/loss.py runs them)
    movement,
    nn,
    reduce,
    rnn,  # declares lstm_cell, gru_cell and their gradient kernels (nn/rnn.py runs them)
    sampling,
    scan,
    sorting,
    special,  # declares lgamma, digamma, erfinv, atan2 (ember.functional runs them)
)
from ._op import KERNELS, OPS, REGISTRY, Op, declared_names, describe
from .creation import *  # noqa: F403
from .creation import bernoulli_mask, from_host  # noqa: F401  (ember's own: dropout, devices)
from .elementwise import *  # noqa: F403

# round: the primitive, no decimals=; add, sub, div: without alpha=, rounding_mode=; the
# comparisons, maximum, minimum and logical ops: the primitives that take a number on either
# side (ember.eq, ember.maximum, ... are ember.functional's, which refuse one as torch does)
from .elementwise import (  # noqa: F401
    BINARY,
    UNARY,
    add,
    div,
    eq,
    ge,
    gt,
    le,
    logical_and,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    ne,
    round,
    sub,
)
from .index import *  # noqa: F403
from .index import getitem, setitem, take_along  # noqa: F401  (Tensor.__getitem__, ...)
from .linalg import *  # noqa: F403
from .movement import *  # noqa: F403
from .nn import *  # noqa: F403
from .reduce import *  # noqa: F403
from .sampling import *  # noqa: F403
from .scan import *  # noqa: F403
from .sorting import *  # noqa: F403

complex.install_refusals(REGISTRY)   # what torch refuses on complex tensors, refused

__all__ = [*creation.__all__, *elementwise.__all__, *index.__all__, *linalg.__all__,
           *movement.__all__, *nn.__all__, *reduce.__all__, *sampling.__all__, *scan.__all__,
           *sorting.__all__]
