"""The programs the distributed tests run on every rank of a job: `python jobs.py NAME ...`
under mpiexec (or `ember run`).  Each checks its results against NumPy on every rank and
raises on the first difference; an uncaught error ends the job with a non-zero status."""
from __future__ import annotations

import json
import os
import sys
import time
import zlib

import ember
import ember.distributed as dist
import ember.nn as nn
import numpy as np
from ember.distributed import ReduceOp

CHECKED = [0]


def data(name: str, rank: int, shape, dtype="float32", low=-3, high=4) -> np.ndarray:
    """Rank `rank`'s input of case `name`: every rank can compute every rank's."""
    rng = np.random.default_rng(zlib.crc32(f"{name}/{rank}".encode()))
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(low, high, shape).astype(dtype)
    return rng.uniform(0.5, 1.5, shape).astype(dtype)


def tensor(a: np.ndarray, device: str, dtype=None):
    return ember.tensor(a, device=device, dtype=dtype)


def same(got, expected, name: str, rtol=1e-6, atol=1e-6) -> None:
    got = np.asarray(got.detach().numpy() if hasattr(got, "numpy") else got)
    expected = np.asarray(expected)
    if got.dtype.kind == "f" or expected.dtype.kind == "f":
        ok = got.shape == expected.shape and np.allclose(got.astype(np.float64),
                                                         expected.astype(np.float64),
                                                         rtol=rtol, atol=atol)
    else:
        ok = got.shape == expected.shape and np.array_equal(got, expected)
    if not ok:
        raise AssertionError(f"rank {dist.get_rank()}: {name}: got {got!r}, expected "
                             f"{expected!r}")
    CHECKED[0] += 1


REDUCE = {ReduceOp.SUM: np.sum, ReduceOp.AVG: np.mean, ReduceOp.MIN: np.min,
          ReduceOp.MAX: np.max, ReduceOp.PRODUCT: np.prod}


