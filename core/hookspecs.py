"""Every hook an ember plugin can implement, documented in one place (project name 'ember')."""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("ember")


@hookspec
def ember_backends():
    """Return a list of backend objects (see ember.backend.Backend).

    Called when the plugin is loaded.  Constructing a backend must not touch a device or
    import a heavy library: do that in probe() and on first use.
    """


@hookspec
def ember_compat():
    """Return compat-matrix data: a dict in the compat_matrix TOML schema (facts and rules).

    `ember doctor` and `ember compat check` merge it with the built-in matrix.
    """


@hookspec
def ember_doctor_checks():
    """Return a list of callables; each takes no argument and returns a list of findings.

    A finding is a dict with keys reference, severity ('ok', 'warning', 'problem'),
    message, seen and fix.  Checks must not print.
    """


@hookspec
def ember_op_observer():
    """Return a callable(op_name, device, output) called after every op, or None.

    For profilers and tracers.  The dispatcher pays for this only when some plugin
    returns an observer.
    """
