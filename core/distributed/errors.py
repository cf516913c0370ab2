"""The errors of ember.distributed: every one an EmberError and the builtin that fits."""
from __future__ import annotations

from ..errors import EmberError


class DistributedError(EmberError, RuntimeError):
    """A process group that cannot be made or used as asked."""


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A collective that did not complete in time; the message names the missing ranks."""


class CollectiveMismatchError(DistributedError):
    """Ranks that called different collectives at one step, or passed different dtypes,
    shapes, reductions or roots: raised on every rank, before any data moved."""
