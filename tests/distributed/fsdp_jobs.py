"""The programs the FSDP tests run on every rank of a job: `python fsdp_jobs.py NAME ...`
under mpiexec (or alone, as one process).  Each raises on the first wrong result; an
uncaught error ends the job with a non-zero status."""
from __future__ import annotations

import functools
import math
import os
import socket
import sys

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
from ember.distributed import checkpoint as dcp
from ember.distributed.fsdp import (
    CPUOffload,
    MixedPrecision,
    ShardingStrategy,
    StateDictType,
    fully_shard,
    size_based_auto_wrap_policy,
    transformer_auto_wrap_policy,
)
from ember.distributed.fsdp import (
    FullyShardedDataParallel as FSDP,
)
from ember.errors import NotInEmberError


class Block(nn.Module):
    """A pre-norm transformer block: attention and an MLP, each with a residual."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm1(x)

        def split(y):
            return y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)),
                                           split(self.v(h)), is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Stack(nn.Module):
    def __init__(self, vocab: int = 32, d: int = 16, layers: int = 3, heads: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def build(layers: int = 3):
    ember.manual_seed(0)
    return Stack(layers=layers)


def tied():
    """The stack with its head tied to the embedding (head.weight is embed.weight)."""
    model = build(layers=1)
    model.head = nn.Linear(16, 32, bias=False)
    model.head.weight = model.embed.weight
    return model


def batches(steps: int = 3, batch: int = 4, t: int = 6, vocab: int = 32):
    rng = np.random.default_rng(7)
    return [(rng.integers(0, vocab, (batch, t)), rng.integers(0, vocab, (batch, t)))
            for _ in range(steps)]


def loss_fn(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


POLICY = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})


def report(name: str, rep) -> None:
    print(f"rank {dist.get_rank()}: {name}: {rep}", flush=True)
    if not rep.equal:
        raise AssertionError(f"{name}: {rep}")


def job_equivalence(only: str = "") -> None:
    """FSDP N ranks vs 1 process: every strategy in tolerance mode (SGD), FULL_SHARD exact
    with Adam on the shards (Adam in tolerance mode would blow float32 noise up: the keys'
    bias has a gradient of 0 up to rounding, which Adam normalizes to a step of lr); a
    size-based policy."""
    dist.init_process_group()
    print(f"rank {dist.get_rank()} on {socket.gethostname()}", flush=True)
    data = batches()
    adam = functools.partial(ember.optim.Adam, lr=1e-2)
    rep = dist.check_equivalence(build, data, loss_fn, exact=True, parallel="fsdp",
                                 optimizer=adam, fsdp_options={"auto_wrap_policy": POLICY})
    report("FULL_SHARD exact, Adam", rep)
    if only == "exact":
        return
    rep = dist.check_equivalence(build, data, loss_fn, parallel="fsdp",
                                 fsdp_options={"auto_wrap_policy": POLICY})
    report("FULL_SHARD", rep)
    for strategy in (ShardingStrategy.SHARD_GRAD_OP, ShardingStrategy.NO_SHARD):
        rep = dist.check_equivalence(build, data, loss_fn, parallel="fsdp",
                                     fsdp_options={"auto_wrap_policy": POLICY,
                                                   "sharding_strategy": strategy})
        report(strategy.name, rep)
    size = functools.partial(size_based_auto_wrap_policy, min_num_params=500)
    rep = dist.check_equivalence(build, data, loss_fn, parallel="fsdp",
                                 fsdp_options={"auto_wrap_policy": size,
                                               "forward_prefetch": True,
                                               "cpu_offload": CPUOffload(True)})
    report("size policy, forward_prefetch", rep)
    print("equivalence ok", flush=True)


def _train(model, steps=2, opt=None):
    r, n = dist.get_rank(), dist.get_world_size()
    opt = opt or ember.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches(steps):
        b = x.shape[0] // n
        loss = loss_fn(model(ember.tensor(x[r * b:(r + 1) * b])),
                       ember.tensor(y[r * b:(r + 1) * b]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return opt


def _close(got: dict, want: dict, what: str, tol=0.0) -> None:
    assert list(got) == list(want), (what, list(got), list(want))
    for k in want:
        a, b = got[k].detach().numpy(), want[k].detach().numpy()
        if a.shape != b.shape or np.max(np.abs(a - b), initial=0) > tol:
            raise AssertionError(f"rank {dist.get_rank()}: {what}: {k} differs")


def job_features() -> None:
    """fully_shard vs FSDP1 (same weights), no_sync accumulation, mixed precision, state
    dicts, eval without grad, options that ember cannot honour."""
    dist.init_process_group()
    r, n = dist.get_rank(), dist.get_world_size()
    # FSDP's collectives, asynchronous: results after wait(), a mismatch named per rank
    full = ember.zeros(3 * n)
    gather = dist.all_gather_into_tensor(full, ember.full((3,), float(r)), async_op=True)
    part = ember.zeros(2)
    scatter = dist.reduce_scatter_tensor(part, ember.arange(2 * n).float() * (r + 1),
                                         async_op=True)
    assert gather.wait() and scatter.wait() and gather.is_completed()
    assert full.tolist() == [float(i // 3) for i in range(3 * n)], full.tolist()
    assert part.tolist() == [float(2 * r + j) * n * (n + 1) / 2 for j in range(2)]
    work = None
    try:
        work = dist.reduce_scatter_tensor(ember.zeros(2 + (r == 1)),
                                          ember.zeros(n * (2 + (r == 1))), async_op=True)
        work.wait()
    except dist.CollectiveMismatchError as exc:
        text = str(exc)
        assert "reduce_scatter(float32, (2,), SUM)" in text, text
        assert "rank 1: reduce_scatter(float32, (3,), SUM)" in text, text
    else:
        raise AssertionError("a mismatched async reduce_scatter_tensor completed")
    one = FSDP(build(), auto_wrap_policy=POLICY)
    _train(one)
    with FSDP.state_dict_type(one, StateDictType.FULL_STATE_DICT):
        full = one.state_dict()
    two = build()
    for block in two.blocks:
        fully_shard(block)
    fully_shard(two)
    assert type(two).__name__ == "FSDPStack"
    numel = sum(p.numel() for p in build().parameters())
    local = sum(p.numel() for p in two.parameters())
    assert local <= math.ceil(numel / n) + 4 * n, (local, numel)
    _train(two)
    sharded = two.state_dict()
    into: dict = {"kept": 1}
    assert two.state_dict(destination=into, prefix="m.") is into
    assert into.pop("kept") == 1 and list(into) == ["m." + k for k in sharded]
    assert all(isinstance(v, dcp.FlatShard) for k, v in sharded.items()
               if "weight" in k or "bias" in k)
    # gather fully_shard's shards the way FSDP1's full state dict does
    from ember.distributed.fsdp import _state_dict
    _close(_state_dict(two, StateDictType.FULL_STATE_DICT), full, "fully_shard vs FSDP1",
           1e-6)

    # no_sync: two half batches accumulated == one whole batch (tolerance)
    x, y = batches(1, batch=4 * n)[0]
    a = FSDP(build(), auto_wrap_policy=POLICY)
    b = FSDP(build(), auto_wrap_policy=POLICY)
    mine = slice(r * 4, (r + 1) * 4)
    loss_fn(a(ember.tensor(x[mine])), ember.tensor(y[mine])).backward()
    halves = (slice(r * 4, r * 4 + 2), slice(r * 4 + 2, r * 4 + 4))
    with b.no_sync():
        (loss_fn(b(ember.tensor(x[halves[0]])), ember.tensor(y[halves[0]])) / 2).backward()
    assert all(p.grad is None for p in b.parameters()), "no_sync reduced gradients"
    (loss_fn(b(ember.tensor(x[halves[1]])), ember.tensor(y[halves[1]])) / 2).backward()
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert np.allclose(pa.grad.numpy(), pb.grad.numpy(), atol=1e-6), "no_sync"

    # the whole model's gradient norm, clipped across the shards, as one process clips it
    whole = build()
    loss_fn(whole(ember.tensor(x)), ember.tensor(y)).backward()
    for norm_type in (2.0, float("inf")):
        want = float(ember.nn.utils.clip_grad_norm_(whole.parameters(), 1e9, norm_type))
        got = float(a.clip_grad_norm_(1e9, norm_type))
        assert abs(got - want) <= 1e-5 * want, (norm_type, got, want)
    before = [p.grad.clone() for p in a.parameters()]
    total = float(a.clip_grad_norm_(0.5 * want))
    for p, g in zip(a.parameters(), before):
        assert np.allclose(p.grad.numpy(), g.numpy() * 0.5 * want / (total + 1e-6))

    # mixed precision: bfloat16 compute, float32 shards and gradients
    mp = FSDP(build(), auto_wrap_policy=POLICY,
              mixed_precision=MixedPrecision(param_dtype=ember.bfloat16,
                                             reduce_dtype=ember.float32))
    out = mp(ember.tensor(x[mine]))
    assert out.dtype is ember.bfloat16, out.dtype
    loss_fn(out.float(), ember.tensor(y[mine])).backward()
    ref = FSDP(build(), auto_wrap_policy=POLICY)
    loss_fn(ref(ember.tensor(x[mine])), ember.tensor(y[mine])).backward()
    for pm, pr in zip(mp.parameters(), ref.parameters()):
        assert pm.dtype is ember.float32 and pm.grad.dtype is ember.float32
        assert np.allclose(pm.grad.numpy(), pr.grad.numpy(), atol=0.05), "bf16 grads"

    # eval under no_grad frees every unit's full parameters; a forward with grad but no
    # backward is forgotten at the next forward
    with ember.no_grad():
        one(ember.tensor(x[mine]))
    assert all(p.numel() == 0 for p in one.module.blocks[0].q.__dict__.values()
               if type(p) is ember.Tensor)
    one(ember.tensor(x[mine]))
    _train(one, steps=1)

    # sharded state dict round trip: load into a fresh model
    with FSDP.state_dict_type(one, StateDictType.SHARDED_STATE_DICT):
        sd = one.state_dict()
    fresh = FSDP(build(layers=3), auto_wrap_policy=POLICY)
    ember.manual_seed(5)
    with FSDP.state_dict_type(fresh, StateDictType.SHARDED_STATE_DICT):
        fresh.load_state_dict(sd)
    with FSDP.state_dict_type(one, StateDictType.FULL_STATE_DICT):
        want = one.state_dict()
    _close(fresh.state_dict(), want, "sharded state dict round trip")
    other = FSDP(build(layers=3), auto_wrap_policy=POLICY)
    other.load_state_dict(want)                  # a full state dict: each rank its slice
    _close(other.state_dict(), want, "full state dict round trip")

    # tied weights (the head reuses the embedding's): one unit holds them, both names in
    # the state dict, bit for bit like one process; split across units they are refused
    rep = dist.check_equivalence(tied, batches(), loss_fn, exact=True, parallel="fsdp",
                                 fsdp_options={"auto_wrap_policy": POLICY})
    report("tied weights, exact", rep)
    with FSDP.state_dict_type(one, StateDictType.FULL_STATE_DICT):
        keys = list(FSDP(tied(), auto_wrap_policy=POLICY).state_dict())
    assert "embed.weight" in keys and "head.weight" in keys, keys
    try:
        FSDP(tied(), auto_wrap_policy={Block, nn.Linear})
    except dist.DistributedError as exc:
        assert "is shared with" in str(exc) and "Wrap the modules that share it" in str(exc)
    else:
        raise AssertionError("a weight tied across two units was accepted")

    for call, error in (
            (lambda: FSDP(build(), use_orig_params=True), "use_orig_params=True"),
            (lambda: FSDP(build(), sharding_strategy=ShardingStrategy.HYBRID_SHARD),
             "HYBRID_SHARD"),
            (lambda: FSDP(build(), ignored_modules=[nn.Linear(2, 2)]), "ignored_modules"),
            (lambda: FSDP(build(), mixed_precision=MixedPrecision(
                keep_low_precision_grads=True)), "keep_low_precision_grads"),
            (lambda: fully_shard(build(), mesh=object()), "DeviceMesh"),
            (lambda: FSDP.set_state_dict_type(one, StateDictType.LOCAL_STATE_DICT),
             "LOCAL_STATE_DICT"),
            (lambda: FSDP.state_dict_type(one, StateDictType.FULL_STATE_DICT,
                                          optim_state_dict_config=object()).__enter__(),
             "optimizer state dicts"),
            (lambda: one.state_dict(keep_vars=True), "keep_vars=True"),
            (lambda: two.state_dict(keep_vars=True), "keep_vars=True"),
            (lambda: two.load_state_dict(two.state_dict(), assign=True), "assign=True"),
            (lambda: two.set_requires_gradient_sync(False, recurse=False), "recurse=False")):
        try:
            call()
        except NotInEmberError as exc:
            assert error in str(exc), (error, str(exc))
        else:
            raise AssertionError(f"no NotInEmberError for {error}")
    print("features ok", flush=True)


def job_offload() -> None:
    """An OpenCL model with cpu_offload: shards, gradients and SGD on the host, compute on
    the device; the same weights as one process on the host.  (The MLP of the DDP test:
    the OpenCL programs it compiles are mostly shared.)"""
    dist.init_process_group()
    r, n = dist.get_rank(), dist.get_world_size()

    def mlp():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                             nn.Linear(32, 3))
    model = FSDP(mlp().to("opencl:0"), auto_wrap_policy={nn.Linear},
                 cpu_offload=CPUOffload(offload_params=True))
    assert all(p.device.type == "cpu" for p in model.parameters())
    ref = mlp()
    opt, ref_opt = (ember.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref))
    rng = np.random.default_rng(3)
    criterion = nn.CrossEntropyLoss()
    for _ in range(2):
        x = rng.standard_normal((8, 12)).astype(np.float32)
        y = rng.integers(0, 3, 8)
        b = x.shape[0] // n
        out = model(ember.tensor(x[r * b:(r + 1) * b]).to("opencl:0"))
        assert out.device.type == "opencl"
        loss = criterion(out, ember.tensor(y[r * b:(r + 1) * b]).to("opencl:0"))
        opt.zero_grad()
        loss.backward()
        assert all(p.grad.device.type == "cpu" for p in model.parameters())
        opt.step()
        ref_loss = criterion(ref(ember.tensor(x)), ember.tensor(y))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
    got = {k: v.cpu() for k, v in model.state_dict().items()}
    _close(got, ref.state_dict(), "cpu_offload on opencl", 1e-5)
    print("offload ok", flush=True)


def job_save(path: str) -> None:
    """Train under FSDP, save a sharded checkpoint, and (rank 0) the full weights."""
    dist.init_process_group()
    model = FSDP(build(layers=3), auto_wrap_policy=POLICY)
    _train(model)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        meta = dcp.save({"model": model.state_dict(), "step": 2}, checkpoint_id=path)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        full = model.state_dict()
    if dist.get_rank() == 0:
        ember.save(full, os.path.join(path, "..", "reference.pt"))
    assert meta.world_size == dist.get_world_size()
    print("save ok", flush=True)


def job_load(path: str) -> None:
    """Load the checkpoint on this job's ranks (FSDP) or, alone, into a plain model."""
    want = ember.load(os.path.join(path, "..", "reference.pt"))
    if "PMI_RANK" in os.environ:
        dist.init_process_group()
        model = FSDP(build(layers=3), auto_wrap_policy=POLICY)
        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
            state = {"model": model.state_dict(), "step": 0}
            dcp.load(state, checkpoint_id=path)
            model.load_state_dict(state["model"])
        with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
            got = model.state_dict()
        where = f"{dist.get_world_size()} ranks"
        _train(model, steps=1)       # the loaded shards train on
    else:
        model = build(layers=3)
        state = {"model": model.state_dict(), "step": 0}
        dcp.load(state, checkpoint_id=path)
        got = model.state_dict()
        where = "1 process"
        out = os.path.join(path, "..", "consolidated.pt")
        dcp.dcp_to_ember_save(path, out)
        fresh = build(layers=3)
        fresh.load_state_dict({k[len("model."):]: v for k, v in ember.load(out).items()
                               if k.startswith("model.")})
        _close(fresh.state_dict(), want, "consolidated file")
    assert state["step"] == 2, state["step"]
    _close(got, want, f"checkpoint loaded on {where}")
    print(f"load ok on {where}", flush=True)


if __name__ == "__main__":
    globals()[f"job_{sys.argv[1]}"](*sys.argv[2:])