def collectives(device: str) -> None:
    """Every collective on `device` tensors against NumPy."""
    r, n = dist.get_rank(), dist.get_world_size()
    everyone = range(n)
    for op, numpy_op in REDUCE.items():
        name = f"all_reduce/{op.name}/{device}"
        t = tensor(data(name, r, (3, 5)), device)
        dist.all_reduce(t, op)
        same(t, numpy_op(np.stack([data(name, i, (3, 5)) for i in everyone]), axis=0), name)
    for dtype, op, reference in (("int64", ReduceOp.SUM, np.sum), ("int32", ReduceOp.MAX, np.max),
                                 ("int64", ReduceOp.BAND, np.bitwise_and.reduce),
                                 ("bool", ReduceOp.SUM, np.any), ("bool", ReduceOp.MIN, np.all)):
        name = f"all_reduce/{dtype}/{op.name}/{device}"
        t = tensor(data(name, r, (7,), dtype), device)
        dist.all_reduce(t, op)
        same(t, reference(np.stack([data(name, i, (7,), dtype) for i in everyone]), axis=0),
             name)
    # a strided view: staged, and written back through the view into its base
    name = f"all_reduce/view/{device}"
    base = tensor(data(name, r, (4, 6)), device)
    dist.all_reduce(base.t()[1:4])
    want = data(name, r, (4, 6))
    want.T[1:4] = np.sum([data(name, i, (4, 6)).T[1:4] for i in everyone], axis=0)
    same(base, want, name)
    name = f"all_reduce/async/{device}"
    t = tensor(data(name, r, (1000,)), device)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    same(t, np.sum([data(name, i, (1000,)) for i in everyone], axis=0), name, rtol=1e-5)
    assert work.is_completed() and work.is_success()

    name = f"broadcast/{device}"
    t = tensor(data(name, r, (2, 3)), device)
    dist.broadcast(t, src=n - 1)
    same(t, data(name, n - 1, (2, 3)), name)

    name = f"all_gather/{device}"
    outs = [tensor(np.zeros((2, 2), np.float32), device) for _ in everyone]
    dist.all_gather(outs, tensor(data(name, r, (2, 2)), device))
    for i in everyone:
        same(outs[i], data(name, i, (2, 2)), name)
    name = f"all_gather_into_tensor/{device}"
    out = tensor(np.zeros((n * 3, 2), np.float32), device)
    dist.all_gather_into_tensor(out, tensor(data(name, r, (3, 2)), device))
    same(out, np.concatenate([data(name, i, (3, 2)) for i in everyone]), name)

    name = f"reduce_scatter_tensor/{device}"
    out = tensor(np.zeros((2, 3), np.float32), device)
    dist.reduce_scatter_tensor(out, tensor(data(name, r, (2 * n, 3)), device))
    same(out, np.sum([data(name, i, (2 * n, 3)) for i in everyone], axis=0)[2 * r:2 * r + 2],
         name)
    name = f"reduce_scatter/{device}"
    out = tensor(np.zeros(4, np.float32), device)
    dist.reduce_scatter(out, [tensor(data(f"{name}/{j}", r, (4,)), device) for j in everyone],
                        ReduceOp.MAX)
    same(out, np.max([data(f"{name}/{r}", i, (4,)) for i in everyone], axis=0), name)

    name = f"reduce/{device}"
    t = tensor(data(name, r, (5,)), device)
    dist.reduce(t, dst=n - 1)
    same(t, np.sum([data(name, i, (5,)) for i in everyone], axis=0) if r == n - 1
         else data(name, r, (5,)), name)

    name = f"gather/{device}"
    outs = [tensor(np.zeros(3, np.float32), device) for _ in everyone] if r == 0 else None
    dist.gather(tensor(data(name, r, (3,)), device), outs, dst=0)
    for i in everyone if r == 0 else ():
        same(outs[i], data(name, i, (3,)), name)
    name = f"scatter/{device}"
    t = tensor(np.zeros(3, np.float32), device)
    parts = ([tensor(data(f"{name}/{j}", n - 1, (3,)), device) for j in everyone]
             if r == n - 1 else None)
    dist.scatter(t, parts, src=n - 1)
    same(t, data(f"{name}/{r}", n - 1, (3,)), name)

    dist.barrier()
    name = f"send_recv/{device}"
    t = tensor(np.zeros(4, np.float32), device)
    sent = dist.isend(tensor(data(name, r, (4,)), device), (r + 1) % n)
    got = dist.irecv(t, (r - 1) % n)
    got.wait()
    sent.wait()
    same(t, data(name, (r - 1) % n, (4,)), name)
    if n > 1:
        t = tensor(np.zeros(4, np.float32), device)
        if r == 1:
            dist.send(tensor(data(name, r, (4,)), device), 0, tag=7)
        elif r == 0:
            sender = dist.recv(t, None, tag=7)
            assert sender == 1, sender
            same(t, data(name, 1, (4,)), name)

    # all_to_all with a different size for every pair: rank i sends i + j + 1 values to j
    name = f"all_to_all/{device}"
    ins = [tensor(data(f"{name}/{j}", r, (r + j + 1,)), device) for j in everyone]
    outs = [tensor(np.zeros(i + r + 1, np.float32), device) for i in everyone]
    dist.all_to_all(outs, ins)
    for i in everyone:
        same(outs[i], data(f"{name}/{r}", i, (i + r + 1,)), name)
    name = f"all_to_all_single/{device}"
    out = tensor(np.zeros((2 * n, 3), np.float32), device)
    dist.all_to_all_single(out, tensor(data(name, r, (2 * n, 3)), device))
    same(out, np.concatenate([data(name, i, (2 * n, 3))[2 * r:2 * r + 2] for i in everyone]),
         name)


def dtypes() -> None:
    """Half-precision reductions (reduced in float32) and float64, on the CPU."""
    r, n = dist.get_rank(), dist.get_world_size()
    for dtype in ("float16", "bfloat16", "float64"):
        name = f"all_reduce/{dtype}"
        host = [data(name, i, (6,)).astype(np.float32) for i in range(n)]
        t = ember.tensor(host[r]).to(getattr(ember, dtype))
        dist.all_reduce(t)
        expected = np.sum([ember.tensor(h).to(getattr(ember, dtype)).float().numpy()
                           for h in host], axis=0)
        same(t.float(), expected, name, rtol=1e-2)
        b = ember.tensor(host[r]).to(getattr(ember, dtype))
        dist.broadcast(b, 0)
        same(b.float(), ember.tensor(host[0]).to(getattr(ember, dtype)).float(), name)


