"""A PyTorch program using torch.profiler as its tutorials do; tests run it unchanged under
`python -m ember.torch_alias` (argv: trace path, device)."""
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule
from torch.utils.data import DataLoader, TensorDataset

trace, device = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = DataLoader(TensorDataset(torch.randn(48, 8), torch.randint(0, 2, (48,))), batch_size=8)
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.PrivateUse1]
                                       if device != "cpu" else [])
with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
             record_shapes=True, profile_memory=True) as prof:
    for x, y in data:
        x, y = x.to(device), y.to(device)
        with record_function("train_step"):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        prof.step()
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
print(prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total",
                                                         row_limit=5))
prof.export_chrome_trace(trace)
