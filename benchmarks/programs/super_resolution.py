"""Super-resolution: conv layers with orthogonal init and a PixelShuffle upscaler, MSE
loss, Adam, PSNR on a test set.

Source: https://github.com/pytorch/examples/blob/main/super_resolution/model.py and main.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: random 1x16x16 low-resolution inputs and 1x48x48 targets instead of BSDS300,
2 epochs of 2 batches; checkpoints save the state_dict (the original pickles the whole
module, which ember refuses by design: its files never hold code).
Compare: losses
"""
import argparse
from math import log10

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--upscale_factor', type=int, default=3)
parser.add_argument('--batchSize', type=int, default=4)
parser.add_argument('--testBatchSize', type=int, default=4)
parser.add_argument('--nEpochs', type=int, default=2)
parser.add_argument('--lr', type=float, default=0.01)
parser.add_argument('--seed', type=int, default=123)
opt = parser.parse_args()

torch.manual_seed(opt.seed)
device = torch.device("cpu")

rng = np.random.default_rng(0)


def data(n):
    low = rng.random((n, 1, 16, 16), dtype=np.float32)
    high = np.repeat(np.repeat(low, 3, axis=2), 3, axis=3) + 0.05 * rng.standard_normal(
        (n, 1, 48, 48)).astype(np.float32)
    return TensorDataset(torch.from_numpy(low), torch.from_numpy(high))


training_data_loader = DataLoader(dataset=data(8), batch_size=opt.batchSize, shuffle=True)
testing_data_loader = DataLoader(dataset=data(4), batch_size=opt.testBatchSize, shuffle=False)

model = Net(upscale_factor=opt.upscale_factor).to(device)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=opt.lr)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(
            epoch, iteration, len(training_data_loader), loss.item()))
    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(
        epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    torch.save(model.state_dict(), model_out_path)
    print("Checkpoint saved to {}".format(model_out_path))


for epoch in range(1, opt.nEpochs + 1):
    train(epoch)
    test()
    checkpoint(epoch)