def groups() -> None:
    """A group of the even ranks: collectives inside it; the odd ranks are not members."""
    r, n = dist.get_rank(), dist.get_world_size()
    evens = list(range(0, n, 2))
    group = dist.new_group(evens)
    t = ember.tensor([float(r)])
    result = dist.all_reduce(t, group=group)
    if r in evens:
        same(t, [float(sum(evens))], "new_group/all_reduce")
        assert dist.get_rank(group) == evens.index(r) and dist.get_world_size(group) == len(evens)
        b = ember.tensor([float(r)])
        dist.broadcast(b, src=evens[-1], group=group)
        same(b, [float(evens[-1])], "new_group/broadcast")
    else:
        assert result is None and group is dist.GroupMember.NON_GROUP_MEMBER
        same(t, [float(r)], "new_group/outside")
    # torch's class properties: the default group once initialized
    from ember.distributed.group import world
    assert dist.group.WORLD is world() and dist.GroupMember.WORLD is world()
    out = ember.zeros(n)
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist._all_gather_base(out, ember.tensor([float(r)]))
    assert [w.category for w in caught] == [FutureWarning], caught
    same(out, [float(i) for i in range(n)], "_all_gather_base")


def job_collectives(*devices) -> None:
    dist.init_process_group(timeout=60)
    for device in devices:
        collectives(device)
    dtypes()
    groups()
    dist.destroy_process_group()
    print(f"rank {os.environ['PMI_RANK']} checked {CHECKED[0]}", flush=True)


# --- DDP --------------------------------------------------------------------------------

def mlp():
    return nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 3))


def job_ddp(device: str, models: str = "cnn,mlp") -> None:
    from ember.nn.parallel import DistributedDataParallel
    from ember.tools.demo import build_model, load_digits
    dist.init_process_group(timeout=60)
    r = dist.get_rank()

    def seeded(build):
        def make():
            ember.manual_seed(100 + r)    # every rank starts elsewhere: DDP broadcasts rank 0's
            return build()
        return make
    images, labels = load_digits()
    digits = [(images[i * 16:(i + 1) * 16], labels[i * 16:(i + 1) * 16]) for i in range(3)]
    rng = np.random.default_rng(zlib.crc32(b"mlp"))
    points = [(rng.standard_normal((24, 12)).astype(np.float32), rng.integers(0, 3, 24))
              for _ in range(4)]
    adam = lambda params: ember.optim.Adam(params, lr=3e-3)   # noqa: E731
    for label, build, batches in (("cnn", build_model, digits), ("mlp", mlp, points)):
        if label not in models.split(","):
            continue
        for exact in (False, True):
            report = dist.check_equivalence(seeded(build), batches, nn.CrossEntropyLoss(),
                                            optimizer=adam, exact=exact, device=device,
                                            bucket_cap_mb=0.004)
            print(f"rank {r} {label} {device} exact={exact}: {report}", flush=True)
            assert report.equal and report.replicas_agree, report
            if exact:
                assert report.max_weight_difference == 0 and report.max_loss_difference == 0

    # the check can fail: replicas that drift apart, and gradients never averaged
    drift = lambda params: ember.optim.Adam(params, lr=3e-3 * (1 + r))   # noqa: E731
    report = dist.check_equivalence(seeded(mlp), points[:2], nn.CrossEntropyLoss(),
                                    optimizer=drift, exact=True, device=device)
    assert not report.equal and not report.replicas_agree, report
    from ember.nn.parallel import distributed as ddp_module
    real = ddp_module.C.all_gather_into_tensor
    ddp_module.C.all_gather_into_tensor = lambda out, flat, group, async_op: [
        out[i * flat.numel():(i + 1) * flat.numel()].copy_(flat)
        for i in range(dist.get_world_size())] and None
    try:
        report = dist.check_equivalence(seeded(mlp), points[:2], nn.CrossEntropyLoss(),
                                        exact=True, device=device)
    finally:
        ddp_module.C.all_gather_into_tensor = real
    assert not report.equal and report.max_weight_difference > 0, report

    # no_sync: two local steps' gradients summed, then averaged with the third backward
    ember.manual_seed(7)
    model = mlp().to(device)
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.004)
    x, y = (tensor(a, device) for a in points[0])
    loss_fn = nn.CrossEntropyLoss()
    with ddp.no_sync():
        loss_fn(ddp(x[r * 4:(r + 1) * 4]), y[r * 4:(r + 1) * 4]).backward()
    loss_fn(ddp(x[8 + r * 4:8 + (r + 1) * 4]), y[8 + r * 4:8 + (r + 1) * 4]).backward()
    n = dist.get_world_size()
    ember.manual_seed(7)
    reference = mlp().to(device)
    for i in range(n):
        for start in (0, 8):
            part = slice(start + i * 4, start + (i + 1) * 4)
            loss_fn(reference(x[part]), y[part]).backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        same(p.grad, q.grad.numpy() / n, "no_sync", rtol=1e-5)

    # find_unused_parameters: a branch used by rank 0 only, and a layer used twice
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(4, 4)
            self.only_rank0 = nn.Linear(4, 4)
            self.never = nn.Linear(4, 4)

        def forward(self, x):
            h = self.shared(self.shared(x).tanh())     # one parameter, two uses
            return self.only_rank0(h) if dist.get_rank() == 0 else h
    ember.manual_seed(3)
    net = Branchy().to(device)
    ddp = DistributedDataParallel(net, find_unused_parameters=True)
    xb = tensor(data("branchy", r, (5, 4)), device)
    ddp(xb).sum().backward()
    assert net.never.weight.grad is None, "a parameter no rank used got a gradient"
    assert net.only_rank0.weight.grad is not None
    ember.manual_seed(3)
    single = Branchy().to(device)
    grads = []
    for i in range(n):
        single.zero_grad()
        h = single.shared(single.shared(tensor(data("branchy", i, (5, 4)), device)).tanh())
        (single.only_rank0(h) if i == 0 else h).sum().backward()
        grads.append(single.shared.weight.grad.numpy().copy())
    same(net.shared.weight.grad, np.mean(grads, axis=0), "shared parameter", rtol=1e-5)

    # device_ids, as torch's: one accelerator device the module is on (its inputs are moved
    # there); a CPU module takes none
    from ember.distributed.errors import DistributedError
    if device != "cpu":
        on_device = DistributedDataParallel(mlp().to(device), device_ids=[device])
        assert on_device.device_ids == [0]
        out = on_device(tensor(points[0][0][:4], "cpu"))
        assert str(out.device) == device, out.device
    for bad in ([0], [0, 1]):
        try:
            DistributedDataParallel(mlp(), device_ids=bad)
        except DistributedError as exc:
            assert "only work with single-device" in str(exc), exc
        else:
            raise AssertionError(f"device_ids={bad} accepted for a CPU module")
    dist.destroy_process_group()
    print(f"rank {r} ddp ok", flush=True)


