"""Rules: conformance checks that are not one op against NumPy.

A rule is a function of a device that asserts one decided behaviour (docs/semantics.md):
an error ember raises on every backend, a write that must reach the base of a view, a
result that must not alias its input.  semantics.py and views.py hold them, each in its
own `Rules` list; the package joins the two (RULES in testing/__init__.py), so no rule
registers itself by being imported.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .checks import Unsupported, lacks_dtype, supported_dtypes


@dataclass(frozen=True)
class Rule:
    name: str
    family: str
    fn: Callable[[str], None]
    doc: str


class Rules(list):
    """The rules of one module, in the order its `rule` decorators add them."""

    def rule(self, family: str):
        """Add fn(device) as a rule of `family`; its docstring's first line says what."""
        def add(fn):
            doc = (fn.__doc__ or "").strip().splitlines()[0]
            self.append(Rule(fn.__name__, family, fn, doc))
            return fn
        return add


def need(device: str, *dtypes: str) -> None:
    """Skip the rule where the device lacks one of the dtypes."""
    missing = [d for d in dtypes if d not in supported_dtypes(device)]
    if missing:
        raise Unsupported(f"{device} has no {', '.join(missing)}")


def tensor(values, device: str, dtype: str | None = None):
    import ember
    if dtype is None:
        return ember.tensor(values, device=device)
    return ember.tensor(np.asarray(values, dtype=ember.dtypes.get_dtype(dtype).np),
                        device=device)


def equal(got, want, what: str) -> None:
    """got (a Tensor) holds exactly `want` (values and, for arrays, dtype)."""
    import ember
    assert isinstance(got, ember.Tensor), f"{what}: got {type(got).__name__}"
    want = np.asarray(want)
    host = got.detach().numpy()
    assert host.shape == want.shape, f"{what}: shape {host.shape}, expected {want.shape}"
    if want.dtype != object:
        assert host.dtype == want.dtype, f"{what}: dtype {host.dtype}, expected {want.dtype}"
    np.testing.assert_array_equal(host, want, err_msg=what)


def raises(kinds, fn: Callable, what: str, match: str = "") -> BaseException:
    """fn() must raise an ember error that is also one of `kinds` (builtin classes), with
    `match` in its message; the error is returned."""
    import ember
    try:
        got = fn()
        if isinstance(got, ember.Tensor):
            got.numpy()                     # deferred backends raise when the result is needed
    except Exception as exc:               # noqa: BLE001  (the rule checks the class)
        if lacks_dtype(exc):
            raise Unsupported(str(exc)) from exc
        assert isinstance(exc, ember.EmberError), \
            f"{what}: raised {type(exc).__name__} ({exc}), not an ember error"
        assert isinstance(exc, kinds), \
            f"{what}: raised {type(exc).__name__}, expected a subclass of {kinds}: {exc}"
        assert match.lower() in str(exc).lower(), \
            f"{what}: the message does not say {match!r}: {exc}"
        return exc
    raise AssertionError(f"{what}: expected an error, got "
                         f"{got.numpy() if isinstance(got, ember.Tensor) else got!r}")
