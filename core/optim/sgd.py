"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
from __future__ import annotations

from collections.abc import Iterable

from ..errors import EmberValueError
from . import _foreach
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """Stochastic gradient descent; the update is torch.optim.SGD's, term for term.

    Examples
    --------
    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([1.0, -2.0]))
    >>> opt = ember.optim.SGD([w], lr=0.5)
    >>> (w ** 2).sum().backward()
    >>> opt.step()
    >>> w.tolist()
    [0.0, 0.0]

    foreach (torch's flag): None (the default) updates the float32/float64 CPU parameters
    of a group term by term in one pass over all of them (ember.optim._foreach), the others
    one by one; True requires the multi-tensor path for every parameter; False loops.  Both
    paths give bit-identical results.  fused=True has no ember kernel: NotInEmberError.

    PyTorch
    -------
    ``torch.optim.SGD``
    """

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 fused: bool | None = None) -> None:
        _foreach.check_flags("SGD", foreach, fused)
        if lr is not required and lr < 0.0:
            raise EmberValueError(f"SGD: invalid learning rate {lr}; expected lr >= 0")
        if momentum < 0.0:
            raise EmberValueError(f"SGD: invalid momentum value {momentum}; expected >= 0")
        if weight_decay < 0.0:
            raise EmberValueError(f"SGD: invalid weight_decay value {weight_decay}; "
                                  "expected >= 0")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise EmberValueError("SGD: Nesterov momentum requires a momentum and zero "
                                  "dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach, fused=fused))

    def _step_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        multi, loop = _foreach.split(self, group)
        if multi:
            _foreach.sgd(multi, lr, momentum, dampening, weight_decay, nesterov,
                         group.get("maximize", False))
        for p, g, _ in loop:
            if weight_decay:
                g = g + p * weight_decay
            if momentum:
                state = self._state(p)
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.detach().clone()
                else:
                    buf.mul_(momentum).add_(g, alpha=1 - dampening)
                g = g + buf * momentum if nesterov else buf
            p.add_(g, alpha=-lr)