def job_model_mismatch() -> None:
    from ember.nn.parallel import DistributedDataParallel
    dist.init_process_group(timeout=30)
    width = 8 if dist.get_rank() == 0 else 6
    try:
        DistributedDataParallel(nn.Sequential(nn.Linear(4, 4), nn.Linear(4, width)))
    except dist.DistributedError as exc:
        print(f"rank {dist.get_rank()}: {exc}", flush=True)
        dist.destroy_process_group()
        return
    raise AssertionError("different models were not refused")


# --- ranks that pass different things ----------------------------------------------------

def mismatch_cases(r: int) -> dict:
    """name -> (make, call): make() gives the tensors, call(tensors) runs the collective.
    Rank 0 passes one thing, every other rank another: each case must raise on every
    rank, leave every tensor as it was (no data moved), and the group usable."""
    odd = r != 0
    f32, f64, i32, i64 = ember.float32, ember.float64, ember.int32, ember.int64
    ones = ember.ones
    n = dist.get_world_size()
    return {
        "all_reduce/shape": (lambda: [ones(5 if odd else 4)],
                             lambda t: dist.all_reduce(t[0])),
        "all_reduce/float64": (lambda: [ones(4, dtype=f64 if odd else f32)],
                               lambda t: dist.all_reduce(t[0])),
        "all_reduce/int32": (lambda: [ones(4, dtype=i32 if odd else f32)],
                             lambda t: dist.all_reduce(t[0])),
        "all_reduce/op": (lambda: [ones(4)],
                          lambda t: dist.all_reduce(t[0], ReduceOp.MAX if odd else ReduceOp.SUM)),
        "broadcast/shape": (lambda: [ones((3, 2) if odd else (2, 3))],
                            lambda t: dist.broadcast(t[0], src=0)),
        "broadcast/dtype": (lambda: [ones(6, dtype=i64 if odd else f32)],
                            lambda t: dist.broadcast(t[0], src=0)),
        "broadcast/src": (lambda: [ones(6)], lambda t: dist.broadcast(t[0], src=1 if odd else 0)),
        "all_gather/shape": (lambda: [ones(3 if odd else 2)] + [ones(3 if odd else 2) * 0
                                                                for _ in range(n)],
                             lambda t: dist.all_gather(t[1:], t[0])),
        "all_gather/dtype": (lambda: [ones(2, dtype=f64 if odd else f32)] +
                             [ones(2, dtype=f64 if odd else f32) * 0 for _ in range(n)],
                             lambda t: dist.all_gather(t[1:], t[0])),
        "all_gather_into_tensor/shape": (lambda: [ones(3 if odd else 2),
                                                  ones(n * (3 if odd else 2)) * 0],
                                         lambda t: dist.all_gather_into_tensor(t[1], t[0])),
        "reduce/op": (lambda: [ones(4)], lambda t: dist.reduce(
            t[0], dst=0, op=ReduceOp.MIN if odd else ReduceOp.SUM)),
        "reduce_scatter_tensor/dtype": (
            lambda: [ones(2, dtype=f64 if odd else f32), ones(2 * n, dtype=f64 if odd else f32)],
            lambda t: dist.reduce_scatter_tensor(t[0], t[1])),
        "gather/shape": (lambda: [ones(3 if odd else 2)] + ([ones(2) * 0 for _ in range(n)]
                                                             if not odd else []),
                         lambda t: dist.gather(t[0], t[1:] or None, dst=0)),
        "scatter/dtype": (lambda: [ones(2, dtype=i32 if odd else f32) * 0] +
                          ([ones(2) for _ in range(n)] if not odd else []),
                          lambda t: dist.scatter(t[0], t[1:] or None, src=0)),
        # rank 0 expects 2 values from every rank, the others send 3 to rank 0
        "all_to_all/sizes": (lambda: [ones(2 if j == r else 3 if odd and j == 0 else 2)
                                      for j in range(n)] + [ones(2) * 0 for _ in range(n)],
                             lambda t: dist.all_to_all(t[n:], t[:n])),
        "kind/all_reduce_vs_broadcast": (lambda: [ones(4)], lambda t: dist.broadcast(t[0], 0)
                                         if odd else dist.all_reduce(t[0])),
        "kind/barrier_vs_all_reduce": (lambda: [ones(4)], lambda t: dist.barrier() if odd
                                       else dist.all_reduce(t[0])),
        # one rank refuses its own arguments: the others must not start alone
        "refused/gather_list": (lambda: [ones(2)] + ([ones(2) * 0] if not odd else []),
                                lambda t: dist.gather(t[0], t[1:] or None, dst=0)),
        "refused/avg_of_int": (lambda: [ones(4, dtype=i32 if odd else f32)],
                               lambda t: dist.all_reduce(t[0], ReduceOp.AVG)),
        "async/all_reduce": (lambda: [ones(5 if odd else 4)],
                             lambda t: dist.all_reduce(t[0], async_op=True).wait()),
    }


