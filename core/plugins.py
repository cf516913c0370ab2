"""The plugin host: entry-point discovery, lazy loading, version gating, failure capture."""
from __future__ import annotations

import importlib
import os
import threading
import traceback
from dataclasses import dataclass, field

import pluggy

from . import hookspecs
from .errors import DeviceUnavailableError

GROUP = "ember.plugins"
PLUGIN_API_VERSION = 1
hookimpl = pluggy.HookimplMarker("ember")

# First-party plugins: what to install when a device type has no plugin here.
INSTALL_HINTS = {
    "opencl": "pip install 'ember-opencl[pocl]'   (PoCL gives a CPU OpenCL device; "
              "a GPU needs its vendor's OpenCL driver)",
    "cuda": "pip install ember-cuda12   (or ember-cuda13 for CUDA 13 drivers >= 580)",
    "rocm": "pip install ember-rocm",
}


@dataclass
class PluginRecord:
    """What the host knows about one entry point: its status and, when broken, why."""

    name: str
    value: str
    distribution: str = ""
    version: str = ""
    requires_ember: str = ""        # the plugin-API range: its requirement on `ember`
    status: str = "not loaded"      # loaded | failed | incompatible | disabled | not loaded
    error: str = ""                 # traceback or explanation
    device_types: list = field(default_factory=list)


_lock = threading.RLock()
_records: dict[str, PluginRecord] | None = None
_backends: dict[str, object] = {}     # device type (and aliases) -> backend
_pm: pluggy.PluginManager | None = None


def manager() -> pluggy.PluginManager:
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager("ember")
        pm.add_hookspecs(hookspecs)
        _pm = pm
    return _pm


def _ember_version() -> str:
    from . import __version__
    return __version__


def _discover() -> dict[str, PluginRecord]:
    global _records
    if _records is not None:
        return _records
    from importlib.metadata import entry_points
    records: dict[str, PluginRecord] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in records:
            continue
        rec = PluginRecord(name=ep.name, value=ep.value)
        dist = getattr(ep, "dist", None)
        if dist is not None:
            rec.distribution = dist.metadata["Name"] or ""
            rec.version = dist.version or ""
            for req in dist.requires or ():
                head = req.split(";")[0].strip()
                if head.startswith("ember") and head[5:6] in ("", " ", "<", ">", "=", "!", "~"):
                    rec.requires_ember = head[5:].strip()
        rec._ep = ep                              # type: ignore[attr-defined]
        records[ep.name] = rec
    if "cpu" not in records:
        # Running from a source tree without installed metadata: the CPU backend is
        # still registered, through the same load path.
        rec = PluginRecord(name="cpu", value="ember.backends.cpu", distribution="ember")
        records["cpu"] = rec
    _records = records
    return records


def _disabled() -> set[str]:
    raw = os.environ.get("EMBER_DISABLE_PLUGINS", "")
    return {x.strip() for x in raw.split(",") if x.strip()}


def _compatible(rec: PluginRecord) -> str:
    """'' when the plugin's range on `ember` admits this ember, else the explanation."""
    if not rec.requires_ember:
        return ""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    spec = rec.requires_ember.strip("()[] ")
    try:
        ok = SpecifierSet(spec).contains(_ember_version(), prereleases=True)
    except InvalidSpecifier:
        return f"its requirement on ember ({rec.requires_ember!r}) is not a valid range"
    if ok:
        return ""
    return (f"{rec.distribution} {rec.version} supports ember{spec} (plugin API "
            f"{PLUGIN_API_VERSION} is ember {_ember_version()}); install a release of "
            f"{rec.distribution} made for this ember: pip install -U {rec.distribution}")


def load(name: str) -> PluginRecord:
    """Load one plugin by entry-point name; never raises, the record says what happened."""
    with _lock:
        rec = _discover().get(name)
        if rec is None:
            raise KeyError(name)
        if rec.status != "not loaded":
            return rec
        if name in _disabled():
            rec.status, rec.error = "disabled", "blocked by EMBER_DISABLE_PLUGINS"
            return rec
        why = _compatible(rec)
        if why:
            rec.status, rec.error = "incompatible", why
            return rec
        try:
            ep = getattr(rec, "_ep", None)
            obj = ep.load() if ep is not None else importlib.import_module(rec.value)
            pm = manager()
            pm.register(obj, name=name)
            pm.check_pending()
            found = []
            for result in _call_one(pm, obj, "ember_backends"):
                for backend in result or ():
                    found.append(backend)
            for backend in found:
                kinds = [backend.name, *getattr(backend, "aliases", ())]
                for kind in kinds:
                    # the first plugin to claim a type keeps it; aliases never displace
                    _backends.setdefault(kind, backend)
                rec.device_types.extend(kinds)
            rec.status = "loaded"
        except BaseException as exc:  # a broken plugin must never break ember
            if isinstance(exc, KeyboardInterrupt):
                raise
            rec.status = "failed"
            rec.error = "".join(traceback.format_exception(exc))
            try:
                manager().unregister(name=name)
            except Exception:
                pass
        _reset_observers()
        return rec


