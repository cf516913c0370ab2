"""The reference harness rebuilds torch nn modules passed as arguments (issue 26): from the
constructor arguments recorded while torch generated a sample, or from the module's
attributes where they name every ember constructor parameter; never from a guess.  And a
random op whose sample passes its random numbers (fractional max pooling's
_random_samples) is compared in full."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import ember  # noqa: E402
from ember.testing import torch_reference as ref  # noqa: E402


def test_a_module_built_while_recording_keeps_its_arguments():
    ref._CONSTRUCTED.clear()
    with ref._RecordConstructors():
        tm = torch.nn.PairwiseDistance(p=1.0, eps=1e-3, keepdim=True)
    em = ref._Converter("cpu")(tm)
    assert type(em) is ember.nn.PairwiseDistance
    a, b = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    want = tm(torch.tensor(a), torch.tensor(b)).numpy()
    got = em(ember.tensor(a), ember.tensor(b)).numpy()
    assert got.shape == want.shape == (3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_an_unrecorded_module_is_rebuilt_from_its_attributes_or_refused():
    ref._CONSTRUCTED.clear()
    em = ref._Converter("cpu")(torch.nn.Softmax(dim=0))
    assert type(em) is ember.nn.Softmax and em.dim == 0
    # torch keeps PairwiseDistance's p as `norm`: no attribute `p`, so no guess at it
    with pytest.raises(TypeError, match="cannot rebuild"):
        ref._Converter("cpu")(torch.nn.PairwiseDistance(p=1.0))


def test_triplet_margin_with_distance_loss_samples_run():
    op = next(o for o in ref.op_db() if o.name == "nn.functional.triplet_margin_with_distance_loss")
    result = ref.run_op(op, "cpu")
    assert result.resolved and not result.problem
    assert [s.message for s in result.samples if not s.ok] == []
    assert sum(s.kind == "sample" for s in result.samples) == 7


def test_fractional_max_pool_samples_with_their_random_numbers_compare_values():
    op = next(o for o in ref.op_db() if o.name == "nn.functional.fractional_max_pool2d")
    samples = ref.samples_of(op, grad=True)
    seeded = [i for i, s in enumerate(samples) if s.kwargs.get("_random_samples") is not None]
    assert seeded
    efn = ref.resolve(op)

    def own_samples(input, *args, _random_samples=None, **kwargs):
        # ember's own random numbers instead of the sample's: other windows, other values
        return ember.nn.functional.fractional_max_pool2d(input, *args, **kwargs)
    for i in seeded:
        assert ref.run_sample(op, efn, samples[i], "cpu", 1e-6, 1e-5, True, i).ok
        ember.manual_seed(1)
        wrong = ref.run_sample(op, own_samples, samples[i], "cpu", 1e-6, 1e-5, True, i)
        assert not wrong.ok and "differ" in wrong.message


@pytest.mark.parametrize("cls", ["FractionalMaxPool2d", "FractionalMaxPool3d"])
def test_module_inputs_run_in_the_samples_dtype(cls):
    """torch's module tests cast the module to the samples' dtype (m.to(dtype)); so does the
    harness, on both sides: FractionalMaxPool's float64 _random_samples buffer then follows
    the float32 input, and torch answers instead of refusing (which passed vacuously)."""
    info = next(i for i in ref.module_db() if i.module_cls.__name__ == cls)
    result = ref.run_module(info, "cpu")
    assert result.samples and [s.message for s in result.samples] == [""] * len(result.samples)
