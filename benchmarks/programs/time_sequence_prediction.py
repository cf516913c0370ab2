"""Sine-wave prediction with two LSTMCells in float64, trained with LBFGS and a closure.

Source: https://github.com/pytorch/examples/blob/main/time_sequence_prediction/train.py
(and generate_sine_wave.py)
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: 12 waves of 60 steps (not 100 of 1000), 2 LBFGS steps, 10 future steps.
Compare: losses
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def sine_waves(n=12, length=60, period=20):
    rng = np.random.RandomState(2)
    x = np.empty((n, length), 'int64')
    x[:] = np.array(range(length)) + rng.randint(-4 * period, 4 * period, n).reshape(n, 1)
    return np.sin(x / 1.0 / period).astype('float64')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=2)
    opt = parser.parse_args()
    np.random.seed(0)
    torch.manual_seed(0)
    data = sine_waves()
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
