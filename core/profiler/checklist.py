"""diagnose(): PyTorch's performance-tuning checklist, checked with the numbers of one
profiled run (`ember doctor perf script.py` runs a script under it).

Each finding says what was measured, why it matters, the change to try and the expected
gain; where a change can be tried on the spot it is (an op re-run with fewer threads or
in float32), and the figure says which.  A step is the time between two optimizer steps
(or profile.step() calls); the first `warmup` steps are left out (kernel builds, caches).
"""
from __future__ import annotations

import os
import statistics
import time
from dataclasses import asdict, dataclass, field

from ..errors import EmberTypeError

BLAS_OPS = ("matmul", "mm", "bmm", "addmm", "linear", "conv1d", "conv2d", "conv3d",
            "baddbmm", "addbmm", "einsum", "tensordot", "conv_transpose2d", "dot", "mv")
DATALOADER_SHARE = 0.20      # a DataLoader taking more of the step than this is a finding
HOST_SHARE = 0.50            # kernels below this share of the compute time: host-bound
MIN_OPS = 20                 # ... with at least this many ops per step
HOST_MIN_SHARE = 0.10        # ... and the dispatch time at least this share of the step
THREAD_GAIN = 0.10           # a measured thread change saving less is not reported


@dataclass
class Finding:
    check: str
    measured: str
    why: str
    fix: str
    expected_gain: str
    share: float                       # of the step time, 0..1
    figures: dict = field(default_factory=dict)
    severity: str = "warning"


@dataclass
class PerfReport:
    steps: int
    step_ms: float
    findings: list
    summary: dict
    top_ops: list
    memory_peak: dict

    def to_dict(self) -> dict:
        d = asdict(self)
        d["schema"] = "ember-doctor-perf/1"
        return d

    def __str__(self) -> str:
        lines = [f"{self.steps} steps measured, {self.step_ms:.2f} ms per step"]
        if not self.findings:
            lines.append("nothing to fix: no check of the checklist found a cause")
        for f in self.findings:
            lines += [f"[{f.check}] {f.measured}", f"  why: {f.why}", f"  try: {f.fix}",
                      f"  expected: {f.expected_gain}"]
        return "\n".join(lines)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def diagnose(target=None, *args, steps: int = 10, warmup: int = 2, **kwargs) -> PerfReport:
    """Check the tuning checklist: `target` is a finished ember.profiler.profile (one made
    by diagnose-style runs: record_shapes=True, steps marked with prof.step()), or a
    function run warmup + steps times (each call one step) under the profiler."""
    from .profiler import ProfilerActivity, profile
    if isinstance(target, profile):
        return analyze(target.events(), warmup=warmup)
    if not callable(target):
        raise EmberTypeError("diagnose: expected a finished ember.profiler.profile or a "
                             f"function to run as one step, got {type(target).__name__}")
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                   record_shapes=True, profile_memory=True)
    prof._keep_samples = True
    with prof:
        for _ in range(warmup + steps):
            target(*args, **kwargs)
            prof.step()
    return analyze(prof.events(), warmup=warmup)