def run_mismatch_cases(out, channel: str, names=None) -> None:
    r, n = dist.get_rank(), dist.get_world_size()
    for name, (make, call) in mismatch_cases(r).items():
        if names is not None and name not in names:
            continue
        tensors = make()
        before = [t.numpy().copy() for t in tensors]
        try:
            call(tensors)
        except ember.EmberError as exc:
            error, message = type(exc).__name__, str(exc)
        else:
            error, message = None, "no error"
        moved = [i for i, (t, b) in enumerate(zip(tensors, before))
                 if not np.array_equal(t.numpy(), b)]
        out.write(json.dumps({"rank": r, "channel": channel, "case": name, "error": error,
                              "message": message, "moved": moved}) + "\n")
        t = ember.full((3,), float(r + 1))      # the group still works
        dist.all_reduce(t)
        same(t, [n * (n + 1) / 2] * 3, f"all_reduce after {name}")
    # a mismatched async collective, then a good one: only the first fails
    first = ember.ones(5 if r else 4)
    good = ember.full((2,), float(r + 1))
    works = [dist.all_reduce(first, async_op=True), dist.all_reduce(good, async_op=True)]
    try:
        works[0].wait()
    except dist.CollectiveMismatchError:
        pass
    else:
        raise AssertionError("a mismatched async all_reduce completed")
    works[1].wait()
    same(good, [n * (n + 1) / 2] * 2, "async all_reduce after a failed one")
    out.write(json.dumps({"rank": r, "channel": channel, "case": "async/then_good"}) + "\n")
    # an async collective's data starts while this rank waits for something else: rank 0
    # receives from rank 1, which sends only once its all_reduce completed
    t = ember.full((4,), float(r + 1))
    work = dist.all_reduce(t, async_op=True)
    got = ember.zeros(2)
    if r == 0:
        dist.recv(got, 1)
        same(got, [7.0, 7.0], "recv while an async all_reduce is pending")
        work.wait()
    else:
        work.wait()
        if r == 1:
            dist.send(ember.full((2,), 7.0), 0)
    same(t, [n * (n + 1) / 2] * 4, "async all_reduce around a send and recv")
    out.write(json.dumps({"rank": r, "channel": channel, "case": "async/progress"}) + "\n")


