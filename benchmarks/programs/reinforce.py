"""REINFORCE on CartPole: a policy network with dropout, actions drawn from a
torch.distributions.Categorical, log-probabilities kept per step, discounted returns
normalised with a NumPy epsilon, the policy loss summed with torch.cat and one Adam step per
episode.

Source: https://github.com/pytorch/examples/blob/main/reinforcement_learning/reinforce.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: gym's CartPole-v1 is replaced by the same cart-pole dynamics written here in plain
Python (no gym); 4 episodes of at most 30 steps.
Compare: losses
"""
import argparse
import math
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class CartPole:
    """gym's CartPole-v1 dynamics (Barto, Sutton & Anderson), without rendering."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.gravity, self.masscart, self.masspole = 9.8, 1.0, 0.1
        self.length, self.force_mag, self.tau = 0.5, 10.0, 0.02

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total = self.masspole + self.masscart
        pole_ml = self.masspole * self.length
        temp = (force + pole_ml * theta_dot ** 2 * math.sin(theta)) / total
        thetaacc = (self.gravity * math.sin(theta) - math.cos(theta) * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * math.cos(theta) ** 2 / total))
        xacc = temp - pole_ml * thetaacc * math.cos(theta) / total
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
        return self.state.astype(np.float32), 1.0, done, False, {}


parser = argparse.ArgumentParser(description='PyTorch REINFORCE example')
parser.add_argument('--gamma', type=float, default=0.99)
parser.add_argument('--seed', type=int, default=543)
parser.add_argument('--log-interval', type=int, default=1)
args = parser.parse_args()

env = CartPole(args.seed)
torch.manual_seed(args.seed)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def main():
    running_reward = 10
    for i_episode in range(1, 5):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 30):
            action = select_action(state)
            state, reward, done, _, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        finish_episode()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                  i_episode, ep_reward, running_reward))


if __name__ == '__main__':
    main()
