"""`ember demo`: train a small CNN on the bundled 8x8 digits, on any device, with checkpoints.

The data: the 1,797 UCI handwritten digits shipped in ember.data (CC BY 4.0), pixels 0..16
scaled to 0..1, split once into 1,437 training and 360 test images by a fixed seed.  The
run is deterministic for a given --seed: the weights start from ember.manual_seed(seed) and
epoch e shuffles with a generator seeded from (seed, e), so a run resumed from the
checkpoint of epoch k ends exactly where an uninterrupted run ends.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict, dataclass, field

CHECKPOINT_KIND = "ember-demo/1"
SPLIT_SEED = 1797                  # the train/test split never changes with --seed
TEST_SIZE = 360
DEFAULTS = {"epochs": 15, "seed": 0, "batch_size": 32, "lr": 3e-3}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default=None,
                        help="cpu, cuda, cuda:1, opencl:0, auto, ... (default: ember's "
                             "default device, EMBER_DEVICE if set, else cpu)")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"total epochs to train to (default {DEFAULTS['epochs']})")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"seed of the weights and the shuffling (default {DEFAULTS['seed']})")
    parser.add_argument("--batch-size", type=int, default=None,
                        help=f"images per step (default {DEFAULTS['batch_size']})")
    parser.add_argument("--lr", type=float, default=None,
                        help=f"Adam learning rate (default {DEFAULTS['lr']})")
    parser.add_argument("--checkpoint", default="ember-demo.ckpt", metavar="PATH",
                        help="where to save a checkpoint after every epoch "
                             "(default ./ember-demo.ckpt)")
    parser.add_argument("--no-checkpoint", action="store_true", help="save no checkpoint")
    parser.add_argument("--resume", action="store_true",
                        help="continue from --checkpoint (same seed, batch size and lr)")
    parser.add_argument("--compare", action="store_true",
                        help="train on every available device and compare them side by side")
    parser.add_argument("--compile", action="store_true",
                        help="train with the step compiled by ember.compile (captured once, "
                             "then replayed without Python dispatch; Adam capturable)")
    parser.add_argument("--nproc", type=int, default=1, metavar="N",
                        help="train data-parallel on N processes (through `ember run -n N`; "
                             "--batch-size is the global batch, split over them)")


@dataclass(frozen=True)
class Config:
    epochs: int = DEFAULTS["epochs"]
    seed: int = DEFAULTS["seed"]
    batch_size: int = DEFAULTS["batch_size"]
    lr: float = DEFAULTS["lr"]


@dataclass(frozen=True)
class EpochStats:
    epoch: int
    loss: float
    train_accuracy: float
    test_accuracy: float
    seconds: float


@dataclass
class Result:
    device: str
    history: list = field(default_factory=list)   # EpochStats, including resumed epochs
    resumed_from: int = 0
    test_correct: int = 0
    test_total: int = 0

    @property
    def test_accuracy(self) -> float:
        return self.history[-1].test_accuracy if self.history else float("nan")

    @property
    def seconds_per_epoch(self) -> float:
        """The median epoch of this process (a resumed run's earlier epochs are history):
        the first epoch carries the device's one-off program builds, which a mean would
        spread over every epoch."""
        ran = sorted(h.seconds for h in self.history[self.resumed_from:])
        if not ran:
            return float("nan")
        mid = len(ran) // 2
        return ran[mid] if len(ran) % 2 else (ran[mid - 1] + ran[mid]) / 2


class DemoError(Exception):
    """A demo run that cannot start: a bad option or checkpoint (exit code 2)."""


# --- data and model ------------------------------------------------------------------------

def load_digits():
    """(images float32 (1797, 1, 8, 8) in 0..1, labels int64 (1797,)) from the package data."""
    import importlib.resources
    import io

    import numpy as np
    raw = importlib.resources.files("ember.data").joinpath("digits.npz").read_bytes()
    with np.load(io.BytesIO(raw), allow_pickle=False) as data:
        images, labels = data["images"], data["labels"]
    return (images.astype(np.float32) / 16.0)[:, None], labels.astype(np.int64)


def build_model():
    """Two 3x3 conv blocks and a linear classifier: 5,994 parameters."""
    import ember.nn as nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),     # 16 x 4 x 4
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 32 x 2 x 2
        nn.Flatten(), nn.Linear(128, 10))


def _split(n: int):
    import ember
    from ember.utils.data import random_split
    train, test = random_split(range(n), [n - TEST_SIZE, TEST_SIZE],
                               generator=ember.Generator().manual_seed(SPLIT_SEED))
    return train.indices, test.indices


# --- training ------------------------------------------------------------------------------

class Reporter:
    """What a training run tells its watcher; the CLI draws it with rich, tests ignore it."""

    def epoch_started(self, epoch: int, epochs: int, batches: int) -> None: ...

    def batch_done(self, loss: float) -> None: ...

    def epoch_done(self, stats: EpochStats, epochs: int) -> None: ...


def train(config: Config, device, *, checkpoint: str | None = None, state: dict | None = None,
          reporter: Reporter | None = None, compiled: bool = False) -> Result:
    """Train (or continue training from a loaded checkpoint `state`) to config.epochs."""
    import ember
    import ember.nn as nn
    import ember.optim
    from ember.utils.data import DataLoader, TensorDataset

    reporter = reporter or Reporter()
    device = ember.device(device) if device is not None else ember.get_default_device()
    parallel = _parallel(config)                 # (rank, size) in a data-parallel job
    images, labels = load_digits()
    train_idx, test_idx = _split(len(labels))
    x_train = ember.tensor(images[train_idx], device=device)
    y_train = ember.tensor(labels[train_idx], device=device)
    x_test = ember.tensor(images[test_idx], device=device)
    y_test = ember.tensor(labels[test_idx], device=device)
    train_set = TensorDataset(x_train, y_train)

    ember.manual_seed(config.seed)
    model = build_model().to(device)            # built on the CPU: the same start everywhere
    net = model
    if parallel:
        from ember.nn.parallel import DistributedDataParallel
        net = DistributedDataParallel(model)
    # capturable: the step count lives in a tensor, so a compiled step replays it right
    optimizer = ember.optim.Adam(model.parameters(), lr=config.lr, capturable=compiled)
    loss_fn = nn.CrossEntropyLoss()

    def step(xb, yb):
        logits = net(xb)
        loss = loss_fn(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach(), (logits.detach().argmax(1) == yb).sum()
    if compiled:
        step = ember.compile(step)
    result = Result(str(device))
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        result.history = [EpochStats(**h) for h in state["history"]]
        result.resumed_from = len(result.history)

    for epoch in range(result.resumed_from, config.epochs):
        start = time.perf_counter()
        order = ember.Generator().manual_seed(config.seed * 1_000_003 + epoch)
        if parallel:
            from ember.utils.data import DistributedSampler
            sampler = DistributedSampler(train_set, seed=config.seed * 1_000_003)
            sampler.set_epoch(epoch)
            loader = DataLoader(train_set, batch_size=config.batch_size // parallel[1],
                                sampler=sampler)
        else:
            loader = DataLoader(train_set, batch_size=config.batch_size, shuffle=True,
                                generator=order)
        reporter.epoch_started(epoch + 1, config.epochs, len(loader))
        model.train()
        total_loss = correct = seen = 0
        for xb, yb in loader:
            loss, right = step(xb, yb)
            value = loss.item()
            total_loss += value * len(yb)
            correct += int(right.item())
            seen += len(yb)
            reporter.batch_done(value)
        if parallel:                # the epoch's figures over every rank's share
            total_loss, correct, seen = _summed(total_loss, correct, seen)
        model.eval()
        with ember.no_grad():
            test_correct = int((model(x_test).argmax(1) == y_test).sum().item())
        stats = EpochStats(epoch + 1, total_loss / seen, correct / seen,
                           test_correct / len(y_test), time.perf_counter() - start)
        result.history.append(stats)
        result.test_correct, result.test_total = test_correct, len(y_test)
        if checkpoint is not None and (not parallel or parallel[0] == 0):
            ember.save({"kind": CHECKPOINT_KIND, "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(), "epoch": epoch + 1,
                        "seed": config.seed, "batch_size": config.batch_size,
                        "lr": config.lr, "history": [asdict(h) for h in result.history]},
                       checkpoint)
        reporter.epoch_done(stats, config.epochs)
    if result.resumed_from >= config.epochs:    # nothing left to train: report the model
        with ember.no_grad():
            model.eval()
            result.test_correct = int((model(x_test).argmax(1) == y_test).sum().item())
            result.test_total = len(y_test)
    return result


def _parallel(config: Config):
    """(rank, world size) when this process is a rank of a data-parallel job, else None."""
    import ember.distributed as dist
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return None
    size = dist.get_world_size()
    if config.batch_size % size:
        raise DemoError(f"--batch-size {config.batch_size} does not split over {size} "
                        f"processes; pass a multiple of {size}")
    return dist.get_rank(), size


def _summed(*values: float) -> list:
    import ember
    import ember.distributed as dist
    totals = ember.tensor([float(v) for v in values], dtype=ember.float64)
    dist.all_reduce(totals)
    return totals.tolist()


def _launch(args: argparse.Namespace) -> int:
    """`ember demo --nproc N` outside a job: start one (`ember run -n N`) running this."""
    from . import run as launcher
    argv = []
    for flag in ("device", "epochs", "seed", "batch_size", "lr", "checkpoint"):
        value = getattr(args, flag)
        if value is not None:
            argv += ["--" + flag.replace("_", "-"), str(value)]
    argv += [f"--{flag}" for flag in ("no-checkpoint", "resume")
             if getattr(args, flag.replace("-", "_"))]
    job = argparse.Namespace(nproc=args.nproc, timeout=None, debug=False, hosts=None,
                             mpiexec=None, module=True, target="ember.tools.demo",
                             args=[*argv, "--nproc", str(args.nproc)])
    return launcher.run(job)


def resume_config(args: argparse.Namespace, path: str, device) -> tuple[Config, dict]:
    """The checkpoint at path and the run's config: the options it was trained with,
    which the command line may repeat but not change (else the run would not continue)."""
    import ember
    from ember.errors import EmberError
    try:
        state = ember.load(path, map_location=device)
    except EmberError as exc:
        if "no file at" in str(exc):
            raise DemoError(f"no checkpoint at {path} to resume from; run `ember demo` "
                            "without --resume first (or pass --checkpoint PATH)") from None
        raise DemoError(str(exc)) from None
    if not isinstance(state, dict) or state.get("kind") != CHECKPOINT_KIND:
        raise DemoError(f"{path} is an ember checkpoint but not one of `ember demo` "
                        f"(kind {state.get('kind') if isinstance(state, dict) else None!r}, "
                        f"expected {CHECKPOINT_KIND!r}); pass --checkpoint PATH to the "
                        "demo's own file")
    for option in ("seed", "batch_size", "lr"):
        given = getattr(args, option)
        if given is not None and given != state[option]:
            flag = "--" + option.replace("_", "-")
            raise DemoError(f"{path} was trained with {flag} {state[option]}, got {flag} "
                            f"{given}; drop {flag} to continue it, or start a new run "
                            "without --resume")
    epochs = args.epochs if args.epochs is not None else max(DEFAULTS["epochs"], state["epoch"])
    return Config(epochs, state["seed"], state["batch_size"], state["lr"]), state


def _config(args: argparse.Namespace) -> Config:
    values = {k: getattr(args, k) for k in DEFAULTS if getattr(args, k) is not None}
    config = Config(**{**DEFAULTS, **values})
    if config.epochs < 1 or config.batch_size < 1 or config.lr <= 0:
        raise DemoError(f"--epochs and --batch-size must be >= 1 and --lr > 0; got epochs="
                        f"{config.epochs}, batch size={config.batch_size}, lr={config.lr}")
    return config


# --- the command -----------------------------------------------------------------------------

class _RichReporter(Reporter):
    def __init__(self, progress, console, label: str = ""):
        self.progress, self.console, self.label = progress, console, label
        self.task = None

    def epoch_started(self, epoch, epochs, batches):
        self.task = self.progress.add_task(f"{self.label}epoch {epoch}/{epochs}",
                                           total=batches, loss=float("nan"))

    def batch_done(self, loss):
        self.progress.update(self.task, advance=1, loss=loss)

    def epoch_done(self, stats, epochs):
        self.progress.remove_task(self.task)
        width = len(str(epochs))
        self.console.print(
            f"{self.label}epoch {stats.epoch:>{width}}/{epochs}  loss {stats.loss:.4f}  "
            f"train {stats.train_accuracy:6.2%}  test {stats.test_accuracy:6.2%}  "
            f"{stats.seconds:.2f} s")


def _progress(console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn(),
                    console=console, transient=True)


def _epochs(n: int) -> str:
    return f"{n} epoch{'' if n == 1 else 's'}"


def _device_name(device) -> str:
    try:
        infos = device.backend.devices()
        info = next((i for i in infos if i.index == device.index), infos[0])
        return info.name
    except Exception:  # noqa: BLE001  (a name is decoration; the run must not fail on it)
        return ""


def run(args: argparse.Namespace) -> int:
    import ember
    from ember.errors import EmberError
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    nproc = getattr(args, "nproc", 1)
    if nproc > 1:
        import ember.distributed as dist
        from ember.distributed.group import launch_env
        launch = launch_env()
        if launch is None or launch.size != nproc:
            if args.compare:
                errors.print("ember demo: --compare and --nproc do not go together",
                             markup=False)
                return 2
            return _launch(args)
        dist.init_process_group()
        if dist.get_rank() != 0:                # rank 0 tells; the others train quietly
            console = Console(quiet=True)
    try:
        if args.compare:
            if args.resume:
                raise DemoError("--compare trains from scratch on every device; drop --resume")
            return _compare(_config(args), console)
        device = ember.device(args.device) if args.device else ember.get_default_device()
        device = device.concrete() if device.type != "cpu" else device
        checkpoint = None if args.no_checkpoint else args.checkpoint
        state = None
        if args.resume:
            if checkpoint is None:
                raise DemoError("--resume needs a checkpoint; drop --no-checkpoint")
            config, state = resume_config(args, checkpoint, device)
        else:
            config = _config(args)
        if args.compile and nproc > 1:
            raise DemoError("--compile and --nproc do not go together yet: a captured step "
                            "cannot replay the collectives")
        return _single(config, device, checkpoint, state, console, args.compile)
    except (DemoError, EmberError) as exc:
        errors.print(f"ember demo: {exc}", markup=False)
        return 2
    except KeyboardInterrupt:
        errors.print("ember demo: interrupted" + (
            f"; continue with `ember demo --resume --checkpoint {args.checkpoint}`"
            if not args.no_checkpoint and not args.compare else ""), markup=False)
        return 130


def _single(config: Config, device, checkpoint, state, console, compiled=False) -> int:
    name = _device_name(device)
    import ember.distributed as dist
    procs = dist.get_world_size() if dist.is_initialized() else 1
    console.print(f"ember demo: a CNN on the UCI 8x8 digits, on {device}"
                  f"{f' ({name})' if name else ''}"
                  f"{f', data-parallel on {procs} processes' if procs > 1 else ''}; "
                  f"seed {config.seed}, batch size "
                  f"{config.batch_size}, Adam lr {config.lr}, {_epochs(config.epochs)}"
                  f"{', compiled (ember.compile)' if compiled else ''}")
    if state is not None:
        console.print(f"resuming from {checkpoint} after epoch {len(state['history'])}")
    start = time.perf_counter()
    with _progress(console) as progress:
        result = train(config, device, checkpoint=checkpoint, state=state,
                       reporter=_RichReporter(progress, console), compiled=compiled)
    total = time.perf_counter() - start
    ran = len(result.history) - result.resumed_from
    console.print(
        f"[bold]final test accuracy {result.test_correct / result.test_total:.2%}[/bold] "
        f"({result.test_correct}/{result.test_total}) after {_epochs(len(result.history))}"
        + (f"; median {result.seconds_per_epoch:.2f} s/epoch (first "
           f"{result.history[result.resumed_from].seconds:.2f} s), {total:.1f} s in all"
           if ran else ""))
    if checkpoint is not None and ran:
        console.print(f"checkpoint: {checkpoint} (continue with `ember demo --resume"
                      f"{'' if checkpoint == 'ember-demo.ckpt' else ' --checkpoint ' + checkpoint}"
                      f" --epochs {config.epochs + 5}`)", markup=False)
    return 0


def _compare(config: Config, console) -> int:
    import ember
    from ember.errors import EmberError
    from rich.table import Table

    rows = []
    with _progress(console) as progress:
        for device in ember.devices():
            label = f"{device}: "
            try:
                result = train(config, device, reporter=_RichReporter(progress, console, label))
            except EmberError as exc:
                rows.append((str(device), _device_name(device), f"failed: {exc}", "", ""))
                continue
            first = result.history[0].seconds
            rest = result.history[1:]
            steady = sum(h.seconds for h in rest) / len(rest) if rest else first
            rows.append((str(device), _device_name(device),
                         f"{result.test_accuracy:.2%}", f"{steady:.2f} s", f"{first:.2f} s"))
    table = Table(title=f"ember demo --compare: {_epochs(config.epochs)}, seed {config.seed}")
    for column in ("device", "name", "test accuracy", "time/epoch", "first epoch"):
        table.add_column(column, justify="left" if column in ("device", "name") else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print("time/epoch excludes the first epoch, which includes kernel builds and "
                  "warm-up")
    return 0 if all(not r[2].startswith("failed") for r in rows) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="ember demo")
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
