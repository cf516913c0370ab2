"""StackDataset and ChainDataset against torch.utils.data: samples, lengths, errors, and
through a DataLoader."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _stream(lib, n):
    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n
    return Stream()


def _as_list(x):
    if isinstance(x, dict):
        return {k: _as_list(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_as_list(v) for v in x]
    return np.asarray(x.tolist() if hasattr(x, "tolist") else x).tolist()


def test_stack_and_chain_as_torch():
    got = []
    for lib in (torch, ember):
        D = lib.utils.data
        a, b = lib.arange(6.0).reshape(3, 2), lib.arange(3) * 10
        pos, kw = D.StackDataset(a, b), D.StackDataset(x=a, y=b)
        chain = D.ChainDataset([_stream(lib, 2), _stream(lib, 3)])
        got.append([len(pos), _as_list(pos[1]), _as_list(kw[2]), len(chain), list(chain),
                    [_as_list(batch) for batch in D.DataLoader(kw, batch_size=2)],
                    [_as_list(batch) for batch in D.DataLoader(chain, batch_size=2)]])
    assert got[1] == got[0]


def test_stack_and_chain_refuse_as_torch():
    for lib, errors in ((torch, (ValueError, AssertionError)),          # torch asserts
                        (ember, (ember.errors.EmberValueError, ember.errors.EmberTypeError))):
        D = lib.utils.data
        with pytest.raises(errors[0]):
            D.StackDataset(lib.arange(3), lib.arange(4))
        with pytest.raises(errors[0]):
            D.StackDataset(lib.arange(3), y=lib.arange(3))
        with pytest.raises(errors[1]):
            list(D.ChainDataset([D.TensorDataset(lib.arange(3))]))
