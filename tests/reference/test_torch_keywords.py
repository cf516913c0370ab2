"""torch's keyword names: every OpInfo sample of an op ember has, called with each argument
torch takes by keyword passed by keyword (`F.pad(input=x, pad=(1, 1))`, `x.pow(exponent=2)`,
`x.transpose_(dim0=0, dim1=1)`), in the function, method and in-place method forms torch
has, must give torch's answer (ember.testing.torch_keywords); and the creation functions'
factory keywords (layout=, pin_memory=, memory_format=, device=, requires_grad=, dtype=,
generator=, out=) likewise.  One test per (op, device) and (factory, device)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from ember.testing import targets  # noqa: E402
from ember.testing import torch_keywords as kw  # noqa: E402
from ember.testing import torch_reference as ref  # noqa: E402

SAMPLES = 3
DEVICES = [t.device for t in targets() if not t.problem]
OPS = {ref.full_name(op): op for op in ref.op_db() if kw.forms_of(op)}


def _sampled_off_cpu(names):
    return [pytest.param(n, d, id=f"{d}-{n}", marks=() if d == "cpu" else
                         pytest.mark.sampled(every=4))
            for d in DEVICES for n in sorted(names)]


@pytest.mark.parametrize("name,device", _sampled_off_cpu(OPS))
def test_op_by_keyword(name, device):
    bad = [f"  [{r.form}] {f}" for r in kw.run_op(OPS[name], device, SAMPLES)
           for f in r.failures]
    assert not bad, f"{name} by torch's keywords differs from torch:\n" + "\n".join(bad)


@pytest.mark.parametrize("device", DEVICES)
def test_factory_keywords(device):
    results = kw.run_factories(device)
    assert len(results) > 100            # the table ran: torch takes these keywords
    bad = [f for r in results for f in r.failures]
    assert not bad, "factory keywords differ from torch:\n" + "\n".join(bad)


def test_keyword_refusals():
    """The keywords ember takes only at torch's default value refuse another loudly."""
    import ember
    x = ember.ones(2, 3)
    with pytest.raises(ember.errors.NotInEmberError):
        ember.zeros(2, layout="sparse_coo")
    with pytest.raises(ember.errors.NotInEmberError):
        ember.zeros_like(x, pin_memory=True)
    with pytest.raises(ember.errors.NotInEmberError):
        x.gather(0, ember.zeros(1, 3, dtype=ember.int64), sparse_grad=True)
    with pytest.raises(TypeError):
        x.permute(1, 0, dims=(1, 0))
    with pytest.raises(TypeError):
        x.div_(2.0, rounding_mode="floor", nonsense=1)
    assert x.layout is ember.strided
