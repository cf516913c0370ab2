"""`ember demo`: the bundled data, training, checkpoints, --resume, --compare and its errors."""
from __future__ import annotations

import re
import subprocess
import sys
import threading

import ember
import numpy as np
import pytest
from ember.tools.cli import main
from ember.tools.demo import CHECKPOINT_KIND, Config, _split, build_model, load_digits, train


def test_bundled_digits():
    images, labels = load_digits()
    assert images.shape == (1797, 1, 8, 8) and images.dtype == np.float32
    assert images.min() == 0.0 and images.max() == 1.0
    assert labels.dtype == np.int64 and set(np.unique(labels)) == set(range(10))
    assert np.bincount(labels).min() >= 170
    train_idx, test_idx = _split(len(labels))
    assert (len(train_idx), len(test_idx)) == (1437, 360)
    assert sorted(train_idx + test_idx) == list(range(1797))
    assert _split(len(labels)) == (train_idx, test_idx)       # fixed, whatever the seed


def _weights(path):
    return {k: v.numpy() for k, v in ember.load(path, map_location="cpu")["model"].items()}


def test_resume_ends_where_an_uninterrupted_run_ends(tmp_path):
    straight, split = tmp_path / "straight.ckpt", tmp_path / "split.ckpt"
    whole = train(Config(epochs=3, seed=4), "cpu", checkpoint=str(straight))
    train(Config(epochs=2, seed=4), "cpu", checkpoint=str(split))
    state = ember.load(split)
    assert state["kind"] == CHECKPOINT_KIND and state["epoch"] == 2 and state["seed"] == 4
    resumed = train(Config(epochs=3, seed=4), "cpu", checkpoint=str(split), state=state)
    assert resumed.resumed_from == 2 and len(resumed.history) == 3
    assert [h.loss for h in resumed.history] == [h.loss for h in whole.history]
    assert resumed.test_correct == whole.test_correct
    a, b = _weights(straight), _weights(split)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    model = build_model()
    model.load_state_dict(ember.load(split)["model"])        # the checkpoint fits the model


def test_cli_trains_saves_and_resumes(tmp_path, capsys):
    path = str(tmp_path / "demo.ckpt")
    assert main(["demo", "--epochs", "1", "--seed", "2", "--checkpoint", path]) == 0
    out = capsys.readouterr().out
    assert "epoch 1/1" in out and re.search(r"final test accuracy \d+\.\d\d%", out)
    assert ember.load(path)["epoch"] == 1
    assert main(["demo", "--resume", "--epochs", "2", "--checkpoint", path]) == 0
    out = capsys.readouterr().out
    assert "resuming from" in out and "epoch 2/2" in out and "epoch 1/2" not in out
    saved = ember.load(path)
    assert saved["epoch"] == 2 and saved["seed"] == 2 and len(saved["history"]) == 2


def test_cli_errors_say_what_to_do(tmp_path, capsys):
    path = tmp_path / "demo.ckpt"
    assert main(["demo", "--resume", "--checkpoint", str(path)]) == 2
    assert "without --resume first" in capsys.readouterr().err
    ember.save({"kind": "something else"}, path)
    assert main(["demo", "--resume", "--checkpoint", str(path)]) == 2
    assert "not one of `ember demo`" in capsys.readouterr().err
    path.write_bytes(path.read_bytes()[:-3])
    assert main(["demo", "--resume", "--checkpoint", str(path)]) == 2
    assert "not a valid ember checkpoint" in capsys.readouterr().err
    assert main(["demo", "--epochs", "1", "--checkpoint", str(path)]) == 0
    capsys.readouterr()
    assert main(["demo", "--resume", "--lr", "0.5", "--checkpoint", str(path)]) == 2
    assert "drop --lr to continue it" in capsys.readouterr().err
    assert main(["demo", "--compare", "--resume"]) == 2
    assert main(["demo", "--epochs", "0", "--no-checkpoint"]) == 2
    assert "--epochs" in capsys.readouterr().err


def test_compare_lists_every_device(capsys):
    # three steps of 512 per device: the listing is checked, not the training
    assert main(["demo", "--compare", "--epochs", "1", "--batch-size", "512"]) == 0
    out = capsys.readouterr().out
    for device in ember.devices():
        assert re.search(rf"{re.escape(str(device))}\s.*\d+\.\d\d%", out), out


def test_default_device_follows_ember_device(tmp_path, monkeypatch, capsys):
    # EMBER_DEVICE is read where a thread first asks for its default device (the default is
    # per thread, as in PyTorch): a new thread here sees it as a new process would, and
    # reuses the programs this process built (a subprocess built them all again: ~50 s cold)
    device = str(ember.devices()[-1])                   # an accelerator when there is one
    monkeypatch.setenv("EMBER_DEVICE", device)
    monkeypatch.chdir(tmp_path)
    codes = []
    thread = threading.Thread(target=lambda: codes.append(main(
        ["demo", "--epochs", "1", "--batch-size", "512", "--no-checkpoint"])))
    thread.start()
    thread.join()
    out = capsys.readouterr().out
    assert codes == [0] and f"on {device}" in out and "final test accuracy" in out
    assert str(ember.get_default_device()) == "cpu"     # this thread's default stays


@pytest.mark.slow
def test_default_run_reaches_95_percent(tmp_path):
    # the full demo as a user runs it (about 15 epochs; a few seconds on a 2-core CPU)
    out = subprocess.run([sys.executable, "-m", "ember.tools.cli", "demo", "--device", "cpu",
                          "--no-checkpoint"], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout
    accuracy = float(re.search(r"final test accuracy (\d+\.\d+)%", out).group(1))
    assert accuracy >= 95.0, out


def test_summary_reports_the_median_epoch():
    # the first epoch carries the device's program builds: a mean would hide the steady
    # speed behind it (issue 29)
    from ember.tools.demo import EpochStats, Result

    def result(seconds, resumed_from=0):
        r = Result("cpu", resumed_from=resumed_from)
        r.history = [EpochStats(i + 1, 1.0, 0.5, 0.5, s) for i, s in enumerate(seconds)]
        return r
    assert result([20.0, 0.5, 0.4]).seconds_per_epoch == 0.5
    assert result([20.0, 0.5, 0.4, 0.3]).seconds_per_epoch == pytest.approx(0.45)
    assert result([99.0, 3.0, 1.0, 2.0], resumed_from=1).seconds_per_epoch == 2.0
    assert np.isnan(result([]).seconds_per_epoch)
