"""The plugin host: entry-point discovery, lazy loading, version and plugin-API gating,
backend validation, failure capture, and messages that say why a device type is missing."""
from __future__ import annotations

import importlib
import os
import threading
import traceback
import warnings
from dataclasses import dataclass, field

import pluggy

from . import hookspecs
from ._version import __version__
from .backend import check_kernels, optional, validate
from .errors import DeviceUnavailableError

GROUP = "ember.plugins"
# The plugin API this ember speaks.  A plugin module declares the one it implements,
# `PLUGIN_API = 1` beside its hookimpls; one that declares none was written before the
# declaration existed, so it is taken to speak plugin API 1 (ASSUMED_PLUGIN_API).
PLUGIN_API_VERSION = 1
ASSUMED_PLUGIN_API = 1
# The requirement on `ember` a plugin for plugin API 1 declares: every ember 0.x speaks it
# (the next plugin API comes with ember 1.0).  README, compat_matrix/ember.toml and the
# plugin pyprojects say the same (tests/plugins/test_backend_contract.py checks them).
PLUGIN_API_RANGE = ">=0.1,<1"
hookimpl = pluggy.HookimplMarker("ember")

# Statuses of a plugin that is installed but serves nothing.
BROKEN = ("failed", "incompatible", "invalid", "disabled")

# First-party plugins: what to install when a device type has no plugin here.
INSTALL_HINTS = {
    "opencl": "pip install 'ember-opencl[pocl]'   (PoCL gives a CPU OpenCL device; "
              "a GPU needs its vendor's OpenCL driver)",
    "cuda": "pip install ember-cuda12   (or ember-cuda13 for CUDA 13 drivers >= 580)",
    "rocm": "pip install ember-rocm",
}


class PluginWarning(UserWarning):
    """Something about the installed plugins or EMBER_DISABLE_PLUGINS needs attention."""


@dataclass
class PluginRecord:
    """What the host knows about one entry point: its status and, when broken, why."""

    name: str
    value: str
    distribution: str = ""
    version: str = ""
    requires_ember: str = ""        # its requirement on `ember`, read before import
    plugin_api: int | None = None   # the PLUGIN_API its module declares (None: none declared)
    status: str = "not loaded"      # "loaded", "not loaded" or one of BROKEN
    error: str = ""                 # traceback or explanation
    fix: str = ""                   # the next thing to do, for a broken plugin
    warnings: list = field(default_factory=list)      # validation notes of a loaded backend
    device_types: list = field(default_factory=list)  # served (or, when invalid, claimed)
    hook_errors: dict = field(default_factory=dict)   # hook name -> traceback, loaded plugin

    @property
    def label(self) -> str:
        """'toy' (ember-toy 1.0): how messages name it."""
        dist = " ".join(x for x in (self.distribution, self.version) if x)
        return f"{self.name!r}" + (f" ({dist})" if dist else "")


_lock = threading.RLock()
_records: dict[str, PluginRecord] | None = None
_backends: dict[str, object] = {}     # device type (and aliases) -> backend
_checked: dict[int, dict] = {}        # kernel tables already validated (held: ids stay unique)
_warned: set[str] = set()             # EMBER_DISABLE_PLUGINS names already warned about
_pm: pluggy.PluginManager | None = None
_observers: tuple = ()                # the loaded plugins' ember_op_observer callables
_declared_names = None                # ops' declared_names (declare_kernel_names)
_on_reset: list = []                  # what _reset_for_tests also calls (on_reset_for_tests)
_observer_sink = None                 # the dispatcher's setter (watch_observers)
_num_threads: int | None = None       # ember.set_num_threads's count, for later backends too


def manager() -> pluggy.PluginManager:
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager("ember")
        pm.add_hookspecs(hookspecs)
        _pm = pm
    return _pm


def _ember_version() -> str:
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
    _warn_unknown_disabled()
    return records


# -- EMBER_DISABLE_PLUGINS --------------------------------------------------------------------
def _disabled() -> set[str]:
    raw = os.environ.get("EMBER_DISABLE_PLUGINS", "")
    return {x.strip() for x in raw.split(",") if x.strip()}


def _disabled_by(rec: PluginRecord) -> str:
    """The EMBER_DISABLE_PLUGINS name that blocks this plugin (its entry point or its
    distribution), or ''."""
    names = _disabled()
    return next((n for n in (rec.name, rec.distribution) if n and n in names), "")


