"""A small typed training script, written as a user writes one: mypy checks it against
ember's own hints (tests/typing/test_mypy.py)."""
from __future__ import annotations

import ember
from ember import Tensor, nn
from ember.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, features: int, classes: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(features, 16)
        self.out = nn.Linear(16, classes)
        self.act = nn.ReLU()

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.act(self.hidden(x)))


def train(epochs: int = 2) -> float:
    ember.manual_seed(0)
    x: Tensor = ember.randn(64, 8)
    y: Tensor = ember.randint(0, 3, (64,))
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = Net(8, 3)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    last = 0.0
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss: Tensor = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            last = loss.item()
    with ember.no_grad():
        logits = model(x)
        accuracy: float = (logits.argmax(dim=1) == y).float().mean().item()
    shape: tuple[int, ...] = tuple(logits.shape)
    assert shape == (64, 3)
    state = model.state_dict()
    model.load_state_dict(state)
    return last + 0 * accuracy


if __name__ == "__main__":
    print(train())
