"""PyTorch's torch.func tutorials, written against torch, run unchanged by real torch and by
ember (`python -m ember.torch_alias torch_func_tutorials.py OUT.npz [device]`).

Per-sample gradients of a small CNN (vmap(grad) and a loop of single-sample backward
passes), model ensembling (stack_module_state + vmap over functional_call), Jacobians and
Hessians (jacrev, jacfwd, torch.autograd.functional), and the empirical neural tangent
kernel.  Inputs come from a seeded NumPy generator so both runs see the same numbers.
"""
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, stack_module_state, vjp, vmap

out_path = sys.argv[1]
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
rng = np.random.default_rng(0)
torch.set_num_threads(1)


def t(*shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32), device=device)


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def load(model):
    """Deterministic weights (the seeded generator, in parameter order)."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(t(*p.shape) * 0.3)
    return model.to(device)


results = {}

# --- 1. per-sample gradients -----------------------------------------------------------------
model = load(SimpleCNN())
data, targets = t(8, 1, 8, 8), torch.tensor(rng.integers(0, 10, 8), device=device)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.nll_loss(predictions, targets)


ft_per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                     targets)
for name, p in model.named_parameters():
    loop = []
    for i in range(data.shape[0]):
        loss = F.nll_loss(model(data[i:i + 1]), targets[i:i + 1])
        loop.append(torch.autograd.grad(loss, p)[0])
    results[f"psg_vmap.{name}"] = ft_per_sample[name].detach().cpu().numpy()
    results[f"psg_loop.{name}"] = torch.stack(loop).detach().cpu().numpy()

# --- 2. model ensembling -----------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


models = [load(MLP()) for _ in range(4)]
minibatches = t(4, 5, 6)
ens_params, ens_buffers = stack_module_state(models)
base = MLP().to(device)


def fmodel(params, buffers, x):
    return functional_call(base, (params, buffers), (x,))


results["ens_different"] = vmap(fmodel)(ens_params, ens_buffers, minibatches).detach().cpu().numpy()
results["ens_same"] = vmap(fmodel, in_dims=(0, 0, None))(
    ens_params, ens_buffers, minibatches[0]).detach().cpu().numpy()
results["ens_loop"] = torch.stack([m(minibatches[i]) for i, m in enumerate(models)]
                                  ).detach().cpu().numpy()

# --- 3. Jacobians and Hessians -------------------------------------------------------------------
W, b, x = t(4, 5), t(4), t(5)


def predict(weight, bias, x):
    return torch.tanh(F.linear(x, weight, bias))


results["jac_rev"] = jacrev(predict, argnums=2)(W, b, x).detach().cpu().numpy()
results["jac_fwd"] = jacfwd(predict, argnums=2)(W, b, x).detach().cpu().numpy()
results["jac_af"] = torch.autograd.functional.jacobian(
    lambda x: predict(W, b, x), x).detach().cpu().numpy()
jw, jb = jacrev(predict, argnums=(0, 1))(W, b, x)
results["jac_rev_w"], results["jac_rev_b"] = jw.detach().cpu().numpy(), jb.detach().cpu().numpy()
results["hess"] = hessian(lambda x: predict(W, b, x).sum())(x).detach().cpu().numpy()
results["hess_af"] = torch.autograd.functional.hessian(
    lambda x: predict(W, b, x).sum(), x).detach().cpu().numpy()
results["batch_jac"] = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(
    W, b, t(3, 5)).detach().cpu().numpy()
_, vjp_fn = vjp(lambda x: predict(W, b, x), x)
results["vjp"] = vjp_fn(torch.ones(4, device=device))[0].detach().cpu().numpy()

# --- 4. neural tangent kernel --------------------------------------------------------------------
net = load(MLP())
net_params = {k: v.detach() for k, v in net.named_parameters()}
x1, x2 = t(3, 6), t(2, 6)


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk_jacobian_contraction(params, x1, x2):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    result = torch.stack([torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)


results["ntk"] = empirical_ntk_jacobian_contraction(net_params, x1, x2).detach().cpu().numpy()

np.savez(out_path, **results)
print("ok", len(results))
