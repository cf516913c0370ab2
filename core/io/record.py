"""What every checkpoint reader shares: the record it returns for each tensor (checked bytes,
not yet placed), the nesting bound, and the guard against keys chosen to collide."""
from __future__ import annotations

import numpy as np

MAX_DEPTH = 100                    # nesting of a saved or loaded structure
# distinct keys of one dict or set that may share one hash value: Python's dicts probe
# keys of equal hash one after another, so n colliding keys (ints k * (2**61 - 1), tuples
# solved for a hash) cost n**2 / 2 comparisons; a real dict never has more than a few
MAX_SAME_HASH = 16


class Saved:
    """A tensor read from a file and checked, not yet placed on a device."""

    __slots__ = ("array", "device", "requires_grad", "parameter", "key")

    def __init__(self, array: np.ndarray, device: str, requires_grad: bool, parameter: bool,
                 key):
        self.array, self.device, self.key = array, device, key
        self.requires_grad, self.parameter = requires_grad, parameter


class HashCounter:
    """Counts the hash values of the keys put into one dict or set read from a file.

    Strings and bytes are not counted: their hashes are salted per process, so a file cannot
    choose them to collide.  Ints, floats and tuples hash the same in every process, and a
    file may hold thousands that share one hash (every multiple of 2**61 - 1 hashes to 0):
    `add` says False once more than MAX_SAME_HASH of them do, before the dict's quadratic
    probing begins.  (The counts dict itself is safe: a hash is a 64-bit int, and at most 9
    of those share one hash of their own.)"""

    __slots__ = ("counts",)

    def __init__(self):
        self.counts: dict[int, int] = {}

    def add(self, key) -> bool:
        kind = type(key)
        if kind is str or kind is bytes:
            return True
        h = hash(key)
        n = self.counts.get(h, 0) + 1
        self.counts[h] = n
        return n <= MAX_SAME_HASH


def colliding_keys(name: str) -> str:
    """The words of the refusal when HashCounter.add says False, for the file `name`."""
    return (f"{name} has more than {MAX_SAME_HASH} keys with one hash value (keys chosen to "
            "collide make a dict cost the square of its size: a hostile file?)")
