"""ember.distributed.checkpoint: sharded checkpoints (torch.distributed.checkpoint's save
and load), loadable on any number of ranks.

A checkpoint is a directory:

    .metadata                 JSON manifest (written last, atomically, by rank 0): the
                              world size, every file with its size, and for every key its
                              global shape, dtype and the pieces that hold it
    __<rank>_<id>.distcp      one per rank, ember's safe format (ember.save: a safetensors
                              file, written atomically): this rank's pieces

A FlatShard value (FSDP's SHARDED_STATE_DICT, fully_shard's state_dict) is written by the
rank that holds it as elements [start, stop) of the flattened tensor; a whole tensor (a
FULL_STATE_DICT, a buffer, a plain model's state_dict) by rank 0 only (it is the same on
every rank); ints, floats, strings and None go into the manifest.  The file names carry a
fresh id per save, so a save that fails half way leaves the previous checkpoint whole: its
manifest names only its own files; the files of an older save are removed after the new
manifest is in place.

load(state_dict, checkpoint_id=...) fills state_dict in place from the pieces, whatever the
number of ranks that saved it: a FlatShard gets its own range (resharding), a tensor the
whole value; it needs no collective, so one process without init_process_group can load a
checkpoint of 4 ranks.  dcp_to_ember_save consolidates a checkpoint into one ordinary
state_dict file (ember.save), for ember.load and model.load_state_dict.
"""
from __future__ import annotations

import json
import os
import secrets
import zlib
from dataclasses import dataclass, field

import numpy as np

from ... import autograd
from ...errors import CheckpointError, NotInEmberError
from ...io import _save_atomic
from ...io import load as _load
from ...io import save as _save
from ...tensor import Tensor
from ..group import is_initialized, resolve
from ..sharded import FlatShard

METADATA = ".metadata"
FORMAT = "ember.distributed.checkpoint/1"


@dataclass
class Metadata:
    """What save wrote (the manifest): world size, files, and per key its shape, dtype and
    pieces ({file, start, stop})."""

    world_size: int
    files: dict
    tensors: dict
    values: dict = field(default_factory=dict)


class FileSystemWriter:
    """Where save writes (torch's FileSystemWriter(path)); options torch has beyond the
    path are not in ember."""

    def __init__(self, path, single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 overwrite: bool = True):
        if not single_file_per_rank or thread_count != 1:
            raise NotInEmberError("FileSystemWriter: ember writes one file per rank, from "
                                  "one thread (single_file_per_rank=True, thread_count=1)")
        if not sync_files:
            raise NotInEmberError("FileSystemWriter: sync_files=False is not in ember; "
                                  "every file is fsynced and replaced atomically")
        self.path, self.overwrite = os.fspath(path), overwrite


class FileSystemReader:
    """Where load reads (torch's FileSystemReader(path))."""

    def __init__(self, path):
        self.path = os.fspath(path)


def _directory(checkpoint_id, storage, what: str) -> str:
    if storage is not None:
        if checkpoint_id is not None and os.fspath(checkpoint_id) != storage.path:
            raise CheckpointError(f"{what}: checkpoint_id {checkpoint_id!r} and the storage "
                                  f"object's path {storage.path!r} differ; pass one")
        return storage.path
    if checkpoint_id is None:
        raise CheckpointError(f"{what}: pass checkpoint_id= (a directory path)")
    return os.fspath(checkpoint_id)


def _group(process_group, no_dist: bool):
    if no_dist or not is_initialized():
        return None
    return resolve(process_group)


