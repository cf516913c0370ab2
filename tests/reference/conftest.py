"""The OpInfo reference suite's one option: its full set (every sample, error input and
reference input of every op) runs only when asked for with `-m reference_full`; the default
run takes the first samples of every op and stays within its time budget."""
from __future__ import annotations


def pytest_collection_modifyitems(config, items):
    if "reference_full" in (config.option.markexpr or ""):
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("reference_full") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
