"""Packed and padded sequences for the recurrent layers (ember.nn.utils.rnn, as in torch).

A PackedSequence holds a batch of sequences of different lengths, sorted longest first,
time step after time step: `data` is (sum of lengths, *) and `batch_sizes[t]` says how many
sequences are still running at step t.  The recurrent layers run such a batch without
computing anything for the padding.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import dtypes as D
from ... import ops
from ...errors import EmberTypeError, EmberValueError, ShapeError
from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


class PackedSequence(NamedTuple):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as torch's PackedSequence.

    batch_sizes is an int64 CPU tensor; sorted_indices[i] is the original index of the i-th
    longest sequence (None when the batch came sorted), unsorted_indices its inverse."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args, **kwargs) -> PackedSequence:
        """data moved or cast like Tensor.to; the indices follow data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return PackedSequence(data, self.batch_sizes,
                              *(None if i is None else i.to(data.device)
                                for i in (self.sorted_indices, self.unsorted_indices)))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, device=None) -> PackedSequence:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> PackedSequence:
        return self.to(D.float64)

    def float(self) -> PackedSequence:
        return self.to(D.float32)

    def half(self) -> PackedSequence:
        return self.to(D.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    order = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order), dtype=np.int64)
    return ops.tensor(inverse, device=permutation.device)


def _lengths(lengths, name: str) -> list[int]:
    if type(lengths) is Tensor:
        if lengths.ndim != 1 or lengths._dtype.category != D.INT:
            raise EmberValueError(f"{name}: lengths must be a 1-D integer tensor or a list of "
                                  f"ints, got {lengths._dtype.name} of shape "
                                  f"{tuple(lengths.shape)}")
        lengths = lengths.tolist()
    try:
        out = [int(n) for n in lengths]
    except TypeError:
        raise EmberTypeError(f"{name}: lengths must be a 1-D tensor or a list of ints, got "
                             f"{type(lengths).__name__}") from None
    if any(n <= 0 for n in out):
        raise EmberValueError(f"{name}: Length of all samples has to be greater than 0, but "
                              f"found an element in 'lengths' that is <= 0: {out}")
    return out


def _batch_sizes(sorted_lengths: list[int]) -> list[int]:
    """How many of the (longest first) sequences run at each time step."""
    counts = np.bincount(np.asarray(sorted_lengths), minlength=sorted_lengths[0] + 1)
    return (len(sorted_lengths) - np.cumsum(counts)[:-1]).tolist()


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * with batch_first) of sequences of the given
    lengths; with enforce_sorted=False the lengths may come in any order."""
    lengths = _lengths(lengths, "pack_padded_sequence")
    batch_dim = 0 if batch_first else 1
    if input.ndim < 2 or input.shape[batch_dim] != len(lengths):
        raise ShapeError(f"pack_padded_sequence: expected an input with {len(lengths)} "
                         f"sequences (one per length) along dim {batch_dim}, got shape "
                         f"{tuple(input.shape)}")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise EmberValueError(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order "
                "when `enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                "you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-np.asarray(lengths), kind="stable")
        lengths = [lengths[i] for i in order]
        sorted_indices = ops.tensor(order.astype(np.int64), device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if lengths[0] > input.shape[1 - batch_dim]:
        raise EmberValueError(f"pack_padded_sequence: a length of {lengths[0]} is longer "
                              f"than the padded input's {input.shape[1 - batch_dim]} steps")
    if batch_first:
        input = input.transpose(0, 1)
    sizes = _batch_sizes(lengths)
    data = ops.cat([input[t, :n] for t, n in enumerate(sizes)])
    return PackedSequence(data, ops.tensor(sizes, dtype=D.int64), sorted_indices,
                          invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None):
    """(padded, lengths): the inverse of pack_padded_sequence; lengths is an int64 tensor
    in the batch's original order."""
    data, sizes = sequence.data, sequence.batch_sizes.tolist()
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise EmberValueError(
                f"pad_packed_sequence: Expected total_length to be at least the length of "
                f"the longest sequence ({steps}), but got total_length={total_length}")
        steps = total_length
    pieces, start = [], 0
    for n in sizes:
        piece = data[start:start + n]
        start += n
        if n < batch:
            piece = ops.pad(piece, (0, 0) * (data.ndim - 1) + (0, batch - n),
                            value=padding_value)
        pieces.append(piece)
    if steps > len(sizes):
        pieces.append(ops.full(((steps - len(sizes)) * batch,) + tuple(data.shape[1:]),
                               padding_value, dtype=data.dtype, device=data.device))
    padded = ops.cat(pieces).reshape((steps, batch) + tuple(data.shape[1:]))
    # the i-th longest sequence runs for as many steps as have more than i sequences
    lengths = (np.asarray(sizes)[None, :] > np.arange(batch)[:, None]).sum(1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, ops.tensor(lengths.astype(np.int64))


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack (L_i, *) tensors into (max L, B, *) (B first with batch_first), padded."""
    if type(sequences) is Tensor:
        sequences = [sequences[i] for i in range(sequences.shape[0])]
    sequences = list(sequences)
    if not sequences:
        raise EmberValueError("pad_sequence: expected a non-empty list of tensors")
    if padding_side not in ("right", "left"):
        raise EmberValueError(f"pad_sequence: padding_side must be 'left' or 'right', got "
                              f"{padding_side!r}")
    trailing = tuple(sequences[0].shape[1:])
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != trailing:
            raise ShapeError(f"pad_sequence: every sequence needs the trailing shape "
                             f"{trailing} of sequence 0, sequence {i} has shape "
                             f"{tuple(s.shape)}")
        extra = longest - s.shape[0]
        pads = (0, extra) if padding_side == "right" else (extra, 0)
        padded.append(ops.pad(s, (0, 0) * len(trailing) + pads, value=padding_value)
                      if extra else s)
    return ops.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) tensors (longest first unless enforce_sorted=False)."""
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences a padded batch holds, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths(lengths, "unpad_sequence"))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences a PackedSequence holds, in the batch's original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
