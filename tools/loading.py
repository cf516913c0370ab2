"""Loading the plugins for the CLI: hangs found in a child, the rest loaded here, guarded.

A plugin that hangs at import would hang this process for good (the plugin host holds its
lock while importing, and Python cannot stop a thread).  So a child process first imports
each plugin and builds its backends, reporting progress to a file; one that does not
finish within the deadline is recorded as hung and blocked here by EMBER_DISABLE_PLUGINS
(which the smoke-test subprocesses inherit too).  The others load in this process, each
under a deadline with what it prints captured, so `--json` output stays valid.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from . import guard

# Run as `python -c PREFLIGHT progress_file skip1,skip2`: one JSON line per step.
PREFLIGHT = r"""
import json, sys, time
from importlib.metadata import entry_points
out = open(sys.argv[1], "a", buffering=1)
skip = set(filter(None, sys.argv[2].split(",")))
seen = set()
for ep in entry_points(group="ember.plugins"):
    if ep.name in seen or ep.name in skip or ep.name == "cpu":
        continue
    seen.add(ep.name)
    out.write(json.dumps({"start": ep.name}) + "\n")
    error = ""
    try:
        obj = ep.load()
        hook = getattr(obj, "ember_backends", None)
        if callable(hook):
            hook()
    except BaseException as exc:
        error = type(exc).__name__
    out.write(json.dumps({"done": ep.name, "error": error}) + "\n")
out.write(json.dumps({"end": True}) + "\n")
"""
DISABLE = "EMBER_DISABLE_PLUGINS"


def preflight(timeout: float, skip=()) -> dict:
    """{entry-point name: why} for the plugins whose import or backend construction takes
    longer than `timeout` seconds ('hung') or kills the interpreter ('crashed ...'), found
    in child processes (one more run after each such plugin, without it)."""
    found: dict = {}
    done: set = set()
    while True:
        name, why = _one_pass(timeout, [*skip, *found, *done], done)
        if not name:
            return found
        found[name] = why


def _one_pass(timeout: float, skip, done: set) -> tuple[str, str]:
    """One child run; the plugins it finished join `done` (the next run skips them)."""
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as fh:
        progress = fh.name
    child = subprocess.Popen([sys.executable, "-c", PREFLIGHT, progress, ",".join(skip)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        current, since, offset = "", time.monotonic(), 0
        while True:
            exited = child.poll()
            with open(progress, encoding="utf-8") as fh:
                fh.seek(offset)
                chunk = fh.read()
            lines = chunk.split("\n")
            offset += len(chunk) - len(lines[-1])     # keep a partly written line
            for line in lines[:-1]:
                event = json.loads(line)
                if "start" in event:
                    current, since = event["start"], time.monotonic()
                elif "done" in event:
                    done.add(event["done"])
                    current = ""
                elif "end" in event:
                    current = ""
            if exited is not None:
                if current and exited < 0:
                    return current, f"crashed (the interpreter died of signal {-exited})"
                return "", ""
            if current and time.monotonic() - since > timeout:
                return current, "hung"
            time.sleep(0.02)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        with contextlib.suppress(OSError):
            os.unlink(progress)


def block(names) -> str | None:
    """Add entry-point names to EMBER_DISABLE_PLUGINS; the previous value, for restore()."""
    before = os.environ.get(DISABLE)
    if names:
        os.environ[DISABLE] = ",".join(filter(None, [before or "", *names]))
    return before


def restore(before: str | None) -> None:
    if before is None:
        os.environ.pop(DISABLE, None)
    else:
        os.environ[DISABLE] = before


def load_plugins(timeout: float = guard.DEFAULT_TIMEOUT, capture: guard.Capture | None = None,
                 blocked=None) -> dict:
    """Load every plugin; {entry-point name: {'seconds', 'output', 'trouble'}}, `trouble`
    being '' or why it was not loaded ('hung', 'crashed ...').  `blocked` are the
    preflight's findings (those plugins are not loaded).  A plugin that hangs here all
    the same stops the loading: the host's lock stays taken."""
    from ember import plugins
    blocked = dict(blocked or {})
    loads: dict = {}
    stuck = ""
    for rec in plugins.records():
        entry = {"seconds": 0.0, "output": guard.empty_output(), "timeout": timeout,
                 "trouble": blocked.get(rec.name, "")}
        loads[rec.name] = entry
        if rec.status != "not loaded":
            continue
        if stuck:             # the host's lock is taken: any load would wait for good
            entry["trouble"] = entry["trouble"] or f"not loaded: plugin {stuck!r} hung before it"
            continue
        if entry["trouble"]:
            plugins.load(rec.name)    # blocked by EMBER_DISABLE_PLUGINS: recorded, not run
            continue
        outcome = guard.call(plugins.load, rec.name, timeout=timeout)
        entry["seconds"] = outcome.seconds
        if capture is not None:
            entry["output"] = capture.take()
        if not outcome.finished:
            entry["trouble"] = "hung"
            stuck = rec.name
    return loads


PROBE_TIMEOUT = "EMBER_PROBE_TIMEOUT"     # read by probes that wait on a child (CuPy's)


@contextlib.contextmanager
def guarded(timeout: float = guard.DEFAULT_TIMEOUT, capture: guard.Capture | None = None):
    """Find the plugins that hang or crash, block them, load the rest; yields the loads.
    Inside, probes that wait on a child process wait `timeout` seconds at most
    (EMBER_PROBE_TIMEOUT, unless set already); both variables are restored afterwards."""
    from ember import plugins
    names = [r.name for r in plugins.records() if r.name != "cpu" and r.status == "not loaded"]
    blocked = preflight(timeout) if names else {}
    before = block(list(blocked))
    probe_before = os.environ.get(PROBE_TIMEOUT)
    if probe_before is None:
        os.environ[PROBE_TIMEOUT] = f"{timeout:g}"
    try:
        yield load_plugins(timeout, capture, blocked)
    finally:
        restore(before)
        if probe_before is None:
            os.environ.pop(PROBE_TIMEOUT, None)