def analyze(events, warmup: int = 2) -> PerfReport:
    rec = events.recorder
    step_events = sorted((e for e in events if e.kind == "step"), key=lambda e: e.start_ns)
    if len(step_events) > warmup + 1:
        step_events = step_events[warmup:]
    # the last step (from the last boundary to the end of recording) may be a partial one
    if len(step_events) > 2:
        step_events = step_events[:-1]
    lo = step_events[0].start_ns if step_events else 0
    hi = step_events[-1].end_ns if step_events else max((e.end_ns for e in events), default=0)
    n_steps = max(len(step_events), 1)
    total = max(hi - lo, 1)
    inside = [e for e in events if lo <= e.start_ns and e.end_ns <= hi]
    ops = [e for e in inside if e.kind == "op"]
    loaders = [e for e in inside if e.kind == "dataloader"]
    kernels = [e for e in inside if e.kind == "kernel"]
    # a busy machine preempts now and then: one call of a 5 us kernel that took 10 ms would
    # count as kernel time, so kernels (and the profiler's own time around each op) are
    # counted as each kind's median call times its calls
    op_ns = _robust(ops, lambda e: e.end_ns - e.start_ns)
    dl_ns = sum(e.end_ns - e.start_ns for e in loaders)
    own_ns = _robust(ops, lambda e: e.own_ns)     # the profiler's own time in the window
    # Python and dispatch around the ops: the thread's CPU time in the steps less the
    # kernels, the profiler's own part and the DataLoader's; CPU time, as the wall time of a
    # step on a busy machine also holds the time it waited for a core
    cpu_ns = sum(e.args.get("cpu_ns", e.end_ns - e.start_ns) for e in step_events) \
        if step_events else total
    dl_cpu = sum(e.args.get("cpu_ns", 0) for e in loaders)
    host_ns = max(cpu_ns - op_ns - own_ns - dl_cpu, 0)
    busy = op_ns + host_ns + dl_ns            # the step without the waits for a core
    compute_ns = max(op_ns + host_ns, 1)
    summary = {"step_ms": total / n_steps / 1e6, "ops_per_step": len(ops) / n_steps,
               "dataloader_share": dl_ns / total, "kernel_share": op_ns / total,
               "host_overhead_share": host_ns / max(busy, 1), "profiler_overhead_ms_per_step":
               own_ns / n_steps / 1e6, "threads": _threads(), "cores": cores(),
               "load_average": _load(), "devices": sorted({e.device for e in ops})}
    findings = []
    for check in (_dataloader, _threads_check, _fallback, _float64, _low_precision_cpu,
                  _host_bound, _device_idle):
        f = check(rec=rec, ops=ops, loaders=loaders, kernels=kernels, total=total,
                  dl_ns=dl_ns, op_ns=op_ns, host_ns=host_ns, compute_ns=compute_ns, busy=busy,
                  n_steps=n_steps)
        if f is not None:
            findings.append(f)
    findings.sort(key=lambda f: -f.share)
    top = {}
    for e in ops:
        key = (e.name, str(e.input_shapes), e.device)
        t = top.setdefault(key, [0, 0])
        t[0] += e.end_ns - e.start_ns
        t[1] += 1
    top_ops = [{"op": k[0], "shapes": k[1], "device": k[2], "ms_per_step": v[0] / n_steps / 1e6,
                "calls_per_step": v[1] / n_steps, "share": v[0] / total}
               for k, v in sorted(top.items(), key=lambda kv: -kv[1][0])[:8]]
    return PerfReport(n_steps, total / n_steps / 1e6, findings, summary, top_ops,
                      dict(rec.peak))


def _robust(ops, value) -> float:
    groups: dict = {}
    for e in ops:
        groups.setdefault((e.name, str(e.input_shapes)), []).append(value(e))
    return float(sum(statistics.median(v) * len(v) for v in groups.values()))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _threads() -> dict:
    from .. import settings
    out = {"blas": settings.get_num_threads(),
           "interop": settings.get_num_interop_threads()}
    pocl = os.environ.get("POCL_MAX_PTHREAD_COUNT") or os.environ.get("POCL_CPU_MAX_CU_NUM")
    if pocl:
        out["pocl"] = int(pocl)
    return out


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def _time(kernel, attrs, natives, reps=None) -> float:
    """Best seconds of one call (a few calls, at most about 0.3 s)."""
    call = (lambda: kernel(*natives, **attrs)) if attrs else (lambda: kernel(*natives))
    t = time.perf_counter()
    call()
    one = time.perf_counter() - t
    reps = reps or max(2, min(20, int(0.1 / max(one, 1e-6))))
    best = one
    for _ in range(reps):
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return best


# -- the checks ------------------------------------------------------------------------------

