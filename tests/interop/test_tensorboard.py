"""ember's SummaryWriter (torch.utils.tensorboard) writes the event files PyTorch's writes,
read back with TensorBoard's own loader."""
from __future__ import annotations

import glob
import os

import ember
import numpy as np
import pytest
from ember.errors import NotInEmberError

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    EventFileLoader,
)


def _log(lib, writer_cls, log_dir):
    values = np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32)
    w = writer_cls(log_dir, purge_step=2)
    assert w.get_logdir() == log_dir
    for step in range(3):
        w.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step, walltime=100.0 + step)
        w.add_scalar("lr", 0.1 * step, step, walltime=100.0, new_style=True)
        w.add_scalar("acc", np.float64(0.5), step, walltime=100.0, new_style=True,
                     double_precision=True)
    w.add_scalars("run", {"train": 1.5, "test": lib.tensor(2.5)}, 7, walltime=101.0)
    w.add_histogram("weights", lib.tensor(values), 1, walltime=102.0)
    w.add_histogram("auto", values[:, 0], 1, bins="auto", walltime=102.0)
    w.add_histogram("capped", lib.tensor(values), 1, walltime=102.0, max_bins=7, bins=30)
    w.add_text("note", "hello *ember*", 3, walltime=103.0)
    w.flush()
    w.close()
    w.close()                                # a second close does nothing


def _events(log_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.*"), recursive=True)):
        run = os.path.relpath(os.path.dirname(path), log_dir)
        events = []
        for event in EventFileLoader(path).Load():
            if not event.HasField("summary"):
                event.ClearField("wall_time")    # when the file was opened / purge written
            events.append(event.SerializeToString(deterministic=True))
        out[run] = events
    return out


def test_event_files_match_torch(tmp_path):
    from ember.utils.tensorboard import SummaryWriter
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    _log(ember, SummaryWriter, str(tmp_path / "ember"))
    _log(torch, TorchWriter, str(tmp_path / "torch"))
    ours, theirs = _events(str(tmp_path / "ember")), _events(str(tmp_path / "torch"))
    assert sorted(ours) == sorted(theirs) == [".", "run_test", "run_train"]
    for run in theirs:
        assert len(ours[run]) == len(theirs[run]) > 1
        assert ours[run] == theirs[run], run


def test_what_is_refused(tmp_path):
    from ember.utils.tensorboard import SummaryWriter
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(NotInEmberError, match="add_image"):
            w.add_image("img", ember.zeros(3, 4, 4))
        with pytest.raises(ValueError, match="needs one value"):
            w.add_scalar("x", ember.ones(2))
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", ember.zeros(0))
        with pytest.raises(AttributeError):
            w.no_such_method    # noqa: B018
    assert glob.glob(str(tmp_path / "events.out.*"))