def _json_value(key: str, value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CheckpointError(f"save: {key!r} is a {type(value).__name__}; a checkpoint holds "
                          "tensors, FlatShards, and int, float, str, bool or None values "
                          "(flatten nested dicts into dotted keys)")


def _flatten(state_dict: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in state_dict.items():
        if not isinstance(k, str):
            raise CheckpointError(f"save: key {k!r} is not a string")
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def save(state_dict: dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False) -> Metadata:
    """Write state_dict as a sharded checkpoint into the directory checkpoint_id, every
    rank its pieces (collective over the group when one is initialized)."""
    if planner is not None:
        raise NotInEmberError("save: save planners are not in ember (pass planner=None)")
    path = _directory(checkpoint_id, storage_writer, "save")
    group = _group(process_group, no_dist)
    rank, size = (group.rank, group.size) if group is not None else (0, 1)
    flat = _flatten(state_dict)
    error = ""
    tensors, values, pieces = {}, {}, {}
    token = secrets.token_hex(6)
    if group is not None and size > 1:
        token = group.allgather_bytes(token.encode())[0].decode()
    name = f"__{rank}_{token}.distcp"
    try:
        if rank == 0:
            os.makedirs(path, exist_ok=True)
        if group is not None and size > 1:
            group.allgather_bytes(b"dir")           # the directory exists for every rank
        mine = {}
        for key, value in flat.items():
            if isinstance(value, FlatShard):
                local = value.local.detach()
                tensors[key] = {"shape": list(value.global_shape),
                                "dtype": local.dtype.name}
                if local.numel():
                    mine[key] = local.reshape(-1).to("cpu").clone()
                    pieces[key] = [value.start, value.stop]
            elif type(value) is Tensor:
                t = value.detach()
                tensors[key] = {"shape": list(t.shape), "dtype": t.dtype.name}
                if rank == 0:
                    mine[key] = t.reshape(-1).to("cpu").clone()
                    pieces[key] = [0, t.numel()]
            else:
                values[key] = _json_value(key, value)
        with autograd.no_grad():
            _save(mine, os.path.join(path, name))
        nbytes = os.path.getsize(os.path.join(path, name))
    except Exception as exc:          # told to every rank below: nobody writes a manifest
        error, nbytes = f"{type(exc).__name__}: {exc}", 0
    report = json.dumps({"rank": rank, "file": name, "bytes": nbytes, "tensors": tensors,
                         "pieces": pieces, "values": values, "error": error})
    reports = ([json.loads(r) for r in group.allgather_bytes(report.encode())]
               if group is not None and size > 1 else [json.loads(report)])
    failed = [r for r in reports if r["error"]]
    if failed:
        with _quiet():
            os.unlink(os.path.join(path, name))
        raise CheckpointError(
            f"save: rank {', '.join(str(r['rank']) for r in failed)} could not write its "
            f"shard of {path!r} ({failed[0]['error']}); no manifest was written, the "
            "previous checkpoint there (if any) is unchanged")
    meta = _manifest(reports, size)
    if rank == 0:
        body = json.dumps({"format": FORMAT, "world_size": meta.world_size,
                           "files": meta.files, "tensors": meta.tensors,
                           "values": meta.values}, separators=(",", ":")).encode()
        _save_atomic(os.path.join(path, METADATA), lambda fh: fh.write(body), len(body))
        keep = set(meta.files)
        for old in os.listdir(path):
            if old.endswith(".distcp") and old not in keep:
                with _quiet():
                    os.unlink(os.path.join(path, old))
    if group is not None and size > 1:
        group.allgather_bytes(b"saved")          # the manifest is in place on return
    return meta


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        return kind is not None and issubclass(kind, OSError)


def _manifest(reports: list, size: int) -> Metadata:
    files, tensors, values = {}, {}, {}
    for rep in reports:
        files[rep["file"]] = {"rank": rep["rank"], "bytes": rep["bytes"]}
        values.update(rep["values"])
        for key, info in rep["tensors"].items():
            known = tensors.setdefault(key, dict(info, pieces=[]))
            if known["shape"] != info["shape"] or known["dtype"] != info["dtype"]:
                raise CheckpointError(f"save: {key!r} is {info['dtype']} {info['shape']} on "
                                      f"rank {rep['rank']} but {known['dtype']} "
                                      f"{known['shape']} on another rank")
        for key, (start, stop) in rep["pieces"].items():
            tensors[key]["pieces"].append({"file": rep["file"], "start": start,
                                           "stop": stop})
    for key, info in tensors.items():
        n = int(np.prod(info["shape"], dtype=np.int64))
        covered = sorted((p["start"], p["stop"]) for p in info["pieces"])
        at = 0
        for a, b in covered:
            if a > at:
                break
            at = max(at, b)
        if at < n:
            raise CheckpointError(f"save: the ranks' pieces of {key!r} cover elements [0, "
                                  f"{at}) of {n}; every element must be held by some rank")
    return Metadata(size, files, tensors, values)


def read_metadata(checkpoint_id) -> Metadata:
    """The manifest of a checkpoint directory (checked against its files' sizes)."""
    path = os.fspath(checkpoint_id)
    where = os.path.join(path, METADATA)
    try:
        with open(where, "rb") as fh:
            raw = json.loads(fh.read().decode())
    except FileNotFoundError:
        raise CheckpointError(f"load: {path!r} holds no checkpoint manifest ({METADATA}); "
                              "pass the directory ember.distributed.checkpoint.save wrote "
                              "(a save that did not finish writes none)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"load: {where!r} is not a checkpoint manifest ({exc})") \
            from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise CheckpointError(f"load: {where!r} is not an {FORMAT} manifest")
    for name, info in raw["files"].items():
        if os.path.basename(name) != name:
            raise CheckpointError(f"load: the manifest names file {name!r} outside the "
                                  "checkpoint directory")
        try:
            got = os.path.getsize(os.path.join(path, name))
        except OSError:
            raise CheckpointError(f"load: {name!r} (rank {info['rank']}'s shard) is missing "
                                  f"from {path!r}") from None
        if got != info["bytes"]:
            raise CheckpointError(f"load: {name!r} has {got} bytes; the manifest says "
                                  f"{info['bytes']}: the checkpoint was changed after it was "
                                  "written")
    return Metadata(raw["world_size"], raw["files"], raw["tensors"], raw.get("values", {}))


class _Files:
    """The checkpoint's shard files, each loaded (memory-mapped) once."""

    def __init__(self, path: str):
        self.path, self.open = path, {}

    def get(self, name: str, key: str) -> Tensor:
        if name not in self.open:
            self.open[name] = _load(os.path.join(self.path, name), map_location="cpu",
                                    mmap=True)
        data = self.open[name]
        if key not in data:
            raise CheckpointError(f"load: {name!r} lacks {key!r}, which the manifest places "
                                  "there")
        return data[key]


def _elements(files: _Files, key: str, info: dict, start: int, stop: int, dtype) -> Tensor:
    """Elements [start, stop) of key's flattening, assembled from the pieces."""
    from ...ops.creation import empty
    out = empty(stop - start, dtype=dtype)
    at = start
    for piece in sorted(info["pieces"], key=lambda p: p["start"]):
        a, b = max(piece["start"], at), min(piece["stop"], stop)
        if b <= a:
            continue
        if a > at:
            break
        src = files.get(piece["file"], key)
        out[at - start:b - start].copy_(src[a - piece["start"]:b - piece["start"]].to(dtype))
        at = b
        if at >= stop:
            break
    if at < stop:
        raise CheckpointError(f"load: the checkpoint holds elements up to {at} of {key!r}; "
                              f"elements [{at}, {stop}) are needed")
    return out


def load(state_dict: dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False) -> None:
    """Fill state_dict in place from a checkpoint saved on any number of ranks: each
    FlatShard its own range, each tensor its whole value, other values replaced."""
    if planner is not None:
        raise NotInEmberError("load: load planners are not in ember (pass planner=None)")
    path = _directory(checkpoint_id, storage_reader, "load")
    meta = read_metadata(path)
    files = _Files(path)
    flat = _flatten(state_dict)
    missing = [k for k in flat if k not in meta.tensors and k not in meta.values]
    if missing:
        raise CheckpointError(f"load: the checkpoint {path!r} lacks {missing[:8]}"
                              f"{' ...' if len(missing) > 8 else ''}; it holds "
                              f"{list(meta.tensors)[:8]} ...")
    with autograd.no_grad():
        for key, value in flat.items():
            if key in meta.values:
                _put(state_dict, key, meta.values[key])
                continue
            info = meta.tensors[key]
            shape = tuple(info["shape"])
            if isinstance(value, FlatShard):
                if value.global_shape != shape:
                    raise CheckpointError(f"load: {key!r} is {list(value.global_shape)} in "
                                          f"the model, {list(shape)} in the checkpoint")
                if value.local.numel():
                    value.local.copy_(_elements(files, key, info, value.start, value.stop,
                                                value.local.dtype).to(value.local.device))
            elif type(value) is Tensor:
                if tuple(value.shape) != shape:
                    raise CheckpointError(f"load: {key!r} is {list(value.shape)} in the "
                                          f"model, {list(shape)} in the checkpoint")
                n = value.numel()
                whole = _elements(files, key, info, 0, n, value.dtype)
                value.copy_(whole.reshape(shape).to(value.device))
            else:
                raise CheckpointError(f"load: {key!r} is a {type(value).__name__} in "
                                      "state_dict but a tensor in the checkpoint")


def _put(state_dict: dict, key: str, value) -> None:
    if key in state_dict:
        state_dict[key] = value
        return
    head, _, rest = key.partition(".")
    _put(state_dict[head], rest, value)


def dcp_to_ember_save(dcp_checkpoint_dir, ember_save_path) -> None:
    """Consolidate a sharded checkpoint into one state_dict file (ember.save; ember.load
    reads it back, model.load_state_dict takes it), in one process."""
    meta = read_metadata(dcp_checkpoint_dir)
    files = _Files(os.fspath(dcp_checkpoint_dir))
    from ... import dtypes
    out = {}
    for key, info in meta.tensors.items():
        dtype = getattr(dtypes, info["dtype"])
        n = int(np.prod(info["shape"], dtype=np.int64))
        out[key] = _elements(files, key, info, 0, n, dtype).reshape(tuple(info["shape"]))
    out.update(meta.values)
    _save(out, ember_save_path)


def checksum(state_dict: dict) -> int:
    """A CRC of every tensor's values in key order (tests and tools compare weights)."""
    crc = 0
    for key in sorted(state_dict):
        v = state_dict[key]
        if type(v) is Tensor:
            crc = zlib.crc32(np.ascontiguousarray(v.detach().numpy()).tobytes(), crc)
    return crc


__all__ = ["save", "load", "Metadata", "FileSystemWriter", "FileSystemReader",
           "read_metadata", "dcp_to_ember_save", "checksum", "FlatShard"]
