"""check_equivalence: N processes training with DDP (or FSDP: parallel="fsdp") against one
process on the same global batches, compared step by step (losses) and at the end (every
weight; FSDP's gathered in a full state dict).

Tolerance mode (the default): the reference trains on each whole global batch, and the
results agree within float32 rounding (the sums run in another order).  Exact mode: DDP
sums the ranks' gradients in rank order (reduce_in_rank_order=True) and the reference
computes the N shards' gradients one after the other and sums them in the same order, so
the two must agree bit for bit; any difference is a bug, not rounding.
"""
from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .. import autograd
from .errors import DistributedError
from .group import world


@dataclass(frozen=True)
class EquivalenceReport:
    """What check_equivalence found (the same report on every rank).

    PyTorch
    -------
    None: the report of :func:`check_equivalence`, an ember diagnostic.
    """

    world_size: int
    steps: int
    exact: bool
    losses: list                    # the DDP job's global loss per step
    reference_losses: list          # the single process's
    max_loss_difference: float
    max_weight_difference: float
    worst_parameter: str
    replicas_agree: bool            # every rank ended with the same weights
    equal: bool                     # within tolerance, or bit for bit in exact mode

    def __str__(self) -> str:
        mode = "bit for bit" if self.exact else "within float32 tolerance"
        verdict = "equal" if self.equal else "DIFFERENT"
        return (f"{self.world_size} processes vs 1 over {self.steps} steps ({mode}): "
                f"{verdict}; max loss difference {self.max_loss_difference:.3g}, max weight "
                f"difference {self.max_weight_difference:.3g} ({self.worst_parameter})"
                + ("" if self.replicas_agree else "; the ranks' replicas differ"))


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().numpy()).copy()


def _as_tensor(x, device):
    from ..ops.creation import tensor
    from ..tensor import Tensor
    return (x if type(x) is Tensor else tensor(np.asarray(x))).to(device)


