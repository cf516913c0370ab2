"""tqdm over ember's DataLoader works as over torch's (issue 33 part 3): the bar knows the
length, counts every batch and ends at n/n; the batches are the loader's own."""
from __future__ import annotations

import io

import ember
import numpy as np
import pytest
from ember.utils.data import DataLoader, TensorDataset

tqdm = pytest.importorskip("tqdm").tqdm


@pytest.mark.parametrize("drop_last", [False, True])
def test_tqdm_over_a_dataloader(drop_last):
    data = TensorDataset(ember.arange(10.0).reshape(10, 1), ember.arange(10))
    loader = DataLoader(data, batch_size=4, drop_last=drop_last)
    out = io.StringIO()
    bar = tqdm(loader, file=out, ascii=True, mininterval=0)
    assert bar.total == len(loader) == (2 if drop_last else 3)
    seen = [y for _, y in bar]
    bar.close()
    np.testing.assert_array_equal(np.concatenate([y.numpy() for y in seen]),
                                  np.arange(8 if drop_last else 10))
    n = len(loader)
    assert f"{n}/{n}" in out.getvalue() and "100%" in out.getvalue()
    # a loader over an iterable dataset has no length: tqdm counts without a total, as torch's
    class Stream(ember.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))
    bar = tqdm(DataLoader(Stream(), batch_size=2), file=io.StringIO(), mininterval=0)
    assert bar.total is None and sum(1 for _ in bar) == 3
