"""ember.utils.data: datasets, splits, samplers, collation and the single-process DataLoader."""
from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import ember
import numpy as np
import pytest
from ember.errors import EmberError
from ember.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    default_collate,
    default_convert,
    random_split,
)

Pair = namedtuple("Pair", "x y")


def _dataset(n=10):
    x = ember.tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    y = ember.arange(n)
    return TensorDataset(x, y)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"i": i, "sq": float(i * i), "name": f"s{i}"}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_tensor_dataset_rows_and_errors():
    ds = _dataset(5)
    assert len(ds) == 5
    x, y = ds[2]
    assert x.tolist() == [6.0, 7.0, 8.0] and y.item() == 2
    with pytest.raises(EmberError, match="size mismatch"):
        TensorDataset(ember.zeros(3, 2), ember.zeros(4))
    with pytest.raises(TypeError, match="expected ember tensors"):
        TensorDataset(np.zeros(3))


def test_concat_and_subset():
    both = _dataset(3) + _dataset(4)
    assert isinstance(both, ConcatDataset) and len(both) == 7
    assert both[3][1].item() == 0 and both[-1][1].item() == 3
    with pytest.raises(IndexError):
        both[7]
    sub = Subset(_dataset(6), [5, 1])
    assert len(sub) == 2 and sub[0][1].item() == 5


@pytest.mark.parametrize("lengths", [[7, 3], [0.7, 0.3], [0.5, 0.25, 0.25]])
def test_random_split_covers_once_and_is_seeded(lengths):
    ds = _dataset(10)
    parts = random_split(ds, lengths, generator=ember.Generator().manual_seed(3))
    again = random_split(ds, lengths, generator=ember.Generator().manual_seed(3))
    other = random_split(ds, lengths, generator=ember.Generator().manual_seed(4))
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert [p.indices for p in parts] != [p.indices for p in other]
    if isinstance(lengths[0], float):
        # floor, then the remainder one by one from the first split (PyTorch's rule)
        assert [len(p) for p in parts] == ([7, 3] if len(lengths) == 2 else [6, 2, 2])


def test_random_split_global_stream_follows_manual_seed():
    ember.manual_seed(11)
    a = random_split(_dataset(10), [5, 5])
    ember.manual_seed(11)
    b = random_split(_dataset(10), [5, 5])
    assert a[0].indices == b[0].indices


@pytest.mark.parametrize("lengths, match", [([3, 3], "does not equal"),
                                            ([0.5, 0.6], "sum to 1"),
                                            ([-1, 11], "non-negative")])
def test_random_split_rejects_bad_lengths(lengths, match):
    with pytest.raises(ValueError, match=match) as info:
        random_split(_dataset(10), lengths)
    assert isinstance(info.value, EmberError)


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = ember.Generator().manual_seed(0)
    sampler = RandomSampler(range(10), generator=g)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second                      # a new order every epoch
    g2 = ember.Generator().manual_seed(0)
    assert list(RandomSampler(range(10), generator=g2)) == first
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:4]) == [0, 1, 2, 3]
    subset = list(SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(subset) == [10, 20, 30]


def test_batch_sampler():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="positive int"):
        BatchSampler(range(7), 0, False)


def test_default_collate_types():
    out = default_collate([{"i": 1, "f": 0.5, "b": True, "s": "a", "t": (1, 2),
                            "a": np.ones(2, np.float32)},
                           {"i": 2, "f": 1.5, "b": False, "s": "b", "t": (3, 4),
                            "a": np.zeros(2, np.float32)}])
    assert out["i"].dtype == ember.int64 and out["i"].tolist() == [1, 2]
    assert out["f"].dtype == ember.float64 and out["f"].tolist() == [0.5, 1.5]
    assert out["b"].dtype == ember.bool and out["b"].tolist() == [True, False]
    assert out["s"] == ["a", "b"]
    assert isinstance(out["t"], list) and out["t"][0].tolist() == [1, 3]
    assert out["a"].dtype == ember.float32 and out["a"].shape == (2, 2)
    pairs = default_collate([Pair(ember.ones(2), 1), Pair(ember.zeros(2), 0)])
    assert isinstance(pairs, Pair) and pairs.x.tolist() == [[1, 1], [0, 0]]


