"""torch.* tensor functions written with ember ops, one module per family (as ops/).

This package only gathers them: `ember.*` re-exports every name in `__all__`.
"""
from __future__ import annotations

# nn.functional takes these from here too: softplus (not a torch.* name) and relu (an op)
from ..ops.elementwise import relu  # noqa: F401
from . import (
    activation,
    complexes,
    creation,
    elementwise,
    histograms,
    index,
    linalg,
    movement,
    nn,
    products,
    random,
    reduce,
    special,
    spectral,
)
from .activation import *  # noqa: F403
from .activation import softplus  # noqa: F401
from .complexes import *  # noqa: F403
from .creation import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .histograms import *  # noqa: F403
from .index import *  # noqa: F403
from .linalg import *  # noqa: F403
from .movement import *  # noqa: F403
from .nn import *  # noqa: F403
from .products import *  # noqa: F403
from .random import *  # noqa: F403
from .reduce import *  # noqa: F403
from .special import *  # noqa: F403
from .spectral import *  # noqa: F403

__all__ = [*activation.__all__, *complexes.__all__, *creation.__all__, *elementwise.__all__,
           *histograms.__all__,
           *index.__all__, *linalg.__all__, *movement.__all__, *nn.__all__, *products.__all__,
           *random.__all__, *reduce.__all__, *special.__all__, *spectral.__all__]
