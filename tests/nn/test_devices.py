"""nn and optim on every available device: the same training run as on the CPU."""
from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np
import pytest
from ember.testing import devices_under_test
from nn_helpers import device_params, rng, to_numpy

DEVICES = [(d, reason) for d, reason in devices_under_test() if not d.startswith("cpu")]


def _model():
    # no conv bias before BatchNorm: its gradient is rounding noise, which Adam would amplify
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10))


def _run(model, device, x, y, steps=5):
    ember.manual_seed(11)            # the same dropout masks on every device
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    sched = optim.lr_scheduler.StepLR(opt, 2, 0.5)
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss(label_smoothing=0.1)(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.item()))
    return np.array(losses)


@pytest.mark.parametrize("device,reason", DEVICES or [("none", "no device besides the CPU")],
                         ids=[d for d, _ in DEVICES] or ["none"])
def test_training_on_device_matches_cpu(device, reason):
    if reason is not None:
        pytest.skip(reason)
    ember.manual_seed(0)
    cpu_model = _model()
    dev_model = _model()
    dev_model.load_state_dict(cpu_model.state_dict())
    weight = dev_model[0].weight
    assert dev_model.to(device) is dev_model and dev_model[0].weight is weight
    assert all(str(t.device) == device for t in dev_model.state_dict().values())
    x, y = ember.randn(16, 1, 8, 8), ember.randint(0, 10, (16,))
    expected = _run(cpu_model, "cpu", x, y)
    got = _run(dev_model, device, x, y)
    np.testing.assert_allclose(got, expected, rtol=1e-4)
    back = _model().load_state_dict(dev_model.state_dict())      # device -> CPU copy
    assert back.missing_keys == [] and back.unexpected_keys == []
    dev_model.cpu()
    for (name, p), q in zip(dev_model.named_parameters(), cpu_model.parameters()):
        assert str(p.device) == "cpu"
        np.testing.assert_allclose(to_numpy(p), to_numpy(q), rtol=1e-3, atol=1e-5,
                                   err_msg=name)


@pytest.mark.parametrize("device", device_params())
def test_pixel_shuffle_interpolate_dropout2d_on_device(device):
    r = rng("extra layers device")
    x = r.standard_normal((2, 8, 3, 3)).astype(np.float32)
    cpu = F.pixel_shuffle(ember.tensor(x), 2)
    dev_in = ember.tensor(x, device=device, requires_grad=True)
    dev = F.pixel_shuffle(dev_in, 2)
    np.testing.assert_array_equal(to_numpy(dev.to("cpu")), to_numpy(cpu))
    dev.sum().backward()
    np.testing.assert_array_equal(to_numpy(dev_in.grad.to("cpu")), np.ones_like(x))
    up = F.interpolate(dev_in, scale_factor=2, mode="bilinear")
    want = F.interpolate(ember.tensor(x), scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(to_numpy(up.detach().to("cpu")), to_numpy(want), rtol=1e-5,
                               atol=1e-6)
    ember.manual_seed(2)
    a = F.dropout2d(ember.tensor(x) + 5.0, 0.5)
    ember.manual_seed(2)
    b = F.dropout2d(ember.tensor(x, device=device) + 5.0, 0.5)   # the same host stream
    np.testing.assert_allclose(to_numpy(b.to("cpu")), to_numpy(a), rtol=1e-6)
