"""Import paths public code uses, through ember.torch_alias, against PyTorch itself: one
script run by `python -m ember.torch_alias` and by plain Python with torch installed must
print the same: torch.backends.cudnn (its flags: state a CPU-only machine does nothing with,
in both), torch.nn.modules.* (batchnorm, conv, utils, pooling, flatten, ...),
torch.distributions.* as packages, torch.autograd.Variable, torch.nn.parallel's
data_parallel module and function, torch.utils.model_zoo.load_url, torch.distributed.fsdp's
submodules (wrap, api, fully_sharded_data_parallel), and torch.utils.tensorboard (its
SummaryWriter with the tensorboard package, ModuleNotFoundError naming the package without
it, in both)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json, inspect
    import torch
    import torch.backends.cudnn as cudnn
    from torch.backends import cudnn as cudnn2
    import torch.nn as nn
    from torch.nn.modules.batchnorm import _BatchNorm
    from torch.nn.modules.conv import _ConvNd
    from torch.nn.modules.utils import _pair, _single, _triple, _quadruple
    from torch.nn.modules.pooling import MaxPool2d
    from torch.nn.modules.flatten import Flatten
    from torch.nn.modules.module import Module
    from torch.nn.modules.loss import _Loss
    from torch.nn.modules.instancenorm import InstanceNorm2d
    from torch.distributions.normal import Normal
    from torch.distributions.categorical import Categorical
    from torch.distributions.bernoulli import Bernoulli
    from torch.distributions.distribution import Distribution
    import torch.distributions.normal as normal_module
    from torch.autograd import Variable
    from torch.autograd.variable import Variable as Variable2
    from torch.nn.parallel import data_parallel, DataParallel
    from torch.nn.parallel.data_parallel import DataParallel as DataParallel2
    import torch.utils.model_zoo as model_zoo
    import torch.cuda.amp
    import torch.distributed.fsdp as fsdp
    from torch.distributed.fsdp.wrap import (transformer_auto_wrap_policy,
                                             size_based_auto_wrap_policy, ModuleWrapPolicy)
    from torch.distributed.fsdp.api import ShardingStrategy, MixedPrecision, StateDictType
    from torch.distributed.fsdp.fully_sharded_data_parallel import (
        FullyShardedDataParallel as FSDP2, CPUOffload, BackwardPrefetch)

    out = {}
    out["cudnn"] = [cudnn is cudnn2, cudnn.is_available(), cudnn.version(), cudnn.enabled,
                    cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32]
    cudnn.benchmark = True
    cudnn.deterministic = True
    out["cudnn_set"] = [torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic]
    try:
        cudnn.benchmark = 1
        out["cudnn_int"] = "accepted"
    except Exception as exc:
        out["cudnn_int"] = ["error", isinstance(exc, (TypeError, RuntimeError)),
                            "expects a bool" in str(exc)]
    with cudnn.flags(enabled=False, benchmark=False):
        out["cudnn_flags"] = [cudnn.enabled, cudnn.benchmark]
    out["cudnn_after"] = [cudnn.enabled, cudnn.benchmark]
    out["modules"] = [isinstance(nn.BatchNorm2d(3), _BatchNorm),
                      isinstance(nn.Conv2d(1, 1, 1), _ConvNd), _pair(3), _single([4]),
                      _triple(2), _quadruple(1), MaxPool2d is nn.MaxPool2d,
                      Flatten is nn.Flatten, Module is nn.Module,
                      isinstance(nn.MSELoss(), _Loss), InstanceNorm2d is nn.InstanceNorm2d]
    out["distributions"] = [Normal is torch.distributions.Normal,
                            Categorical is torch.distributions.Categorical,
                            Bernoulli is torch.distributions.Bernoulli,
                            issubclass(Normal, Distribution),
                            normal_module.Normal is Normal,
                            inspect.ismodule(torch.distributions.normal),
                            round(float(Normal(0.0, 1.0).log_prob(torch.tensor(0.5))), 5)]
    out["autograd"] = [Variable is Variable2, inspect.isclass(Variable),
                       isinstance(torch.ones(1), Variable)]
    out["parallel"] = [inspect.isfunction(data_parallel), DataParallel is DataParallel2,
                       DataParallel is torch.nn.DataParallel, inspect.isclass(DataParallel)]
    out["model_zoo"] = [callable(model_zoo.load_url),
                        list(inspect.signature(model_zoo.load_url).parameters)]
    out["cuda_amp"] = [inspect.isclass(torch.cuda.amp.autocast),
                       inspect.isclass(torch.cuda.amp.GradScaler)]
    try:
        from torch.utils.tensorboard import SummaryWriter
        out["tensorboard"] = "imported"
    except ImportError as exc:
        out["tensorboard"] = [isinstance(exc, ModuleNotFoundError), exc.name,
                              "tensorboard" in str(exc)]
    out["fsdp"] = [FSDP2 is fsdp.FullyShardedDataParallel,
                   ShardingStrategy is fsdp.ShardingStrategy,
                   MixedPrecision is fsdp.MixedPrecision, CPUOffload is fsdp.CPUOffload,
                   BackwardPrefetch is fsdp.BackwardPrefetch, StateDictType.FULL_STATE_DICT.name,
                   ModuleWrapPolicy({nn.Linear})(module=nn.Linear(2, 2), recurse=False,
                                                  nonwrapped_numel=6),
                   transformer_auto_wrap_policy(nn.Linear(2, 2), False, 6, {nn.Linear}),
                   size_based_auto_wrap_policy(nn.Linear(2, 2), False, 6, min_num_params=5)]
    print(json.dumps(out))
''')


def _run(argv, path):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, *argv, str(path)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_paths_as_torch(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "imports.py"
    script.write_text(SCRIPT)
    ours = _run(["-m", "ember.torch_alias"], script)
    theirs = _run([], script)
    assert ours == theirs
    assert theirs["cudnn"][1] is False                  # a machine without cuDNN, as here


def test_a_tensorboard_package_without_its_protos(tmp_path):
    """A tensorboard package that lacks what the writer needs (a stand-in package here) is
    an ImportError at import naming the fix, so `except ImportError:` fallbacks still run."""
    (tmp_path / "tensorboard").mkdir()
    (tmp_path / "tensorboard" / "__init__.py").write_text("__version__ = '2.20.0'\n")
    code = ("import ember.torch_alias as a; a.install()\n"
            "try:\n    from torch.utils.tensorboard import SummaryWriter\n"
            "except ImportError as exc:\n    print(type(exc).__name__, '|', exc)\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}" + os.environ.get(
        "PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ModuleGapError |")
    assert "pip install -U tensorboard" in proc.stdout


def test_without_tensorboard_the_import_fails_as_in_torch(monkeypatch):
    """No tensorboard package: ModuleNotFoundError naming it and `pip install tensorboard`,
    at import, where PyTorch's fails too."""
    import importlib
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.delitem(sys.modules, "ember.utils.tensorboard", raising=False)
    with pytest.raises(ModuleNotFoundError, match="pip install tensorboard") as info:
        importlib.import_module("ember.utils.tensorboard")
    from ember.errors import EmberError
    assert info.value.name == "tensorboard" and isinstance(info.value, EmberError)


