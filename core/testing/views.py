"""Views and aliasing (docs/semantics.md, "Views"): writes through views reach their base on
every backend, whatever views it returns; results documented as copies never alias.

Each scenario runs on a NumPy array and on a device tensor holding the same values; the
bases (and the views kept) must end equal.  On a backend whose movement kernels return
copies the core makes the writes functional, so these scenarios hold there too.
"""
from __future__ import annotations

import functools

import numpy as np

from .rules import Rules, equal, raises


def _pair(device, shape=(4, 6), dtype="float32"):
    import ember
    host = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return host, ember.tensor(host.copy(), device=device)


def _same(got, want, what):
    # exp_ and the like may differ in the last bit between a device's math and NumPy's
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=0, err_msg=what)


# (name, write): write(x, value) applies the same writes to a NumPy array or a tensor;
# value(v) makes a NumPy array or a tensor on the base's device.
WRITES = [
    ("setitem_slice", lambda x, V: x.__setitem__((slice(1, 3), slice(None, None, 2)), -1.0)),
    ("setitem_negative_step", lambda x, V: x.__setitem__(
        slice(None, None, -1), V(np.arange(24.0).reshape(4, 6) * 10))),
    ("setitem_negative_steps_2d", lambda x, V: x.__setitem__(
        (slice(3, 0, -2), slice(None, None, -3)), V([[1.0, 2.0], [3.0, 4.0]]))),
    ("iadd_on_negative_step_view", lambda x, V: _iadd(x[::-1], 1.0)),
    ("imul_on_column_view", lambda x, V: _imul(x[:, 1::2], 2.0)),
    ("iadd_on_view_of_view", lambda x, V: _iadd(x[1:][::-2][:, 2], V([5.0, 6.0]))),
    ("setitem_through_transpose", lambda x, V: x.T.__setitem__(0, 9.0)),
    ("iadd_through_permute", lambda x, V: _iadd(x.reshape(2, 2, 6).mT[1], 1.0)),
    ("setitem_through_reshape", lambda x, V: x.reshape(24).__setitem__(slice(3, 9), -5.0)),
    # reshapes of views that strides can still express are views (PyTorch, NumPy)
    ("setitem_through_reshape_of_rows", lambda x, V: x[1:3].reshape(12).__setitem__(
        slice(2, 8), -3.0)),
    ("setitem_through_split_of_strided_view", lambda x, V: x[:, ::2].reshape(2, 2, 3)
     .__setitem__((1, 0), 7.0)),
    ("setitem_through_unsqueeze", lambda x, V: x[None, 1].__setitem__((0, slice(2, 4)), 8.0)),
    ("setitem_index_in_view", lambda x, V: x[::-1].__setitem__([0, 2], 3.0)),
    ("setitem_mask_in_view", lambda x, V: x[:, ::-1].__setitem__(x[:, ::-1] > 20, 0.0)),
    ("setitem_overlapping_self", lambda x, V: x.__setitem__(
        (slice(1, None), slice(1, None)), x[:-1, :-1])),
    ("setitem_reversed_self", lambda x, V: x.__setitem__(slice(None, None, -1), x + 0)),
]


def _iadd(v, value):
    v += value


def _imul(v, value):
    v *= value


# ember-only in-place methods on views, and the same writes on NumPy
METHODS = [
    ("fill_", lambda v: v.fill_(2.5), lambda v: v.__setitem__(Ellipsis, 2.5)),
    ("zero_", lambda v: v.zero_(), lambda v: v.__setitem__(Ellipsis, 0.0)),
    ("copy_", lambda v: v.copy_(v.flip(0) * 2), lambda v: v.__setitem__(Ellipsis,
                                                                        v[::-1] * 2)),
    ("add_alpha", lambda v: v.add_(v * 0 + 1, alpha=3), lambda v: v.__setitem__(
        Ellipsis, v + 3)),
    ("clamp_", lambda v: v.clamp_(5.0, 12.0), lambda v: v.__setitem__(
        Ellipsis, np.clip(v, 5.0, 12.0))),
    ("exp_", lambda v: v.mul_(0.1).exp_(), lambda v: v.__setitem__(Ellipsis, np.exp(v * 0.1))),
    ("masked_fill_", lambda v: v.masked_fill_(v > 10, -1.0),
     lambda v: v.__setitem__(v > 10, -1.0)),
]
VIEWS = [("negative_step", lambda x: x[::-1, 1:]), ("strided", lambda x: x[1:, ::2]),
         ("transposed", lambda x: x.T[1:])]