def test_default_collate_errors_name_the_fix():
    with pytest.raises(ValueError, match="sample 1 has shape") as info:
        default_collate([ember.zeros(2), ember.zeros(3)])
    assert isinstance(info.value, EmberError)
    with pytest.raises(TypeError, match="collate_fn"):
        default_collate([object(), object()])
    with pytest.raises(ValueError, match="same number of fields"):
        default_collate([(1, 2), (1,)])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": [np.ones(1)], "c": "x"})
    assert isinstance(out["a"], ember.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"][0], ember.Tensor) and out["c"] == "x"


def test_loader_batches_in_order():
    batches = list(DataLoader(_dataset(10), batch_size=4))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 3) and batches[0][0].dtype == ember.float32
    assert len(DataLoader(_dataset(10), batch_size=4)) == 3
    assert len(DataLoader(_dataset(10), batch_size=4, drop_last=True)) == 2
    assert len(list(DataLoader(_dataset(10), batch_size=4, drop_last=True))) == 2


def test_fast_tensor_path_equals_per_sample_collate():
    ds = Subset(_dataset(12), [11, 3, 5, 0, 7, 2, 9])
    fast = list(DataLoader(ds, batch_size=3))
    slow = list(DataLoader(ds, batch_size=3, collate_fn=lambda b: default_collate(b)))
    assert len(fast) == len(slow) == 3
    for f, s in zip(fast, slow):
        assert isinstance(f, list) and isinstance(s, list)
        for a, b in zip(f, s):
            assert a.dtype == b.dtype and a.tolist() == b.tolist()


def test_shuffle_is_seeded_and_changes_per_epoch():
    def epoch_orders(seed):
        loader = DataLoader(_dataset(10), batch_size=5, shuffle=True,
                            generator=ember.Generator().manual_seed(seed))
        return [[i for b in loader for i in b[1].tolist()] for _ in range(2)]
    first, second = epoch_orders(1)
    assert sorted(first) == list(range(10)) and first != second
    assert epoch_orders(1) == [first, second]
    assert epoch_orders(2) != [first, second]


def test_unbatched_custom_collate_sampler_and_batch_sampler():
    unbatched = list(DataLoader(Squares(3), batch_size=None))
    assert unbatched[2] == {"i": 2, "sq": 4.0, "name": "s2"}
    names = list(DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: [d["name"] for d in b]))
    assert names == [["s0", "s1"], ["s2", "s3"]]
    picked = list(DataLoader(Squares(6), batch_size=2, sampler=[5, 4, 0]))
    assert [b["i"].tolist() for b in picked] == [[5, 4], [0]]
    custom = list(DataLoader(Squares(6), batch_sampler=[[1, 2, 3], [0]]))
    assert [b["sq"].tolist() for b in custom] == [[1.0, 4.0, 9.0], [0.0]]


def test_iterable_dataset_batches():
    loader = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(2), batch_size=None)) == [0, 1]


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 0}, "batch_size"),
    ({"num_workers": -1}, "num_workers"),
    ({"shuffle": True, "sampler": [0, 1]}, "mutually exclusive"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, "mutually exclusive"),
    ({"prefetch_factor": 2}, "num_workers > 0"),
    ({"persistent_workers": True}, "num_workers > 0"),
    ({"timeout": -1}, "timeout"),
])
def test_loader_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match) as info:
        DataLoader(_dataset(4), **kwargs)
    assert isinstance(info.value, EmberError)


def test_iterable_dataset_refuses_shuffle():
    with pytest.raises(ValueError, match="IterableDataset decides its own order"):
        DataLoader(Stream(3), shuffle=True)


def test_reachable_as_an_attribute_after_plain_import_ember():
    code = "import ember; print(ember.utils.data.DataLoader.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "DataLoader"