def job_mismatch(folder: str) -> None:
    """backend="mpi" with the CUDA plugin installed, then every mismatch case, checked over
    the MPI channel and then on the data communicator (as NCCL groups without MPI do);
    each rank writes what it saw to folder/rank<r>.jsonl."""
    from ember.distributed import check
    from ember.distributed.group import world
    dist.init_process_group(backend="mpi", timeout=20)
    out = open(os.path.join(folder, f"rank{dist.get_rank()}.jsonl"), "w", buffering=1)
    out.write(json.dumps({"rank": dist.get_rank(), "backend": dist.get_backend()}) + "\n")
    run_mismatch_cases(out, "mpi")
    group = world()
    group.checker = check.DataChannel(group, "cpu")
    run_mismatch_cases(out, "data", {"all_reduce/shape", "all_reduce/int32", "all_reduce/op",
                                "broadcast/shape", "all_gather/dtype", "refused/gather_list",
                                "all_to_all/sizes", "async/all_reduce"})
    rank = dist.get_rank()
    dist.destroy_process_group()
    out.write(json.dumps({"rank": rank, "done": True}) + "\n")
    out.close()


# --- failures ---------------------------------------------------------------------------

def job_fail(mode: str) -> None:
    """Rank 1 misbehaves after one good collective; the others go on."""
    dist.init_process_group(timeout=float(os.environ.get("JOB_TIMEOUT", "2")))
    t = ember.ones(3)
    dist.all_reduce(t)
    if dist.get_rank() == 1:
        if mode == "raise":
            raise RuntimeError("rank 1 breaks on purpose")
        if mode == "kill":
            os.kill(os.getpid(), 9)
        if mode == "skip":             # skips the next collective and leaves
            return
        if mode == "stall":            # computes far past the timeout
            time.sleep(120)
        if mode == "mismatch":         # calls another collective than the others
            dist.barrier()
            return
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()} was not stopped", flush=True)


def job_env() -> None:
    dist.init_process_group()
    print(f"rank {dist.get_rank()} of {dist.get_world_size()}: RANK={os.environ['RANK']} "
          f"WORLD_SIZE={os.environ['WORLD_SIZE']} LOCAL_RANK={os.environ['LOCAL_RANK']}",
          flush=True)


def job_sleep() -> None:
    dist.init_process_group()
    print(f"sleeping {os.getpid()}", flush=True)
    time.sleep(120)


def job_single() -> None:
    """One process, no launcher: MPI starts as a singleton; collectives are identities."""
    dist.init_process_group()
    assert dist.get_rank() == 0 and dist.get_world_size() == 1 and dist.is_initialized()
    t = ember.tensor([1.0, 2.0])
    dist.all_reduce(t, ReduceOp.AVG)
    same(t, [1.0, 2.0], "single all_reduce")
    for call, error in ((lambda: dist.init_process_group(), "already initialized"),
                        (lambda: dist.broadcast(t, src=3), "rank 3 is not in group"),
                        (lambda: dist.all_reduce(ember.tensor([1, 2]), ReduceOp.AVG),
                         "needs a floating tensor"),
                        (lambda: dist.all_gather([t, t], t), "list of 1 tensors"),
                        (lambda: nn.parallel.DistributedDataParallel(nn.LazyLinear(2)),
                         "Modules with uninitialized parameters can't be used")):
        try:
            call()
        except ember.EmberError as exc:
            assert error in str(exc), (error, str(exc))
        else:
            raise AssertionError(f"no error for {error}")
    dist.destroy_process_group()
    assert not dist.is_initialized()
    try:
        dist.init_process_group(backend="gloo")
    except dist.DistributedError as exc:
        assert "unknown backend 'gloo'" in str(exc)
    print("single ok", flush=True)


if __name__ == "__main__":
    globals()[f"job_{sys.argv[1]}"](*sys.argv[2:])
