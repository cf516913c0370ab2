"""Stable seeds for the suite's random inputs, directions and programs (never hash())."""
from __future__ import annotations

import zlib


def seed_of(*parts) -> int:
    """A stable 32-bit seed from names and numbers."""
    return zlib.crc32(":".join(map(str, parts)).encode())
