"""More torch.nn layers as ember composites: activations, RMSNorm, pooling, EmbeddingBag, ..."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from .. import dtypes as D
from .. import ops
from ..autograd.grad_mode import no_grad
from ..errors import EmberError, EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

__all__ = [
    "EmbeddingBag", "ParameterList", "ParameterDict",
]


class _KeyError(EmberError, KeyError):
    """A key a ParameterDict does not have (a KeyError, as in torch)."""


def _F():
    # nn.functional imports this module, so it is looked up when a function runs
    from . import functional
    return functional


# -- EmbeddingBag ---------------------------------------------------------------------------

class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings: a 2-D input is one bag per row; a 1-D
    input is cut into bags at offsets.  per_sample_weights scale each entry (mode='sum');
    entries equal to padding_idx are left out of their bag (an empty bag gives zeros)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise EmberValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got "
                                  f"{mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise EmberValueError(f"EmbeddingBag: padding_idx {padding_idx} must be "
                                      f"within num_embeddings ({num_embeddings})")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(ops.empty(num_embeddings, embedding_dim, dtype=dtype,
                                              device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"EmbeddingBag: _weight has shape {tuple(_weight.shape)}, "
                                 f"expected ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        if per_sample_weights is not None:
            if self.mode != "sum":
                raise EmberValueError(f"EmbeddingBag: per_sample_weights is only supported "
                                      f"for mode='sum', got mode={self.mode!r}")
            if tuple(per_sample_weights.shape) != tuple(input.shape):
                raise ShapeError(f"EmbeddingBag: per_sample_weights of shape "
                                 f"{tuple(per_sample_weights.shape)} must match the input's "
                                 f"shape {tuple(input.shape)}")
        if input.ndim == 2:
            if offsets is not None:
                raise EmberValueError("EmbeddingBag: offsets has to be None if input is 2-D "
                                      "(each row is a bag)")
            index, valid, weights = input, None, per_sample_weights
        elif input.ndim == 1:
            if offsets is None or offsets.ndim != 1:
                raise EmberValueError("EmbeddingBag: a 1-D input needs 1-D offsets (where "
                                      "each bag starts)")
            index, valid, weights = self._bags(input, offsets, per_sample_weights)
        else:
            raise ShapeError(f"EmbeddingBag: expected a 1-D (with offsets) or 2-D input, got "
                             f"shape {tuple(input.shape)}")
        return self._reduce(index, valid, weights)

    def _bags(self, input, offsets, weights):
        """The 1-D input as a padded (bags, longest) index, with a mask of real entries."""
        import numpy as np
        starts = offsets.detach().numpy().astype(np.int64)    # bag bounds are host data
        n = input._data.shape[0]
        if starts.size and starts[0] != 0:
            raise EmberValueError(f"EmbeddingBag: offsets[0] has to be 0, i.e., the first "
                                  f"sequence in the mini-batch has to start from position 0; "
                                  f"got {int(starts[0])}")
        if np.any(np.diff(starts) < 0) or (starts.size and starts[-1] > n):
            raise EmberValueError(f"EmbeddingBag: offsets must be non-decreasing and at most "
                                  f"the input length {n}, got {starts.tolist()}")
        ends = np.append(starts[1:], n)
        if self.include_last_offset:
            starts, ends = starts[:-1], ends[:-1]
        longest = max(int((ends - starts).max()) if starts.size else 0, 1)
        pos = starts[:, None] + np.arange(longest)[None, :]
        mask = pos < ends[:, None]
        pos = ops.from_host(np.where(mask, pos, 0), input.device)
        index = ops.take_along(input, pos, 0)
        if weights is not None:
            weights = ops.take_along(weights, pos, 0)
        return index, ops.from_host(mask, input.device), weights

    def _reduce(self, index, valid, weights):
        emb = _F().embedding(index, self.weight, None, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.sparse)           # (B, L, D)
        if self.padding_idx is not None:
            keep = index != self.padding_idx
            valid = keep if valid is None else valid & keep
        if self.mode == "max":
            if valid is None:
                return ops.amax(emb, 1)
            out = ops.amax(ops.where(valid.unsqueeze(-1), emb, -float("inf")), 1)
            return ops.where(ops.sum(valid.to(D.int64), 1, keepdim=True) > 0, out, 0.0)
        scale = None if valid is None else valid.to(emb._dtype)
        if weights is not None:
            scale = weights if scale is None else scale * weights
        total = ops.sum(emb if scale is None else emb * scale.unsqueeze(-1), 1)
        if self.mode == "sum":
            return total
        count = index._data.shape[1] if valid is None else \
            ops.maximum(ops.sum(valid.to(emb._dtype), 1, keepdim=True), 1.0)
        return total / count

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


# -- ParameterList, ParameterDict -----------------------------------------------------------

def _as_parameter(value):
    # torch wraps a plain tensor put in a parameter container
    if type(value) is Tensor and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ... (in parameters() and state_dict)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _key(self, idx: int) -> str:
        if not isinstance(idx, int):
            raise EmberTypeError(f"ParameterList indices must be integers or slices, not "
                                 f"{type(idx).__name__}")
        if not -self._size <= idx < self._size:
            raise EmberIndexError(f"index {idx} is out of range for a ParameterList of "
                                  f"length {self._size}")
        return str(idx % self._size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        return getattr(self, self._key(idx))

    def __setitem__(self, idx: int, param) -> None:
        key = self._key(idx)
        param = _as_parameter(param)
        if isinstance(param, Parameter):
            if key in self.__dict__:
                del self.__dict__[key]
            setattr(self, key, param)
        else:
            self._parameters.pop(key, None)
            self.__dict__[key] = param

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._size))

    def __iadd__(self, parameters: Iterable) -> ParameterList:
        return self.extend(parameters)

    def append(self, value) -> ParameterList:
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        if isinstance(values, (Tensor, str)) or not isinstance(values, Iterable):
            raise EmberTypeError(f"ParameterList.extend should be called with an iterable, "
                                 f"but got {type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): {_describe(p)}" for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise EmberTypeError("ParameterList should not be called")


class ParameterDict(Module):
    """A dict of parameters registered under their keys (in parameters() and state_dict)."""

    def __init__(self, parameters: Mapping | Iterable | None = None) -> None:
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise _KeyError(f"ParameterDict has no key {key!r}; it has "
                                f"{list(self._keys)}")
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise EmberTypeError(f"ParameterDict keys must be strings, got "
                                 f"{type(key).__name__}")
        self._keys[key] = None
        value = _as_parameter(value)
        if isinstance(value, Parameter):
            self.__dict__.pop(key, None)
            setattr(self, key, value)
        else:
            self._parameters.pop(key, None)
            self.__dict__[key] = value

    def __delitem__(self, key: str) -> None:
        self[key]                                   # a missing key raises the clear error
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def copy(self) -> ParameterDict:
        return ParameterDict(list(self.items()))

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str):
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        if not self._keys:
            raise _KeyError("popitem(): ParameterDict is empty")
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def values(self):
        return [self[k] for k in self._keys]

    def update(self, parameters) -> None:
        if isinstance(parameters, (dict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())      # an unordered mapping: torch sorts it
        elif isinstance(parameters, Iterable):
            pairs = []
            for j, pair in enumerate(parameters):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise EmberValueError(f"ParameterDict.update: element #{j} should be a "
                                          f"(key, parameter) pair, got {pair!r}")
                pairs.append(pair)
        else:
            raise EmberTypeError(f"ParameterDict.update should be called with a mapping or "
                                 f"an iterable of (key, value) pairs, got "
                                 f"{type(parameters).__name__}")
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): {_describe(p)}" for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise EmberTypeError("ParameterDict should not be called")


def _describe(p) -> str:
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        return (f"Parameter containing: [ember.{p.dtype.name} of size {size}"
                f"{'' if str(p.device) == 'cpu' else ' (' + str(p.device) + ')'}]")
    return f"Object of type: {type(p).__name__}"
