"""Differentiable physics: a mass-spring system integrated for many steps inside the graph
(in-place force accumulation into indexed rows), its initial positions learned with Adam.

Source: https://github.com/pytorch/examples/blob/main/differentiable_physics/mass_spring.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: 3 particles, 20 steps per forward, 15 epochs; no plot.
Compare: losses
"""
import argparse

import torch
import torch.nn as nn
import torch.optim as optim


class MassSpringSystem(nn.Module):
    def __init__(self, num_particles, springs, mass=1.0, dt=0.01, gravity=9.81, device="cpu"):
        super().__init__()
        self.device = device
        self.mass = mass
        self.springs = springs
        self.dt = dt
        self.gravity = gravity
        self.initial_position_0 = torch.tensor([0.0, 0.0], device=device)
        self.initial_positions_rest = nn.Parameter(torch.randn(num_particles - 1, 2,
                                                               device=device))
        self.velocities = torch.zeros(num_particles, 2, device=device)

    def forward(self, steps):
        positions = torch.cat([self.initial_position_0.unsqueeze(0),
                               self.initial_positions_rest], dim=0)
        velocities = self.velocities
        for _ in range(steps):
            forces = torch.zeros_like(positions)
            for (i, j, rest_length, stiffness) in self.springs:
                xi, xj = positions[i], positions[j]
                dir_vec = xj - xi
                dist = dir_vec.norm()
                force = stiffness * (dist - rest_length) * dir_vec / (dist + 1e-6)
                forces[i] += force
                forces[j] -= force
            forces[:, 1] -= self.gravity * self.mass
            acceleration = forces / self.mass
            velocities = velocities + acceleration * self.dt
            positions = positions + velocities * self.dt
            positions[0] = self.initial_position_0
            velocities[0] = torch.tensor([0.0, 0.0], device=positions.device)
        return positions


def train(args):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    system = MassSpringSystem(num_particles=args.num_particles,
                              springs=[(0, 1, 1.0, args.stiffness), (1, 2, 1.0, args.stiffness)],
                              mass=args.mass, dt=args.dt, gravity=args.gravity, device=device)
    optimizer = optim.Adam(system.parameters(), lr=args.lr)
    target_positions = torch.tensor([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]], device=device)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        final_positions = system(args.steps)
        loss = (final_positions - target_positions).pow(2).mean()
        loss.backward()
        optimizer.step()
        if (epoch + 1) % args.log_interval == 0:
            print(f"Epoch {epoch+1}/{args.epochs}, Loss: {loss.item():.6f}")
    print(f"Final positions:\n{final_positions.detach().cpu().numpy()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Differentiable Physics: Mass-Spring System")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--dt", type=float, default=0.01)
    parser.add_argument("--mass", type=float, default=1.0)
    parser.add_argument("--stiffness", type=float, default=10.0)
    parser.add_argument("--num_particles", type=int, default=3)
    parser.add_argument("--log_interval", type=int, default=5)
    parser.add_argument("--gravity", type=float, default=9.81)
    torch.manual_seed(0)
    train(parser.parse_args())
