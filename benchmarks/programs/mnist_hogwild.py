"""Hogwild: one model in shared memory (share_memory()), trained by several processes at
once through torch.multiprocessing, each with its own optimizer and DataLoader.

Source: https://github.com/pytorch/examples/blob/main/mnist_hogwild/main.py and train.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: random 28x28 images instead of MNIST, 2 processes, 1 epoch of 2 batches each; the
updates race by design, so only "does it run" is compared.
Compare: none
"""
import argparse

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def dataset(n, seed):
    rng = np.random.default_rng(seed)
    images = (rng.random((n, 1, 28, 28), dtype=np.float32) - 0.1307) / 0.3081
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(rng.integers(0, 10, n)))


def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)
    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = model(data.to(device))
            loss = F.nll_loss(output, target.to(device))
            loss.backward()
            optimizer.step()
            print('{}\tTrain Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                rank, epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))


def test(args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed)
    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()
            pred = output.max(1)[1]
            correct += pred.eq(target.to(device)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


parser = argparse.ArgumentParser(description='PyTorch MNIST Hogwild Example')
parser.add_argument('--batch-size', type=int, default=16)
parser.add_argument('--epochs', type=int, default=1)
parser.add_argument('--lr', type=float, default=0.01)
parser.add_argument('--momentum', type=float, default=0.5)
parser.add_argument('--seed', type=int, default=1)
parser.add_argument('--num-processes', type=int, default=2)

if __name__ == '__main__':
    args = parser.parse_args()
    device = torch.device("cpu")
    dataloader_kwargs = {'batch_size': args.batch_size, 'shuffle': True}
    torch.manual_seed(args.seed)
    mp.set_start_method('spawn', force=True)
    train_set, test_set = dataset(32, 0), dataset(16, 1)
    model = Net().to(device)
    model.share_memory()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, train_set,
                                           dataloader_kwargs))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    test(args, model, device, test_set, dataloader_kwargs)
