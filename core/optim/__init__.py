"""Optimizers and learning-rate schedulers (ember.optim)."""
from __future__ import annotations

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adam import Adam, AdamW
from .adam_family import Adamax, NAdam, RAdam
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .rprop_asgd import ASGD, Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor",
           "LBFGS",
           "Adamax", "NAdam", "RAdam", "Rprop", "ASGD",
           "lr_scheduler", "swa_utils"]


def __getattr__(name: str):
    from .._torch_gaps import submodule_or_missing  # a PyTorch name ember lacks: a gap
    return submodule_or_missing(__name__, "optim", name)
