"""torch.optim._multi_tensor: the optimizers with foreach=True as their default (torch's
old home of the multi-tensor implementations), as torch builds them: subclasses whose
__init__ is the optimizer's with foreach=True bound."""
from __future__ import annotations

from functools import partialmethod

from . import ASGD, SGD, Adadelta, Adam, Adamax, AdamW, NAdam, RAdam, Rprop

__all__ = ["ASGD", "Adadelta", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Rprop", "SGD",
           "partialclass"]


def partialclass(cls, *args, **kwargs):
    """A subclass of cls whose __init__ has args and kwargs bound (torch's helper).

    PyTorch
    -------
    ``torch.optim._multi_tensor.partialclass``
    """
    return type(cls.__name__, (cls,), {
        "__init__": partialmethod(cls.__init__, *args, **kwargs),
        "__module__": __name__, "__doc__": f"{cls.__name__} with foreach=True by default."})


Adam = partialclass(Adam, foreach=True)
AdamW = partialclass(AdamW, foreach=True)
NAdam = partialclass(NAdam, foreach=True)
SGD = partialclass(SGD, foreach=True)
RAdam = partialclass(RAdam, foreach=True)
Rprop = partialclass(Rprop, foreach=True)
ASGD = partialclass(ASGD, foreach=True)
Adamax = partialclass(Adamax, foreach=True)
Adadelta = partialclass(Adadelta, foreach=True)


def __getattr__(name: str):
    if name in ("RMSprop", "Adagrad"):
        from ..errors import NotInEmberError
        raise NotInEmberError(
            f"ember has no torch.optim._multi_tensor.{name} yet: ember's {name} has no "
            f"foreach implementation (use ember.optim.{name}, whose results are the same)")
    from .._torch_gaps import missing
    raise missing("optim._multi_tensor", name)
