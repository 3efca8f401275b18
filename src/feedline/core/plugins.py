"""Plugin discovery and loading (pluggy over the ``feedline.plugins`` entry-point group).

Plugins load lazily, on the first ``fn.<name>`` access or ``Pipeline.build()``, never at
``import feedline`` (pluggy itself is only imported then). Each plugin loads and registers
inside its own ``try``: a broken plugin is recorded (distribution, version, entry point, cause),
warned about, and named in the error raised when someone asks for an operator that is missing;
the others load normally.

Environment variables:
    FEEDLINE_DISABLE_PLUGIN_AUTOLOAD: ``1`` loads no entry point except those in FEEDLINE_PLUGINS.
    FEEDLINE_PLUGINS: comma-separated entry-point names; when set, only these are loaded.
    FEEDLINE_DISABLED_PLUGINS: comma-separated entry-point names never loaded.
"""

from __future__ import annotations

import contextlib
import os
import threading
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from feedline.core.registry import Registry

__all__ = [
    "ENTRY_POINT_GROUP",
    "PluginFailure",
    "PluginInfo",
    "PluginSystem",
    "PluginWarning",
    "get_plugin_system",
    "get_registry",
    "register_plugin",
    "use_plugin_system",
]

ENTRY_POINT_GROUP = "feedline.plugins"
_HOOK_ORDER = (
    "feedline_register_operators",
    "feedline_register_kernels",
    "feedline_register_codecs",
    "feedline_register_iterators",
)


class PluginWarning(UserWarning):
    """A plugin failed to load; feedline goes on without it."""


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that failed to load or register."""

    name: str
    distribution: str
    version: str
    entry_point: str
    cause: str
    details: str = ""

    def describe(self) -> str:
        """One line naming the plugin, where it comes from and why it failed."""
        return (
            f"plugin {self.name!r} ({self.distribution} {self.version}, entry point "
            f"{self.entry_point}) failed: {self.cause}"
        )


@dataclass
class PluginInfo:
    """A loaded plugin and what it registered."""

    name: str
    distribution: str
    version: str
    entry_point: str
    operators: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    codecs: list[str] = field(default_factory=list)
    iterators: list[str] = field(default_factory=list)


def _env_list(name: str) -> list[str] | None:
    items = [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]
    return items or None


class PluginSystem:
    """A plugin manager with its own registry.

    Args:
        autoload: discover entry points (subject to the environment variables).
    """

    def __init__(self, autoload: bool = True) -> None:
        self.registry = Registry()
        self.failures: list[PluginFailure] = []
        self.plugins: list[PluginInfo] = []
        self._autoload = autoload
        self._pending: list[tuple[Any, PluginInfo]] = []
        self._loaded = False
        self._lock = threading.RLock()

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Register a plugin object or module in code (applied now if already loaded)."""
        name = name or getattr(plugin, "__name__", type(plugin).__name__)
        info = PluginInfo(name, "<code>", "", name)
        with self._lock:
            if self._loaded:
                self._apply([(plugin, info)])
            else:
                self._pending.append((plugin, info))

    def ensure_loaded(self) -> Registry:
        """Load every plugin once (thread-safe) and return the registry."""
        if self._loaded:
            return self.registry
        with self._lock:
            if not self._loaded:
                candidates = self._discover() + self._pending
                self._pending = []
                self._apply(candidates)
                self._loaded = True
        return self.registry

    def _discover(self) -> list[tuple[Any, PluginInfo]]:
        only = _env_list("FEEDLINE_PLUGINS")
        disabled = set(_env_list("FEEDLINE_DISABLED_PLUGINS") or ())
        autoload = self._autoload and os.environ.get("FEEDLINE_DISABLE_PLUGIN_AUTOLOAD", "") in (
            "",
            "0",
        )
        if not autoload and not only:
            return []
        found: list[tuple[Any, PluginInfo]] = []
        seen: set[tuple[str, str]] = set()
        entry_points = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        for ep in entry_points:
            if ep.name in disabled or (only is not None and ep.name not in only):
                continue
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else "<unknown>"
            version = dist.version if dist is not None else ""
            if (ep.name, ep.value) in seen:
                continue
            seen.add((ep.name, ep.value))
            info = PluginInfo(ep.name, dist_name, version, ep.value)
            try:
                plugin = ep.load()
            except Exception as exc:
                self._record_failure(info, exc)
                continue
            found.append((plugin, info))
        return found

    def _record_failure(self, info: PluginInfo, exc: BaseException) -> None:
        failure = PluginFailure(
            info.name,
            info.distribution,
            info.version,
            info.entry_point,
            f"{type(exc).__name__}: {exc}",
            "".join(traceback.format_exception(exc)),
        )
        self.failures.append(failure)
        warnings.warn(failure.describe(), PluginWarning, stacklevel=4)

    def _apply(self, candidates: list[tuple[Any, PluginInfo]]) -> None:
        # Imported here so that ``import feedline`` stays light: pluggy loads with the plugins.
        import pluggy

        from feedline.core import hookspecs

        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        accepted: list[tuple[Any, PluginInfo]] = []
        for plugin, info in candidates:
            try:
                manager.register(plugin, name=f"{info.name}@{id(plugin)}")
                accepted.append((plugin, info))
            except Exception as exc:
                self._record_failure(info, exc)
        by_key = {f"{info.name}@{id(plugin)}": (plugin, info) for plugin, info in accepted}
        broken: set[str] = set()
        for hook_name in _HOOK_ORDER:
            hook = getattr(manager.hook, hook_name)
            for impl in reversed(hook.get_hookimpls()):
                if impl.plugin_name in broken:
                    continue
                plugin, info = by_key[impl.plugin_name]
                if self._call(impl.function, hook_name, info):
                    continue
                broken.add(impl.plugin_name)
        self.plugins.extend(info for key, (_, info) in by_key.items() if key not in broken)

    def _call(self, function: Any, hook_name: str, info: PluginInfo) -> bool:
        registry = self.registry
        snapshot = registry.snapshot()
        registry.current_owner = info.name
        try:
            function(registry=registry)
        except Exception as exc:
            registry.restore(snapshot)
            self._record_failure(info, exc)
            return False
        finally:
            registry.current_owner = "<code>"
        added = registry.diff(snapshot)
        info.operators += added["operators"]
        info.kernels += added["kernels"]
        info.codecs += added["codecs"]
        info.iterators += added["iterators"]
        return True

    def missing_operator_hint(self) -> str:
        """A sentence naming the plugins that failed, for 'unknown operator' errors."""
        if not self.failures:
            return ""
        return " Plugins that failed to load (one may provide it): " + "; ".join(
            f.describe() for f in self.failures
        )


_system_lock = threading.Lock()
_system: PluginSystem | None = None


def get_plugin_system() -> PluginSystem:
    """The active plugin system (created on first use)."""
    global _system
    if _system is None:
        with _system_lock:
            if _system is None:
                _system = PluginSystem()
    return _system


def get_registry() -> Registry:
    """The active registry, with every plugin loaded."""
    return get_plugin_system().ensure_loaded()


def register_plugin(plugin: Any, name: str | None = None) -> None:
    """Register a plugin object or module in code, as an entry point would."""
    get_plugin_system().register(plugin, name)


@contextlib.contextmanager
def use_plugin_system(system: PluginSystem | None = None) -> Iterator[PluginSystem]:
    """Make ``system`` (default: a fresh auto-loading one) active inside the block.

    Tests use it to give each test its own registry.
    """
    global _system
    previous = _system
    _system = system if system is not None else PluginSystem()
    try:
        yield _system
    finally:
        _system = previous