def unknown_disabled() -> list[str]:
    """EMBER_DISABLE_PLUGINS names that match no installed entry point or distribution."""
    recs = _discover()
    known = set(recs) | {r.distribution for r in recs.values() if r.distribution}
    return sorted(_disabled() - known)


def _warn_unknown_disabled() -> None:
    new = [n for n in unknown_disabled() if n not in _warned]
    if new:
        _warned.update(new)
        warnings.warn(
            f"EMBER_DISABLE_PLUGINS names {', '.join(map(repr, new))}: no installed plugin "
            "has that name, so nothing is disabled by it; the plugins here are "
            f"{', '.join(sorted(_discover()))} (entry-point names; distribution names work too)",
            PluginWarning, stacklevel=3)


# -- gates before and after import ------------------------------------------------------------
def _range_refusal(rec: PluginRecord) -> tuple[str, str]:
    """('', '') when the plugin's range on `ember` admits this ember, else (why, fix)."""
    if not rec.requires_ember:
        return "", ""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version
    spec = rec.requires_ember.strip("()[] ")
    here = _ember_version()
    try:
        specs = SpecifierSet(spec)
    except InvalidSpecifier:
        return (f"its requirement on ember ({rec.requires_ember!r}) is not a valid version "
                "range", f"report this to the authors of {rec.distribution}")
    if specs.contains(here, prereleases=True):
        return "", ""
    newer = False
    for s in specs:
        try:
            newer |= s.operator in (">", ">=", "~=", "==", "===") and Version(
                s.version.rstrip(".*")) > Version(here)
        except InvalidVersion:
            pass
    why = (f"{rec.distribution} {rec.version} requires ember{spec}; this is ember {here} "
           f"(plugin API {PLUGIN_API_VERSION})")
    if newer:
        return why, (f"upgrade ember to a release in ember{spec}, or install a release of "
                     f"{rec.distribution} made for ember {here}: "
                     f"pip install '{rec.distribution}<{rec.version}'")
    return why, (f"install a release of {rec.distribution} made for ember {here}: "
                 f"pip install -U {rec.distribution}")


def _api_refusal(obj, rec: PluginRecord) -> tuple[str, str]:
    """('', '') when the plugin module's PLUGIN_API is this ember's, else (why, fix)."""
    declared = getattr(obj, "PLUGIN_API", None)
    rec.plugin_api = declared
    api = ASSUMED_PLUGIN_API if declared is None else declared
    if type(api) is not int:
        return (f"its PLUGIN_API must be an int, got {api!r}",
                f"report this to the authors of {rec.distribution}")
    if api == PLUGIN_API_VERSION:
        return "", ""
    said = (f"declares PLUGIN_API = {api}" if declared is not None
            else f"declares no PLUGIN_API (taken as {ASSUMED_PLUGIN_API})")
    why = (f"{rec.distribution} {rec.version} {said}; this ember ({_ember_version()}) "
           f"speaks plugin API {PLUGIN_API_VERSION}")
    if api > PLUGIN_API_VERSION:
        return why, (f"upgrade ember to a release that speaks plugin API {api}, or install a "
                     f"release of {rec.distribution} for plugin API {PLUGIN_API_VERSION}: "
                     f"pip install '{rec.distribution}<{rec.version}'")
    return why, (f"install a release of {rec.distribution} for plugin API "
                 f"{PLUGIN_API_VERSION}: pip install -U {rec.distribution}")


def declare_kernel_names(source) -> None:
    """source() -> every name a backend's kernel table may hold.  The op declarations
    (ops/_op.py) install it when they load, so the host never imports the ops above it;
    `import ember` loads them before any plugin, so every backend's names are checked."""
    global _declared_names
    _declared_names = source


def _declared() -> frozenset | None:
    """The declared kernel names, or None (names not checked) before ops has loaded."""
    return None if _declared_names is None else _declared_names()


def _refuse_backends(rec: PluginRecord, found: list, problems: list[str]) -> None:
    rec.status = "invalid"
    rec.device_types = [b.name for b in found if isinstance(getattr(b, "name", None), str)]
    rec.error = "\n".join(problems)        # one line each; see ember.backend
    rec.fix = (f"install a release of {rec.distribution or rec.name} that meets it "
               f"(pip install -U {rec.distribution or rec.name}) or report this to its "
               f"authors; EMBER_DISABLE_PLUGINS={rec.name} silences it")


