"""Optimizer: parameter groups, per-parameter state, state dicts and zero_grad.

A state_dict holds only tensors, numbers, strings, lists and dicts (no pickled objects), so
ember.save can store it: {"state": {index: {name: value}}, "param_groups": [{..., "params":
[index, ...]}]}, parameters numbered in group order as in PyTorch.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import dtypes as D
from ..autograd.grad_mode import enable_grad, no_grad
from ..errors import EmberTypeError, EmberValueError
from ..nn.parameter import is_lazy, zero_grads
from ..tensor import Tensor


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class: subclasses implement _step_group(group) with in-place tensor updates.

    PyTorch
    -------
    ``torch.optim.Optimizer``
    """

    def __init__(self, params: Iterable, defaults: dict) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if type(params) is Tensor:
            raise EmberTypeError(f"{type(self).__name__}: params argument given to the "
                                 "optimizer should be an iterable of Tensors or dicts, but "
                                 "got a Tensor; pass [tensor] or model.parameters()")
        groups = list(params)
        if not groups:
            raise EmberValueError(f"{type(self).__name__} got an empty parameter list; pass "
                                  "model.parameters() of a model that has parameters")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise EmberTypeError(f"param_group must be a dict, got "
                                 f"{type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if type(params) is Tensor else list(params)
        name = type(self).__name__
        for p in params:
            # a lazy module's UninitializedParameter is taken, as torch takes it: its first
            # forward makes it a Tensor in place, so the optimizer then updates it
            if type(p) is not Tensor and not is_lazy(p):
                raise EmberTypeError(f"{name} can only optimize Tensors, but one of the "
                                     f"params is {type(p).__name__}")
            if p.grad_fn is not None:
                raise EmberValueError(f"{name}: can't optimize a non-leaf Tensor; optimize "
                                      "the leaf (e.g. a module parameter) instead")
            if p._dtype.category < D.FLOAT:
                raise EmberTypeError(f"{name}: can only optimize floating point and complex "
                                     f"tensors, got "
                                     f"{p._dtype.name}")
        group = dict(param_group, params=params)
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise EmberValueError(f"{name}: parameter group didn't specify a value of "
                                      f"required optimization parameter {key}")
            group.setdefault(key, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or any(id(p) in seen for p in params):
            raise EmberValueError(f"{name}: some parameters appear more than once (in one "
                                  "group or in more than one group); give each parameter once")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None):
        """One update of every parameter that has a gradient; returns closure() if given."""
        if Tensor._capture is not None:      # a graph capture guards on the hyperparameters
            from ..graph.capture import notice_optimizer
            notice_optimizer(self)
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _step_group")

    def _grads(self, group: dict):
        """(parameter, gradient, state) for each parameter of a group that has a gradient;
        the gradient is negated for maximize=True."""
        maximize = group.get("maximize", False)
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            yield p, (-g if maximize else g), self._state(p)

    def _state(self, p: Tensor) -> dict:
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {}
        return state

    # -- state dicts ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: (list(v) if isinstance(v, tuple) else v)
                      for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        name = type(self).__name__
        if not isinstance(state_dict, dict) or "param_groups" not in state_dict:
            raise EmberValueError(f"{name}.load_state_dict: expected a dict with 'state' and "
                                  "'param_groups' (from optimizer.state_dict())")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise EmberValueError(f"{name}.load_state_dict: loaded state dict has "
                                  f"{len(saved)} parameter groups, the optimizer has "
                                  f"{len(self.param_groups)}")
        for i, (mine, theirs) in enumerate(zip(self.param_groups, saved)):
            if len(mine["params"]) != len(theirs["params"]):
                raise EmberValueError(
                    f"{name}.load_state_dict: parameter group {i} holds "
                    f"{len(theirs['params'])} parameters in the state dict but "
                    f"{len(mine['params'])} in the optimizer; it does not match this model")
        params = {}
        for mine, theirs in zip(self.param_groups, saved):
            for key, p in zip(theirs["params"], mine["params"]):
                params[int(key)] = p
        new_state: dict = {}
        for key, values in state_dict.get("state", {}).items():
            p = params.get(int(key))
            if p is None:
                continue
            new_state[p] = {k: self._load_value(p, k, v) for k, v in values.items()}
        self.state = new_state
        for mine, theirs in zip(self.param_groups, saved):
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = tuple(v) if isinstance(v, list) and k == "betas" else v

    @staticmethod
    def _load_value(p: Tensor, key: str, value):
        if isinstance(value, (list, tuple)):        # LBFGS keeps lists of tensors
            return type(value)(Optimizer._load_value(p, key, v) for v in value)
        if type(value) is Tensor:
            # a copy on the parameter's device and dtype: updates never write into the dict
            with no_grad():
                out = value.to(device=p.device, dtype=p.dtype if value._dtype.category ==
                               D.FLOAT else None)
                return out.clone() if out is value else out
        return value

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        raise EmberTypeError("optimizers do not pickle; save optimizer.state_dict() with "
                             "ember.save")
