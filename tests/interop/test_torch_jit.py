"""torch.jit's Python-side API, torch.version and torch's top-level autocast queries, through
ember.torch_alias against PyTorch itself: one script, run by `python -m ember.torch_alias`
and by plain Python with torch installed, must print the same values (scripted and traced
functions and modules compute what the Python code computes; the decorators, annotate,
Final, fork/wait, a ScriptModule subclass with script_method); then what ember refuses
(TorchScript archives and IR) says so and names the fix."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json
    from typing import List
    import torch
    import torch.nn as nn

    torch.manual_seed(0)

    @torch.jit.script
    def scaled(x, k: int):
        return x * k + 1

    class Net(nn.Module):
        limit: torch.jit.Final[int]

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.limit = 4

        @torch.jit.ignore
        def debug(self, x):
            return x.sum()

        @torch.jit.export
        def twice(self, x):
            return self.forward(x) * 2

        def forward(self, x):
            if torch.jit.is_scripting() or torch.jit.is_tracing():
                pass
            return torch.relu(self.fc(x))

    class Old(torch.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(3))

        @torch.jit.script_method
        def forward(self, x):
            return x * self.w

    @torch.jit.unused
    def never(x):
        return x

    x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]])
    net = Net()
    with torch.no_grad():
        net.fc.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.3, 0.2, -0.1]]))
        net.fc.bias.copy_(torch.tensor([0.05, -0.05]))
    eager = net(x)
    scripted = torch.jit.script(net)
    seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())   # torch cannot trace a scripted class
    seq[0].load_state_dict(net.fc.state_dict())
    traced = torch.jit.trace(seq, x)
    traced_fn = torch.jit.trace(lambda a: a.exp().sum(), (x,))
    fut = torch.jit.fork(torch.add, x, 1.0)
    out = {
        "scaled": scaled(x, 3).tolist(),
        "eager": eager.tolist(),
        "scripted": scripted(x).tolist(),
        "traced": traced(x).tolist(),
        "twice": scripted.twice(x).tolist(),
        "traced_fn": round(float(traced_fn(x)), 5),
        "keys": sorted(scripted.state_dict().keys()),
        "is_module": isinstance(scripted, nn.Module),
        "old": Old()(x).tolist(),
        "old_params": [n for n, _ in Old().named_parameters()],
        "old_is_module": isinstance(Old(), nn.Module),
        "fork": torch.jit.wait(fut).tolist(),
        "annotate": torch.jit.annotate(List[int], []),
        "flags": [torch.jit.is_scripting(), torch.jit.is_tracing()],
        "grad_flows": scripted(x).sum().backward() is None and net.fc.weight.grad is not None,
        "version": [torch.version.cuda, torch.version.hip, isinstance(torch.version.debug, bool)],
        "autocast": [torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"),
                     torch.amp.is_autocast_available("cpu")],
    }
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out["autocast_inside"] = [torch.is_autocast_enabled("cpu"),
                                  str(torch.get_autocast_dtype("cpu"))]
    print(json.dumps(out))
''')


def _run(argv, path):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    env.pop("EMBER_DEVICE", None)
    proc = subprocess.run([sys.executable, *argv, str(path)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_jit_version_and_autocast_queries_as_torch(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "jit.py"
    script.write_text(SCRIPT)
    ours = _run(["-m", "ember.torch_alias"], script)
    theirs = _run([], script)
    assert ours["autocast_inside"][1] == "ember.bfloat16"
    ours["autocast_inside"][1] = theirs["autocast_inside"][1]
    for key in ("eager", "scripted", "traced", "twice", "scaled", "fork", "old"):
        ours[key] = [[round(v, 5) for v in row] for row in ours[key]]
        theirs[key] = [[round(v, 5) for v in row] for row in theirs[key]]
    assert ours == theirs


def test_what_torchscript_alone_has_is_refused_with_the_fix(tmp_path):
    import ember
    from ember import nn
    from ember.errors import NotInEmberError
    model = ember.jit.script(nn.Linear(2, 2))
    for call in (lambda: model.save(str(tmp_path / "m.pt")),
                 lambda: ember.jit.save(model, str(tmp_path / "m.pt")),
                 lambda: ember.jit.load(str(tmp_path / "m.pt")),
                 lambda: model.graph, lambda: model.code):
        with pytest.raises(NotInEmberError) as info:
            call()
        assert "TorchScript is not in ember" in str(info.value)
        assert "ember." in str(info.value)                   # the fix names what to use
    assert not (tmp_path / "m.pt").exists()
    with pytest.raises(TypeError, match="example_inputs"):
        ember.jit.trace(nn.Linear(2, 2))
    with pytest.raises(Exception, match="mat1|shape|expected"):
        ember.jit.trace(nn.Linear(2, 2), ember.ones(3, 5))    # the example runs, as torch's