def load(name: str) -> PluginRecord:
    """Load one plugin by entry-point name; never raises, the record says what happened."""
    with _lock:
        rec = _discover().get(name)
        if rec is None:
            raise KeyError(name)
        if rec.status != "not loaded":
            return rec
        token = _disabled_by(rec)
        if token:
            rec.status = "disabled"
            rec.error = (f"blocked by EMBER_DISABLE_PLUGINS="
                         f"{os.environ.get('EMBER_DISABLE_PLUGINS', '')}")
            rec.fix = f"remove {token!r} from EMBER_DISABLE_PLUGINS to use it"
            if name == "cpu":
                rec.fix += (" (ember needs the CPU backend for CPU tensors, the default "
                            "device, and for the CPU fallback)")
            return rec
        why, fix = _range_refusal(rec)
        if why:
            rec.status, rec.error, rec.fix = "incompatible", why, fix
            return rec
        try:
            ep = getattr(rec, "_ep", None)
            obj = ep.load() if ep is not None else importlib.import_module(rec.value)
            why, fix = _api_refusal(obj, rec)
            if why:
                rec.status, rec.error, rec.fix = "incompatible", why, fix
                return rec
            pm = manager()
            pm.register(obj, name=name)
            pm.check_pending()
            found = [b for result in _call_one(pm, obj, "ember_backends") for b in result or ()]
            problems, notes = [], []
            declared = _declared()
            for backend in found:
                bad, odd = validate(backend, declared)
                label = f"backend {getattr(backend, 'name', '?')!r} ({type(backend).__name__})"
                problems += [f"{label}: {p}" for p in bad]
                notes += [f"{label}: {w}" for w in odd]
            if problems:
                _refuse_backends(rec, found, problems)
                pm.unregister(name=name)
                return rec
            for backend in found:
                kinds = [backend.name, *optional(backend, "aliases")]
                for kind in kinds:
                    # the first plugin to claim a type keeps it; aliases never displace
                    _backends.setdefault(kind, backend)
                rec.device_types.extend(kinds)
                if _num_threads is not None:         # before its first probe
                    _apply_threads(backend, _num_threads)
            rec.warnings = notes
            rec.status = "loaded"
        except BaseException as exc:  # a broken plugin must never break ember
            if isinstance(exc, KeyboardInterrupt):
                raise
            rec.status = "failed"
            rec.error = "".join(traceback.format_exception(exc))
            dist = rec.distribution or rec.name
            rec.fix = (f"reinstall it (pip install --force-reinstall {dist}) or remove it "
                       f"(pip uninstall {dist}); if it persists, report the traceback "
                       "(`ember doctor`) to its authors")
            try:
                manager().unregister(name=name)
            except Exception as undo:  # noqa: BLE001  (record it beside the failure)
                rec.error += ("\nunregistering it failed too, so some of its hooks may still "
                              "be called:\n" + "".join(traceback.format_exception(undo)))
        finally:
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


# -- kernel tables ----------------------------------------------------------------------------
def kernel_table(backend, index: int | None = None) -> dict:
    """The kernel table for device `index` of a backend (its `kernels_for(index)` where it
    has per-device tables, else `kernels`), checked against the declared op names the
    first time it is seen.  A faulty table makes the backend's plugin 'invalid' and raises
    DeviceUnavailableError saying why."""
    per_device = optional(backend, "kernels_for")
    table = per_device(index) if per_device is not None else backend.kernels
    if id(table) not in _checked:
        problems = check_kernels(table, _declared())
        with _lock:
            if problems:
                _refuse_loaded(backend, problems)
                raise DeviceUnavailableError(unavailable_message(backend.name))
            _checked[id(table)] = table
    return table


def _refuse_loaded(backend, problems: list[str]) -> None:
    """A loaded backend whose table turned out faulty: its plugin becomes 'invalid'."""
    label = f"backend {backend.name!r} ({type(backend).__name__})"
    for kind in [k for k, b in _backends.items() if b is backend]:
        del _backends[kind]
    for rec in _discover().values():
        if rec.status == "loaded" and backend.name in rec.device_types:
            _refuse_backends(rec, [backend], [f"{label}: {p}" for p in problems])