def _heaviest(events, rec) -> tuple:
    """(op name, input shapes, input dtypes) of the events' op and inputs that took the
    most time in all, and the recorded sample to re-run it with (None if none was kept)."""
    by_key: dict = {}
    for e in events:
        key = (e.name, tuple(map(tuple, e.input_shapes)), tuple(e.input_dtypes))
        by_key[key] = by_key.get(key, 0) + e.end_ns - e.start_ns
    key = max(by_key, key=by_key.get)
    return key, rec.samples.get(key)


def _dataloader(*, loaders, total, dl_ns, n_steps, **_):
    share = dl_ns / total
    if share < DATALOADER_SHARE or not loaders:
        return None
    settings = loaders[0].args or {}
    workers = settings.get("num_workers", 0)
    collate_ns = sum(e.args.get("collate_ns", 0) for e in loaders)
    k = max(2, min(4, cores()))
    split = ""
    if workers == 0:
        split = (f"; of the loading, collate_fn took {_pct(collate_ns / dl_ns)} and "
                 f"fetching the samples {_pct(1 - collate_ns / dl_ns)}")
        fix = (f"DataLoader(..., num_workers={k}, persistent_workers=True): batches are "
               "loaded in worker processes while the step computes")
        if collate_ns > dl_ns / 2:
            fix += ("; and collation is most of it: keep samples as tensors of one shape "
                    "(default_collate stacks those in one copy) or stack once ahead of "
                    "time (TensorDataset)")
        else:
            fix += ("; and fetching is most of it: a dataset that answers a whole batch "
                    "at once (__getitems__, or a TensorDataset) skips the per-sample calls")
        new = max(total - dl_ns, dl_ns / k)
    else:
        fix = (f"more workers (num_workers={workers} now) or less work per sample in "
               "__getitem__ / collate_fn (decode or augment once, ahead of time)")
        new = max(total - dl_ns, dl_ns * workers / (workers + k))
    return Finding(
        "dataloader", f"waiting for DataLoader batches took {_pct(share)} of the step "
        f"({dl_ns / n_steps / 1e6:.2f} ms of {total / n_steps / 1e6:.2f} ms; "
        f"num_workers={workers}, pin_memory={settings.get('pin_memory', False)}){split}",
        "the model computes nothing while the loop waits for the next batch",
        fix, f"step time down to about {new / total:.0%} of now ({1 - new / total:.0%} "
        "faster) when loading overlaps with the step", share,
        {"dataloader_ms_per_step": dl_ns / n_steps / 1e6, "num_workers": workers,
         "collate_ms_per_step": collate_ns / n_steps / 1e6})


def _threads_check(*, rec, ops, total, n_steps, **_):
    threads = _threads()["blas"]
    n_cores, load = cores(), _load()
    others = max(0.0, load - 1.0)           # this process runs about one thread's worth
    suggest = max(1, min(n_cores, int(n_cores - others + 0.5)))
    if threads <= suggest:
        return None
    blas = [e for e in ops if e.name in BLAS_OPS and e.device == "cpu"]
    if not blas:
        return None
    key, sample = _heaviest(blas, rec)
    if sample is None:
        return None
    from threadpoolctl import threadpool_limits
    kernel, attrs, natives = sample
    with threadpool_limits(limits=threads, user_api="blas"):
        t_now = _time(kernel, attrs, natives)
    with threadpool_limits(limits=suggest, user_api="blas"):
        t_new = _time(kernel, attrs, natives)
    with threadpool_limits(limits=threads, user_api="blas"):
        t_now = min(t_now, _time(kernel, attrs, natives))
    blas_ns = sum(e.end_ns - e.start_ns for e in blas)
    share = blas_ns / total
    saved = share * (1 - t_new / t_now)
    # a tiny op's time is noise on a busy machine (and BLAS runs it on one thread anyway):
    # a change is reported when it saves a real fraction of a real op
    if t_now < 50e-6 or saved < THREAD_GAIN * share or saved < 0.02 or \
            saved * total / n_steps < 200_000:
        return None
    return Finding(
        "threads", f"{threads} BLAS threads on {n_cores} cores with a load average of "
        f"{load:.1f} (other work on about {others:.1f} cores); BLAS ops take {_pct(share)} "
        f"of the step; {key[0]} {key[1]} measured now: {t_now * 1e3:.2f} ms with {threads} "
        f"threads, {t_new * 1e3:.2f} ms with {suggest}",
        "more threads than free cores make the threads wait for each other and for the "
        "other programs (oversubscription)",
        f"ember.set_num_threads({suggest}) at the start of the program (or "
        f"OMP_NUM_THREADS={suggest})", f"about {_pct(saved)} of the step time "
        f"({key[0]} {t_now / t_new:.1f}x faster)", saved,
        {"threads": threads, "suggested": suggest, "cores": n_cores, "load": load,
         "op_ms_now": t_now * 1e3, "op_ms_suggested": t_new * 1e3})


