"""Every hook an ember plugin can implement, documented in one place (project name 'ember').

A plugin module declares the plugin API its hooks implement, `PLUGIN_API = 1`, beside them
(ember.plugins.PLUGIN_API_VERSION is the one this ember speaks; none declared means 1).
"""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("ember")


@hookspec
def ember_backends():
    """Return a list of backend objects (see ember.backend.Backend and OptionalMembers).

    Called when the plugin is loaded.  Constructing a backend must not touch a device or
    import a heavy library: do that in probe() and on first use.  Each backend is checked
    then (ember.backend.validate: members, their types, kernel names); one that fails makes
    the plugin 'invalid', reported by `ember doctor`, and none of its backends is used.
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


@hookspec
def ember_process_groups():
    """Return a list of communication backends (see ember.distributed.backend.CommBackend).

    Each has a `name` (what init_process_group(backend=...) says: "mpi", "nccl"), the
    `device_types` it moves without staging through host memory, `probe()` and
    `connect(...)`, which makes the world communicator.  Constructing one must not import
    its library (MPI starts when mpi4py is imported): do that in connect().
    """
