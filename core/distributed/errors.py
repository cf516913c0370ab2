"""The errors of ember.distributed: every one an EmberError and the builtin that fits."""
from __future__ import annotations

from ..errors import EmberError


class DistributedError(EmberError, RuntimeError):
    """A process group that cannot be made or used as asked.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A collective that did not complete in time; the message names the missing ranks.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """


class CollectiveMismatchError(DistributedError):
    """Ranks that called different collectives at one step, or passed different dtypes,
    shapes, reductions or roots: raised on every rank, before any data moved.

    PyTorch
    -------
    None: PyTorch raises RuntimeError, ValueError or TypeError; ember raises this subclass of
    the same builtin (and of :class:`ember.EmberError`), so ``except RuntimeError`` still works.
    """
