"""EMBER_DISTRIBUTED_DEBUG=1: every collective's fingerprint is compared across the ranks
before it starts, so that ranks calling different collectives get an error naming each
rank's call and call site instead of a hang (or silently mixed data).

The fingerprint is (sequence number, a CRC of the collective's kind and signature: dtype,
shape, root, reduction); the ranks exchange it over the group's control channel, and
only on a mismatch the readable descriptions.
"""
from __future__ import annotations

import struct
import sys
import zlib

from .errors import CollectiveMismatchError

_OWN = ("ember.distributed", "ember.nn.parallel")


def call_site() -> str:
    """file:line of the first caller outside ember.distributed and DDP."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_OWN):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def describe(kind: str, signature: tuple) -> str:
    """all_reduce(float32, (4, 3), SUM): a collective as the user called it."""
    parts = [str(tuple(x)) if isinstance(x, tuple) else str(x) for x in signature]
    return f"{kind}({', '.join(parts)})"


def check(group, seq: int, kind: str, signature: tuple) -> None:
    """Raise CollectiveMismatchError on every rank if the ranks' collectives differ."""
    mine = zlib.crc32(repr((kind, signature)).encode())
    prints = group.control.allgather_bytes(struct.pack("<qI", seq, mine), group, kind,
                                           numbered=False)
    if len(set(prints)) == 1:
        return
    text = f"{describe(kind, signature)} at {call_site()}"
    texts = [t.decode() for t in group.control.allgather_bytes(text.encode(), group, kind,
                                                                 numbered=False)]
    seqs = [struct.unpack("<qI", p)[0] for p in prints]
    first = next(r for r in range(group.size) if prints[r] != prints[0])
    lines = [f"ember.distributed: the ranks of group {group.name!r} called different "
             f"collectives (EMBER_DISTRIBUTED_DEBUG=1); rank {group.ranks[first]} is the "
             "first that differs from rank "
             f"{group.ranks[0]}:"]
    for r in range(group.size):
        lines.append(f"rank {group.ranks[r]}: collective #{seqs[r]} {texts[r]}")
    lines.append("fix: every rank must call the same collectives, with the same shapes "
                 "and dtypes, in the same order (look for a branch on the rank or on data "
                 "that differs between ranks)")
    group.seq -= 1       # this collective did not happen
    raise CollectiveMismatchError("\n  ".join(lines))