def _call_one(pm, plugin, hook_name):
    """Call one hook on one plugin only (pluggy calls every registered plugin)."""
    impls = [i for i in getattr(pm.hook, hook_name).get_hookimpls() if i.plugin is plugin]
    return [impl.function() for impl in impls]


def load_all() -> list[PluginRecord]:
    recs = _discover()
    for name in list(recs):
        load(name)
    return list(recs.values())


def records() -> list[PluginRecord]:
    return list(_discover().values())


def known_device_types() -> set[str]:
    """Types served by loaded backends, plus entry-point names (a plugin is usually named
    after its device type; loading it, or failing to, tells the rest)."""
    names = set(_backends)
    for rec in _discover().values():
        names.update(rec.device_types)
        if rec.status != "loaded":
            names.add(rec.name)
    return names


def _candidates(kind: str) -> list[str]:
    recs = _discover()
    first = [n for n in recs if n.startswith(kind) and recs[n].status == "not loaded"]
    rest = [n for n in recs if n not in first and recs[n].status == "not loaded"]
    return first + rest


def find_backend(kind: str):
    """The backend serving a device type, loading plugins lazily; None if none provides it."""
    backend = _backends.get(kind)
    if backend is not None:
        return backend
    with _lock:
        for name in _candidates(kind):
            load(name)
            backend = _backends.get(kind)
            if backend is not None:
                return backend
    return None


def _probe(backend):
    probe = getattr(backend, "_ember_probe", None)
    if probe is None:
        try:
            probe = backend.probe()
        except Exception as exc:   # probes must not raise; if one does, report it
            from .backend import Probe
            probe = Probe(False, f"the backend's probe raised {type(exc).__name__}: {exc}",
                          "report this to the plugin's authors", "probe-raised")
        try:
            backend._ember_probe = probe
        except AttributeError:
            pass
    return probe


def backend_for(kind: str):
    """The available backend for a device type, or DeviceUnavailableError saying why not."""
    backend = find_backend(kind)
    if backend is None:
        failed = [r for r in _discover().values() if r.status in ("failed", "incompatible",
                                                                 "disabled")]
        notes = "".join(f"\n  plugin {r.name!r} ({r.distribution or 'unknown'}) {r.status}: "
                        f"{r.error.strip().splitlines()[-1] if r.error else ''}" for r in failed)
        hint = INSTALL_HINTS.get(kind, f"install the plugin that provides '{kind}' devices")
        raise DeviceUnavailableError(
            f"device type '{kind}' is not available: no installed plugin provides it."
            f"{notes}\n  fix: {hint}\n  (`ember doctor` shows every backend and why it is "
            "or is not usable)")
    probe = _probe(backend)
    if not probe.available:
        raise DeviceUnavailableError(
            f"device type '{kind}' is not available here: {probe.reason}"
            + (f"\n  fix: {probe.fix}" if probe.fix else "")
            + "\n  (`ember doctor` shows the details)")
    return backend


def try_backend_for(kind: str):
    """Like backend_for, but None instead of an error."""
    backend = find_backend(kind)
    if backend is None or not _probe(backend).available:
        return None
    return backend


def loaded_backends() -> dict[str, object]:
    return dict(_backends)


def compat_data() -> list:
    """ember_compat() results of every loaded plugin."""
    return [x for x in manager().hook.ember_compat() if x]


def doctor_checks() -> list:
    return [c for group in manager().hook.ember_doctor_checks() if group for c in group]


def _reset_observers() -> None:
    from . import dispatch
    try:
        observers = [o for o in manager().hook.ember_op_observer() if o]
    except Exception:
        observers = []
    dispatch.set_observers(observers)


def _reset_for_tests() -> None:
    """Forget every plugin (tests that install plugins call this)."""
    global _records, _pm
    with _lock:
        _records = None
        _pm = None
        _backends.clear()
        importlib.invalidate_caches()
        from .device import Device
        for dev in list(Device._interned.values()):
            dev._backend = dev._kernels = None