RULES = Rules()
rule = RULES.rule


@rule("views")
def writes_through_views_reach_the_base(device):
    """setitem and in-place operators on slices (negative steps too), views of views,
    transposes, reshapes and unsqueezes write into the base tensor."""
    import ember
    for name, write in WRITES:
        host, x = _pair(device)
        write(host, np.asarray)
        write(x, lambda v: ember.tensor(np.asarray(v, np.float32), device=device))
        _same(x, host, f"{name} on {device}: the base after the write")


@rule("views")
def inplace_methods_on_views_reach_the_base(device):
    """fill_, zero_, copy_, add_, clamp_, exp_, masked_fill_ on negative-step, strided and
    transposed views write into the base."""
    for view_name, view in VIEWS:
        for name, method, on_numpy in METHODS:
            host, x = _pair(device)
            on_numpy(view(host))
            method(view(x))
            _same(x, host, f"{name} on a {view_name} view on {device}: the base")


@rule("views")
def views_see_later_writes_to_their_base(device):
    """A view taken before a write to its base (or to another view of it) shows the new
    values, as in PyTorch."""
    host, x = _pair(device)
    views = [("x[::-1]", lambda t: t[::-1]), ("x[:, 1::2]", lambda t: t[:, 1::2]),
             ("x.T", lambda t: t.T), ("x.reshape(24)", lambda t: t.reshape(24)),
             ("x[1]", lambda t: t[1]), ("x[1:3].reshape(12)", lambda t: t[1:3].reshape(12)),
             ("x[:1].expand(3, 6)", lambda t: np.broadcast_to(t[:1], (3, 6))
              if isinstance(t, np.ndarray) else t[:1].expand(3, 6))]
    kept = [(name, fn(x)) for name, fn in views]
    x[1:3] = -7.0
    x += 1.0
    kept[0][1][0, 0] = 99.0           # through one view, seen by the others
    host[1:3] = -7.0
    host += 1.0
    host[::-1][0, 0] = 99.0
    for (name, fn), (_, v) in zip(views, kept):
        _same(v, fn(host), f"{name} after writes to the base on {device}")


@rule("views")
def results_that_must_not_alias(device):
    """flip, clone, contiguous (always new memory, see semantics.md), reshape of a
    non-contiguous tensor (a transpose, a column slice, an expanded view: on backends
    whose movement kernels copy too), index and mask reads, cat, to(copy=True): writing
    into the result leaves the input alone, and the other way round."""
    import ember
    makers = [("flip", lambda t: t.flip(0)), ("clone", lambda t: t.clone()),
              ("contiguous", lambda t: t.contiguous()),
              ("contiguous of a transpose", lambda t: t.T.contiguous()),
              ("reshape of a transpose", lambda t: t.T.reshape(24)),
              ("reshape of a column slice", lambda t: t[:, 1:4].reshape(12)),
              ("reshape of an expanded view", lambda t: t[:1].expand(3, 6).reshape(18)),
              ("reshape of a reshaped transpose", lambda t: t.T.reshape(2, 3, 4).reshape(24)),
              ("index read", lambda t: t[ember.tensor([0, 1], device=device)]),
              ("mask read", lambda t: t[t >= 0]), ("cat", lambda t: ember.cat([t])),
              ("to(copy=True)", lambda t: t.to(device, copy=True))]
    for name, make in makers:
        host, x = _pair(device)
        out = make(x)
        before = out.numpy().copy()
        out.fill_(-1.0)
        _same(x, host, f"{name} on {device}: writing into the result changed the input")
        out = make(x)
        x.fill_(5.0)
        _same(out, before, f"{name} on {device}: writing into the input changed the result")