def check_equivalence(build_model: Callable, batches: Iterable, loss_fn: Callable, *,
                      optimizer: Callable | None = None, exact: bool = False,
                      rtol: float = 1e-4, atol: float = 1e-6, device="cpu",
                      bucket_cap_mb: float = 25.0, parallel: str = "ddp",
                      fsdp_options: dict | None = None) -> EquivalenceReport:
    """Train build_model() with DDP on this job's ranks, each on its slice of every global
    batch (inputs, targets), and, on rank 0, one replica on the whole batches; compare.

    Call it on every rank of an initialized default group, with the same batches.
    optimizer(params) makes the optimizer (default SGD, lr 0.1).  parallel="fsdp" trains
    with FullyShardedDataParallel(model, **fsdp_options) instead (auto_wrap_policy,
    sharding_strategy, ...; in exact mode with reduce_in_rank_order=True), the optimizer on
    its shards.  Returns the report on every rank; raise on `not report.equal` as you see
    fit.

    PyTorch
    -------
    None: an ember diagnostic (DDP or FSDP against one process on the same data).
    """
    from ..nn.parallel import DistributedDataParallel
    from ..optim import SGD

    group = world()
    rank, size = group.rank, group.size
    make_opt = optimizer or (lambda params: SGD(params, lr=0.1))
    batches = [(_as_tensor(x, device), _as_tensor(y, device)) for x, y in batches]
    for x, _ in batches:
        if x.shape[0] % size:
            raise DistributedError(f"check_equivalence: a global batch of {x.shape[0]} does "
                                   f"not split evenly over {size} ranks")
    if parallel not in ("ddp", "fsdp"):
        raise DistributedError(f"check_equivalence: parallel must be 'ddp' or 'fsdp', got "
                               f"{parallel!r}")
    if fsdp_options and parallel != "fsdp":
        raise DistributedError("check_equivalence: fsdp_options are for parallel='fsdp'")
    model = build_model().to(device)
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if parallel == "fsdp":
        from .fsdp import FullyShardedDataParallel
        ddp = FullyShardedDataParallel(model, sync_module_states=True,
                                       reduce_in_rank_order=exact, **(fsdp_options or {}))
    else:
        ddp = DistributedDataParallel(model, reduce_in_rank_order=exact,
                                      bucket_cap_mb=bucket_cap_mb)
    opt = make_opt(ddp.parameters())
    local = []
    for x, y in batches:
        b = x.shape[0] // size
        loss = loss_fn(ddp(x[rank * b:(rank + 1) * b]), y[rank * b:(rank + 1) * b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        local.append(float(loss.item()))
    every = [json.loads(s) for s in group.allgather_bytes(json.dumps(local).encode())]
    losses = [_ordered_mean([np.float32(every[r][s]) for r in range(size)])
              for s in range(len(batches))]
    weights = {k: _host(v) for k, v in (ddp if parallel == "fsdp" else model)
               .state_dict().items()}
    crc = zlib.crc32(b"".join(weights[k].tobytes() for k in sorted(weights)))
    replicas_agree = len(set(group.allgather_bytes(str(crc).encode()))) == 1
    found = {}
    if rank == 0:
        reference = build_model().to(device)
        reference.load_state_dict(start)
        ref_losses = _train_reference(reference, make_opt(reference.parameters()), batches,
                                      loss_fn, size, exact)
        ref_weights = {k: _host(v) for k, v in reference.state_dict().items()}
        worst, diff = "", 0.0
        for k, w in weights.items():
            d = float(np.max(np.abs(w.astype(np.float64) - ref_weights[k]))) if w.size else 0.
            if d > diff or not worst:
                worst, diff = k, d
        if exact:
            equal = all(np.array_equal(weights[k], ref_weights[k]) for k in weights) and \
                losses == ref_losses
        else:
            equal = all(np.allclose(weights[k], ref_weights[k], rtol=rtol, atol=atol)
                        for k in weights) and np.allclose(losses, ref_losses, rtol=rtol,
                                                          atol=atol)
        found = dict(reference_losses=ref_losses,
                     max_loss_difference=float(np.max(np.abs(np.subtract(losses,
                                                                         ref_losses)))),
                     max_weight_difference=diff, worst_parameter=worst,
                     equal=bool(equal and replicas_agree))
    found = json.loads(group.allgather_bytes(json.dumps(found).encode())[0])
    return EquivalenceReport(world_size=size, steps=len(batches), exact=exact, losses=losses,
                             replicas_agree=replicas_agree, **found)


def _ordered_mean(values) -> float:
    """(v0 + v1 + ...) / n in float32, in that order: what both sides compute."""
    total = values[0]
    for v in values[1:]:
        total = np.float32(total + v)
    return float(np.float32(total / np.float32(len(values))))


def _train_reference(model, opt, batches, loss_fn, size: int, exact: bool) -> list:
    losses = []
    for x, y in batches:
        if not exact:
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
            continue
        # the N shards one after the other, their gradients summed in rank order and
        # divided by N, as the exact-mode DDP job does across its ranks
        b = x.shape[0] // size
        params = [p for p in model.parameters() if p.requires_grad]
        sums, shard_losses = None, []
        for r in range(size):
            opt.zero_grad()
            loss = loss_fn(model(x[r * b:(r + 1) * b]), y[r * b:(r + 1) * b])
            loss.backward()
            shard_losses.append(np.float32(loss.item()))
            with autograd.no_grad():
                grads = [p.grad.clone() for p in params]
                if sums is None:
                    sums = grads
                else:
                    for total, g in zip(sums, grads):
                        total += g
        with autograd.no_grad():
            for p, total in zip(params, sums):
                total /= size
                p.grad = total
        opt.step()
        losses.append(_ordered_mean(shard_losses))
    return losses


__all__ = ["EquivalenceReport", "check_equivalence"]