# the small names and legacy aliases public code uses (the census of tools/data): the same
# script through ember.torch_alias and through torch prints the same
ALIASES = textwrap.dedent('''
    import json, inspect, warnings
    import torch
    import torch.nn as nn
    import torch.random
    import torch.distributed as dist
    import torch.utils.backcompat as backcompat
    from torch.utils.data._utils.collate import default_collate, default_convert
    from torch.optim.lr_scheduler import _LRScheduler, LRScheduler
    from torch.nn.modules.module import _IncompatibleKeys
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear
    from torch.nn.modules.lazy import LazyModuleMixin
    from torch.nn.parameter import UninitializedParameter, UninitializedBuffer, is_lazy
    from torch.amp.grad_scaler import GradScaler
    from torch.optim import _multi_tensor

    def name(dtype):                       # "float16" from torch.float16 / ember.float16
        return str(dtype).rsplit(".", 1)[-1]

    def warned(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        return value, [c.category.__name__ for c in caught]

    out = {}
    out["constants"] = [torch.pi, torch.e, str(torch.inf), str(torch.nan), torch.newaxis,
                        list(torch.ones(3)[:, torch.newaxis].shape)]
    out["autocast_dtype"] = [name(warned(torch.get_autocast_gpu_dtype)[0]),
                             warned(torch.get_autocast_gpu_dtype)[1],
                             name(warned(torch.get_autocast_cpu_dtype)[0])]
    warned(lambda: torch.set_autocast_cpu_dtype(torch.float16))
    with torch.autocast("cpu"):
        inner = name(torch.get_autocast_dtype("cpu"))
        out_dtype = name(nn.Linear(2, 2)(torch.ones(1, 2)).dtype)
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.float16):
        with torch.autocast("cpu"):
            nested = name(torch.get_autocast_dtype("cpu"))
    out["autocast_set"] = [inner, out_dtype, nested, name(torch.get_autocast_dtype("cpu"))]
    out["onnx"] = torch.onnx.is_in_onnx_export()
    torch.random.manual_seed(7)
    first = torch.rand(3).tolist()
    torch.random.manual_seed(7)
    with torch.random.fork_rng():
        torch.rand(5)
    with torch.random.fork_rng(enabled=False):
        pass
    out["random"] = [torch.rand(3).tolist() == first, torch.random.initial_seed(),
                     torch.random.manual_seed is torch.manual_seed,
                     torch.random.get_rng_state().dtype == torch.uint8,
                     callable(torch.random.set_rng_state), callable(torch.random.seed)]
    out["collate"] = [default_collate is torch.utils.data.default_collate,
                      default_convert is torch.utils.data.default_convert]
    out["scheduler"] = [issubclass(_LRScheduler, LRScheduler)]
    class Halving(_LRScheduler):          # written against torch < 2.0, as in the wild
        def get_lr(self):
            return [lr * 0.5 ** self.last_epoch for lr in self.base_lrs]

    opt = torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=1.0)
    sched = Halving(opt)
    opt.step()
    sched.step()
    out["scheduler"].append(opt.param_groups[0]["lr"])
    out["keys"] = [_IncompatibleKeys is type(nn.Linear(2, 2).load_state_dict(
        nn.Linear(2, 2).state_dict()))]
    out["linear"] = [issubclass(NonDynamicallyQuantizableLinear, nn.Linear),
                     type(nn.MultiheadAttention(4, 2).out_proj).__name__]
    out["lazy"] = [issubclass(nn.LazyLinear, LazyModuleMixin),
                   isinstance(UninitializedParameter(), nn.Parameter),
                   is_lazy(UninitializedBuffer()), is_lazy(torch.ones(1))]
    out["grad_scaler"] = GradScaler is torch.amp.GradScaler
    auto, categories = warned(lambda: torch.cpu.amp.autocast(dtype=torch.bfloat16))
    with auto:
        cpu_amp = name(nn.Linear(2, 2)(torch.ones(1, 2)).dtype)
    out["cpu_amp"] = [categories, cpu_amp, isinstance(auto, torch.amp.autocast)]
    out["tracer"] = [issubclass(torch.jit.TracerWarning, Warning),
                     callable(torch.jit.TracerWarning.ignore_lib_warnings)]
    out["dist"] = [dist.group.WORLD, dist.GroupMember.WORLD, callable(dist._all_gather_base),
                   str(warned(lambda: dist.reduce_op.SUM)[0]).rsplit(".", 1)[-1],
                   warned(lambda: dist.reduce_op.SUM)[1]]
    multi = [_multi_tensor.Adam, _multi_tensor.AdamW, _multi_tensor.SGD]
    out["multi_tensor"] = [
        [issubclass(c, getattr(torch.optim, n)) for c, n in zip(multi, ["Adam", "AdamW", "SGD"])],
        [c(nn.Linear(2, 2).parameters(), lr=0.1).defaults["foreach"] for c in multi]]
    out["backcompat"] = [backcompat.broadcast_warning.enabled,
                         backcompat.keepdim_warning.enabled]
    backcompat.broadcast_warning.enabled = True
    out["backcompat"].append(backcompat.broadcast_warning.enabled)
    out["oom"] = [issubclass(torch.cuda.OutOfMemoryError, RuntimeError),
                  torch.cuda.OutOfMemoryError is torch.OutOfMemoryError]
    print(json.dumps(out))
''')


def test_aliases_as_torch(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "aliases.py"
    script.write_text(ALIASES)
    ours = _run(["-m", "ember.torch_alias"], script)
    theirs = _run([], script)
    assert ours == theirs