@rule("views")
def detach_and_view_share_memory(device):
    """detach(), view() and slicing share the tensor's memory (writes go both ways)."""
    for name, make in [("detach", lambda t: t.detach()), ("view", lambda t: t.view(3, 8)),
                       ("slice", lambda t: t[:]), ("flatten", lambda t: t.flatten())]:
        host, x = _pair(device)
        out = make(x)
        out.mul_(0.0)
        _same(x, np.zeros_like(host), f"{name} on {device}: a write through the result")


@rule("views")
def writes_into_expanded_views(device):
    """A write whose target elements share memory (an expanded view, or a column of one)
    raises, fill_ and zero_ included (PyTorch lets those two through); writing a part of
    an expanded view that does not overlap itself (a row, a strided slab) writes the base,
    on backends whose movement kernels copy too; expanded sources are fine."""
    import ember
    for name, write in [("add_", lambda v: v.add_(1.0)), ("mul_", lambda v: v.mul_(2.0)),
                        ("setitem [...]", lambda v: v.__setitem__(Ellipsis, 2.0)),
                        ("copy_", lambda v: v.copy_(ember.ones(2, 3, device=device))),
                        ("fill_", lambda v: v.fill_(1.0)), ("zero_", lambda v: v.zero_())]:
        x = ember.zeros(1, 3, device=device)
        raises((ValueError, RuntimeError), functools.partial(write, x.expand(2, 3)),
               f"{name} into an expanded view on {device}", "")
        equal(x, np.zeros((1, 3), np.float32), f"{name} into an expanded view on {device}")
    x = ember.zeros(1, 3, device=device)
    raises((ValueError, RuntimeError), lambda: x.expand(2, 3)[:, 1].__setitem__(
        Ellipsis, 1.0), f"setitem into a column of an expanded view on {device}", "")
    equal(x, np.zeros((1, 3), np.float32), f"setitem into a column of an expanded view on "
          f"{device}")
    x.expand(2, 3)[1] = ember.arange(3.0, device=device)
    equal(x, np.array([[0.0, 1.0, 2.0]], np.float32),
          f"setitem into one row of an expanded view on {device}")
    x.expand(2, 3)[0].add_(1.0)
    equal(x, np.array([[1.0, 2.0, 3.0]], np.float32),
          f"add_ into one row of an expanded view on {device}")
    z = ember.zeros(2, 4, device=device)
    z.unsqueeze(0).expand(3, 2, 4)[1, :, ::2] = ember.ones(2, 2, device=device)
    equal(z, np.array([[1.0, 0.0, 1.0, 0.0]] * 2, np.float32),
          f"setitem into a strided slab of an expanded view on {device}")
    y = ember.zeros(2, 3, device=device)
    y.add_(ember.ones(3, device=device).expand(2, 3))
    y[:] = ember.arange(3.0, device=device).expand(2, 3) + y
    equal(y, np.array([[1.0, 2.0, 3.0]] * 2, np.float32), f"expanded sources on {device}")


@rule("views")
def inplace_ops_keep_the_dtype(device):
    """An in-place op whose result dtype the target cannot hold raises (PyTorch):
    int64.add_(1.5) is an error, float32.add_(int tensor) is fine."""
    import ember
    x = ember.zeros(2, dtype=ember.int64, device=device)
    raises(TypeError, lambda: x.add_(1.5), f"int64.add_(1.5) on {device}", "")
    raises(TypeError, lambda: x.mul_(ember.ones(2, device=device)),
           f"int64.mul_(float tensor) on {device}", "")
    y = ember.zeros(2, device=device)
    y.add_(ember.tensor([1, 2], device=device))
    equal(y, np.array([1.0, 2.0], np.float32), f"float32.add_(int64) on {device}")