def _fallback(*, rec, ops, total, n_steps, **_):
    if not rec.fallbacks:
        return None
    slow = [e for e in ops if "_cpu_fallback" in (e.kernel or "")]
    ns = sum(e.end_ns - e.start_ns for e in slow)
    names = ", ".join(f"{op} on {dev} ({n}x)" for (op, dev), n in rec.fallbacks.items())
    return Finding(
        "cpu-fallback", f"ops ran on the CPU with host copies: {names}; "
        f"{_pct(ns / total)} of the step", "every fallback copies its inputs to the host "
        "and its result back, and the device waits", "run those ops on a device that has "
        "them (see `ember ops`), or keep that part of the model on the CPU", f"up to "
        f"{_pct(ns / total)} of the step time", ns / total,
        {"fallbacks": {f"{k[0]}@{k[1]}": v for k, v in rec.fallbacks.items()}})


def _float64(*, rec, ops, total, n_steps, **_):
    f64 = [e for e in ops if "float64" in (e.input_dtypes or ())]
    ns = sum(e.end_ns - e.start_ns for e in f64)
    share = ns / total
    if share < 0.10:
        return None
    import numpy as np
    key, sample = _heaviest(f64, rec)
    ratio = None
    if sample is not None:
        kernel, attrs, natives = sample
        f32 = [x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype == np.float64
               else x for x in natives]
        try:
            ratio = _time(kernel, attrs, natives) / _time(kernel, attrs, f32)
        except Exception:  # noqa: BLE001  (a kernel that refuses float32 inputs)
            ratio = None
    gain = share * (1 - 1 / ratio) if ratio else share / 2
    return Finding(
        "float64", f"ops on float64 take {_pct(share)} of the step" + (
            f"; {key[0]} {key[1]} measured {ratio:.1f}x faster in float32" if ratio else ""),
        "float64 halves the numbers per cache line and per SIMD lane; training rarely "
        "needs it (NumPy arrays are float64 by default)",
        "model.float() and x.float() (or ember.set_default_dtype(ember.float32)); "
        "from_numpy(a.astype('float32'))", f"about {_pct(gain)} of the step time",
        gain, {"float64_share": share, "measured_ratio": ratio})


LOW = ("float16", "bfloat16")