def available_kernel_sources(op_name: str) -> tuple[str, ...]:
    """The device types that can run `op_name` here, 'cpu' first: backends that are loaded
    (every plugin is loaded first, so the answer does not depend on what ran before),
    available by their probe (probed once each), with a kernel of that name.  The CPU
    fallback may run the op when 'cpu' is among them."""
    load_all()
    found = []
    for kind, backend in list(_backends.items()):
        if kind != backend.name or not _probe(backend).available:
            continue          # an alias, or a backend that cannot run here
        try:
            if op_name in kernel_table(backend):
                found.append(kind)
        except DeviceUnavailableError:
            continue          # refused just now: its record says why
    return tuple(sorted(found, key=lambda k: (k != "cpu", k)))


# -- availability and what to say when there is none ----------------------------------------
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


STATE_WORDS = {
    "failed": "is installed but failed to import",
    "incompatible": "is installed but refused: it is made for another ember",
    "invalid": "is installed but its backend was refused",
    "disabled": "is installed but disabled",
}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def broken_for(kind: str) -> list[PluginRecord]:
    """Installed plugins that would serve a device type but do not: failed, incompatible,
    invalid or disabled ones claiming it, or named after it (a plugin that failed to
    import never said which types it serves)."""
    return [r for r in _discover().values() if r.status in BROKEN
            and (kind in r.device_types or r.name.startswith(kind))]


def unavailable_message(kind: str) -> str:
    """Why no backend serves a device type, and the fix (DeviceUnavailableError's text)."""
    mine = broken_for(kind)
    tail = "\n  (`ember doctor` shows every backend and why it is or is not usable)"
    if mine:
        parts = []
        for rec in mine:
            if rec.status == "invalid":     # every problem, one line each
                why = ":" + "".join(f"\n    - {line}" for line in rec.error.splitlines())
            else:
                why = ": " + _last_line(rec.error)
            parts.append(f"\n  plugin {rec.label} {STATE_WORDS[rec.status]}{why}"
                         f"\n  fix: {rec.fix}")
        return f"device type '{kind}' is not available:{''.join(parts)}{tail}"
    others = [r for r in _discover().values() if r.status in BROKEN]
    notes = "".join(f"\n  plugin {r.label} {r.status}: {_last_line(r.error)}" for r in others)
    hint = INSTALL_HINTS.get(kind, f"install the plugin that provides '{kind}' devices")
    return (f"device type '{kind}' is not available: no installed plugin provides it."
            f"{notes}\n  fix: {hint}{tail}")


def backend_for(kind: str):
    """The available backend for a device type, or DeviceUnavailableError saying why not."""
    backend = find_backend(kind)
    if backend is None:
        raise DeviceUnavailableError(unavailable_message(kind))
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


def device_count(kind: str) -> int:
    """How many devices the available backend for a device type lists: 0 when none serves
    it, or when its plugin or its devices() fails (an availability question never raises:
    a broken third-party plugin means "not available")."""
    try:
        backend = try_backend_for(kind)
        return 0 if backend is None else len(backend.devices())
    except Exception:  # noqa: BLE001
        return 0


def loaded_backends() -> dict[str, object]:
    return dict(_backends)


def set_num_threads(n: int) -> None:
    """Hand ember.set_num_threads's count to every loaded backend (its optional
    set_num_threads) and to each backend loaded from now on."""
    global _num_threads
    with _lock:
        _num_threads = n
        backends = {id(b): b for b in _backends.values()}.values()
    for backend in backends:
        _apply_threads(backend, n)


def num_threads() -> int | None:
    """The count ember.set_num_threads set (None: never called)."""
    return _num_threads


def _apply_threads(backend, n: int) -> None:
    setter = optional(backend, "set_num_threads")
    if setter is not None:
        setter(n)


