"""torch.random: the global random stream's seed and state, and fork_rng.

ember has one host stream (PCG64) that every device draws from (ARCHITECTURE.md section 5),
so the functions here are ember.manual_seed & co, and fork_rng forks that one stream: it
covers the devices torch forks one by one.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .ops.creation import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    set_rng_state,
)
from .settings import seed

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Inside the block, random draws may reseed or advance the stream freely; on leaving,
    the stream is back where it was (enabled=False: a no-op block).

    torch saves the CPU generator and each of `devices` (of `device_type`) separately;
    ember's devices all draw from the one host stream, so saving it forks every device's
    numbers at once, whichever devices and device_type are named.

    PyTorch
    -------
    ``torch.random.fork_rng``
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