def _low_precision_cpu(*, rec, ops, total, n_steps, **_):
    """autocast (or a half-precision model) on the CPU: measured against float32.  The CPU
    backend has no faster float16/bfloat16 BLAS (amp_policy.py): bfloat16 products are
    float32 products between casts, float16 ones NumPy's float16 loops."""
    low = [e for e in ops if e.device == "cpu" and e.name in BLAS_OPS
           and any(d in LOW for d in (e.input_dtypes or ()))]
    if not low:
        return None
    casts = [e for e in ops if e.device == "cpu" and e.name == "cast"]
    cast_ns = sum(e.end_ns - e.start_ns for e in casts)
    low_ns = sum(e.end_ns - e.start_ns for e in low)
    import numpy as np
    key, sample = _heaviest(low, rec)
    t_low = t_32 = None
    if sample is not None:
        kernel, attrs, natives = sample
        wide = [x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype.kind == "f"
                and x.dtype.itemsize == 2 else x for x in natives]
        t_low = _time(kernel, attrs, natives)
        t_32 = _time(kernel, attrs, wide)
        t_low = min(t_low, _time(kernel, attrs, natives))
    blas_gain = low_ns / total * max(0.0, 1 - t_32 / t_low) if t_low else 0.0
    gain = blas_gain + cast_ns / total
    if gain < 0.10:
        return None
    dtype = next(d for d in key[2] if d in LOW)
    measured = (f"{len(low) // n_steps} products a step ran in {dtype} on the CPU "
                f"({_pct(low_ns / total)} of the step) and casts took "
                f"{_pct(cast_ns / total)}")
    if t_low:
        measured += (f"; {key[0]} {list(map(list, key[1]))} measured now: "
                     f"{t_low * 1e3:.2f} ms as run, {t_32 * 1e3:.2f} ms in float32")
    return Finding(
        "autocast-cpu", measured,
        "the CPU has no faster half-precision BLAS here: bfloat16 products are computed "
        "in float32 between casts, float16 products by NumPy's float16 loops (many times "
        "slower than float32 BLAS); autocast pays on GPUs, not on this CPU",
        "run the CPU step in float32: leave out ember.autocast('cpu', ...) (keep "
        "autocast(device_type='cuda') for GPU runs) or call model.float()",
        f"about {_pct(gain)} of the step time", gain,
        {"low_precision_share": low_ns / total, "cast_share": cast_ns / total,
         "op_ms_as_run": t_low and t_low * 1e3, "op_ms_float32": t_32 and t_32 * 1e3},
    )


def _host_bound(*, ops, total, op_ns, host_ns, compute_ns, busy, n_steps, **_):
    per_step = len(ops) / n_steps
    kernel_share = op_ns / compute_ns
    share = host_ns / max(busy, 1)
    if kernel_share >= HOST_SHARE or per_step < MIN_OPS or share < HOST_MIN_SHARE:
        return None
    replayed = sum(e.kernel == "ember.compile replay" for e in ops) / max(len(ops), 1)
    fix = ("step = ember.compile(step) (the step replays its kernels without Python "
           "dispatch), or larger batches / fewer, larger ops")
    if replayed > 0.5:
        fix = ("larger batches or fewer, larger ops: the step is compiled already, and what "
               "is left is one Python call per replayed kernel of a few elements")
    mean_us = op_ns / max(len(ops), 1) / 1e3   # robust (median-based) kernel time per op
    return Finding(
        "host-bound", f"the kernels ran {_pct(kernel_share)} of the compute time; "
        f"{_pct(share)} of the step is Python and dispatch around {per_step:.0f} small ops "
        f"per step (a kernel takes {mean_us:.1f} us on average, the dispatch around it "
        f"{host_ns / max(len(ops), 1) / 1e3:.1f} us)",
        "each op pays a fixed cost in Python (checks, dispatch, autograd recording) larger "
        "than its kernel; the device, or the CPU's vector units, mostly wait",
        fix, f"up to {_pct(share)} of the step time (the dispatch share)", share,
        {"kernel_share_of_compute": kernel_share, "ops_per_step": per_step,
         "mean_kernel_us": mean_us, "replayed_share": replayed})


def _device_idle(*, kernels, total, n_steps, **_):
    if not kernels:
        return None
    busy = sum(e.end_ns - e.start_ns for e in kernels)
    idle = 1 - busy / total
    if idle < 0.5:
        return None
    delay = sum(e.args.get("queue delay us", 0) for e in kernels) / len(kernels)
    return Finding(
        "device-idle", f"the device ran kernels {_pct(busy / total)} of the step and was "
        f"idle {_pct(idle)}; a kernel waited {delay:.1f} us in the queue on average",
        "a short queue delay with an idle device means the device waits for the host to "
        "enqueue work", "step = ember.compile(step) (replays the recorded launches), larger "
        "batches, or fewer host reads (.item(), .cpu()) inside the step",
        f"up to {_pct(idle)} of the step time", idle,
        {"device_busy_share": busy / total, "mean_queue_delay_us": delay})