# -- what the doctor and the CLI ask ----------------------------------------------------------
def host_findings() -> list[dict]:
    """What the host itself found, as doctor findings (reference, severity, message, seen,
    fix, detail): refused backends, validation warnings, EMBER_DISABLE_PLUGINS names that
    match nothing, the CPU backend disabled, hooks of loaded plugins that raised.  Loads
    every plugin."""
    recs = load_all()
    raw = os.environ.get("EMBER_DISABLE_PLUGINS", "")
    found = []
    unknown = unknown_disabled()
    if unknown:
        found.append({"reference": "plugin-disable-unknown", "severity": "warning",
                      "message": f"EMBER_DISABLE_PLUGINS names {', '.join(unknown)}: no "
                                 "installed plugin has that name, so nothing is disabled by it",
                      "seen": f"EMBER_DISABLE_PLUGINS={raw}; plugins here: "
                              f"{', '.join(r.name for r in recs)}",
                      "fix": "use an entry-point or distribution name from `ember doctor`'s "
                             "plugin table, or unset EMBER_DISABLE_PLUGINS"})
    for rec in recs:
        if rec.status == "invalid":
            found.append({"reference": "plugin-invalid", "severity": "problem",
                          "message": f"plugin {rec.label}: its backend "
                                     f"{', '.join(rec.device_types)} was refused: "
                                     f"{rec.error.splitlines()[0]}",
                          "seen": rec.error, "fix": rec.fix})
        elif rec.status == "loaded" and rec.warnings:
            found.append({"reference": "plugin-backend-unused-member", "severity": "warning",
                          "message": f"plugin {rec.label}: {rec.warnings[0]}",
                          "seen": "\n".join(rec.warnings[1:]),
                          "fix": f"rename the member, or report it to the authors of "
                                 f"{rec.distribution or rec.name}"})
        elif rec.name == "cpu" and rec.status == "disabled":
            found.append({"reference": "cpu-disabled", "severity": "problem",
                          "message": "cpu: the CPU backend is disabled by "
                                     "EMBER_DISABLE_PLUGINS: every CPU tensor (the default "
                                     "device) fails with DeviceUnavailableError",
                          "seen": f"EMBER_DISABLE_PLUGINS={raw}", "fix": rec.fix})
        for hook, text in rec.hook_errors.items():
            found.append({"reference": "plugin-hook-failed", "severity": "problem",
                          "message": f"plugin {rec.label}: its {hook} hook raised "
                                     f"({_last_line(text)}); ember goes on without it",
                          "seen": "", "detail": text,
                          "fix": f"upgrade it (pip install -U {rec.distribution or rec.name}) "
                                 "or report the traceback to its authors; "
                                 f"EMBER_DISABLE_PLUGINS={rec.name} silences it"})
    return found


def compat_data() -> list:
    """ember_compat() results of every loaded plugin."""
    return [x for x in manager().hook.ember_compat() if x]


def doctor_checks() -> list:
    return [c for group in manager().hook.ember_doctor_checks() if group for c in group]


def watch_observers(sink) -> None:
    """Call sink(observers) now and whenever loading a plugin changes them.  The dispatcher
    installs its setter here when it loads, so the host never imports the dispatcher."""
    global _observer_sink
    _observer_sink = sink
    sink(_observers)


def _reset_observers() -> None:
    """Ask every registered plugin for its op observer.  One whose hook raises is left out
    and its record keeps the traceback (`ember doctor` reports it); the others stay."""
    global _observers
    observers = []
    recs = _discover()
    # in pluggy's calling order (the plugin registered last first); a wrapper returns no
    # observer of its own, as when pluggy calls the hook
    for impl in reversed(manager().hook.ember_op_observer.get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:
            continue
        try:
            observer = impl.function()
        except Exception:  # noqa: BLE001  (a broken plugin must never break ember)
            rec = recs.get(impl.plugin_name)
            if rec is not None:
                rec.hook_errors["ember_op_observer"] = traceback.format_exc()
            continue
        if observer:
            observers.append(observer)
    _observers = tuple(observers)
    if _observer_sink is not None:
        _observer_sink(_observers)


def _reset_for_tests() -> None:
    """Forget every plugin (tests that install plugins call this)."""
    global _records, _pm
    with _lock:
        _records = None
        _pm = None
        _backends.clear()
        _checked.clear()
        importlib.invalidate_caches()
        for forget in _on_reset:
            forget()


def on_reset_for_tests(forget) -> None:
    """Have _reset_for_tests call forget() too (device.py: drop the backends that Device
    objects bound), so the host deals in device-type strings and never imports device."""
    _on_reset.append(forget)
