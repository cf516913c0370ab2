"""EMBER_DISTRIBUTED_DEBUG=1: every collective's fingerprint is compared across the ranks
at its call, blocking, before the default check (check.py) that every collective makes.

The fingerprint is (sequence number, a CRC of the collective's kind and signature: dtype,
shape, root, reduction); the ranks exchange it over the group's control channel, and
only on a mismatch the readable descriptions.  Beyond the default check it compares the
sequence numbers, and stops an async_op=True collective at its call rather than at its
wait().
"""
from __future__ import annotations

import struct
import zlib

from .check import call_site, describe
from .errors import CollectiveMismatchError


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
