"""ember.nn: the layers and losses, gathered from one module per torch.nn.modules family."""
from __future__ import annotations

from . import (
    activation,
    attention,
    containers,
    conv,
    ctc,
    distance,
    dropout,
    fold,
    functional,
    init,
    linear,
    linear_cross_entropy,
    loss,
    margin_loss,
    module,
    normalization,
    padding,
    parameter,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
    utils,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .containers import *  # noqa: F403
from .conv import *  # noqa: F403
from .ctc import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .fold import *  # noqa: F403
from .linear import *  # noqa: F403
from .linear_cross_entropy import *  # noqa: F403
from .loss import *  # noqa: F403
from .margin_loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .parameter import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

# every family module names its public classes in a written-out __all__; ember.nn is them
__all__ = [*activation.__all__, *attention.__all__, *containers.__all__, *conv.__all__,
           *ctc.__all__,
           *distance.__all__, *dropout.__all__, *fold.__all__, *linear.__all__,
           *linear_cross_entropy.__all__, *loss.__all__,
           *margin_loss.__all__, *module.__all__, *normalization.__all__, *padding.__all__,
           *parameter.__all__, *pixelshuffle.__all__, *pooling.__all__,
           *rnn.__all__,
           *sparse.__all__, *transformer.__all__, *upsampling.__all__, "functional", "init",
           "utils"]


def __getattr__(name: str):
    if name == "DataParallel":        # torch.nn.DataParallel, loaded on first use
        from .parallel import DataParallel
        return DataParallel
    from .._torch_gaps import submodule_or_missing  # a PyTorch name ember lacks: a gap
    return submodule_or_missing(__name__, "nn", name)
