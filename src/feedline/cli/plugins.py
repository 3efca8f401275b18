"""``feedline plugins`` and ``feedline ops``: what is installed, and each operator's docs.

Both count operators the same way: public operators are those whose schema is not ``hidden``
(arithmetic behind ``+``/``*``) and none of whose name segments starts with ``_``
(``decoders._image_resize``); ``--all`` adds the others.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from feedline.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command, CommandError, plain_text
from feedline.core.plugins import PluginSystem, get_plugin_system
from feedline.core.registry import OperatorEntry

__all__ = ["OPS", "PLUGINS", "is_public", "plugin_report"]


def is_public(entry: OperatorEntry) -> bool:
    """Whether ``feedline ops`` lists the operator without ``--all``."""
    name = entry.schema.name
    return not entry.schema.hidden and not any(part.startswith("_") for part in name.split("."))


def _kernel_op(kernel: str) -> str:
    return kernel.rpartition(":")[0]


def plugin_report(system: PluginSystem, include_all: bool = False) -> dict[str, Any]:
    """The loaded plugins, what each provides and the failures, as JSON-able data."""
    registry = system.ensure_loaded()
    shown = {name for name, entry in registry.operators.items() if include_all or is_public(entry)}
    plugins = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "entry_point": info.entry_point,
            "operators": [op for op in info.operators if op in shown],
            "kernels": [k for k in info.kernels if _kernel_op(k) in shown],
            "codecs": list(info.codecs),
            "iterators": list(info.iterators),
        }
        for info in system.plugins
    ]
    failures = [
        {key: value for key, value in asdict(failure).items() if key != "details"}
        for failure in system.failures
    ]
    return {
        "plugins": plugins,
        "failures": failures,
        "operators": len(shown),
        "all_operators": len(registry.operators),
    }


def _print_plugins(report: dict[str, Any], include_all: bool) -> None:
    for plugin in report["plugins"]:
        print(
            f"{plugin['name']}  ({plugin['distribution']} {plugin['version']}, "
            f"{plugin['entry_point']})"
        )
        for label in ("operators", "kernels", "codecs", "iterators"):
            if plugin[label]:
                print(f"    {label}: {', '.join(plugin[label])}")
    for failure in report["failures"]:
        print(
            f"FAILED {failure['name']}  ({failure['distribution']} {failure['version']}, "
            f"{failure['entry_point']}): {failure['cause']}"
        )
    kind = "operators" if include_all else "public operators"
    hidden = report["all_operators"] - report["operators"]
    more = f" ({hidden} internal ones shown with --all)" if hidden else ""
    print(
        f"{len(report['plugins'])} plugins, {report['operators']} {kind}{more}, "
        f"{len(report['failures'])} failed plugins"
    )


def _run_plugins(args: argparse.Namespace) -> int:
    report = plugin_report(get_plugin_system(), args.all)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_plugins(report, args.all)
    return EXIT_FAILED if report["failures"] else EXIT_OK


def _configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--all", action="store_true", help="include internal operators (arithmetic, _private)"
    )


PLUGINS = Command(
    "plugins",
    "installed plugins, what they provide, what failed to load",
    "List every plugin found through the 'feedline.plugins' entry points: its\n"
    "distribution and version, the operators, kernels, codecs and iterators it\n"
    "registered, and the plugins that failed to load with their cause.\n"
    "Exits with status 1 when a plugin failed.",
    _configure_plugins,
    _run_plugins,
)


def _describe_kernels(entry: OperatorEntry, system: PluginSystem) -> list[str]:
    dists = {info.name: f"{info.distribution} {info.version}".strip() for info in system.plugins}
    lines = []
    for kernel in entry.kernel_entries:
        where = dists.get(kernel.owner, "")
        lines.append(
            f"    {kernel.device:6s} plugin {kernel.owner}" + (f" ({where})" if where else "")
        )
    return lines


def _run_ops(args: argparse.Namespace) -> int:
    system = get_plugin_system()
    registry = system.ensure_loaded()
    if args.name is None:
        for name, entry in sorted(registry.operators.items()):
            if args.all or is_public(entry):
                doc = plain_text(entry.schema.doc.strip())
                summary = doc.splitlines()[0] if doc else ""
                print(f"{name:32s} {summary}")
        return EXIT_OK
    entry = registry.operators.get(args.name)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(args.name, list(registry.operators), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CommandError(
            f"no operator named {args.name!r}{hint}{system.missing_operator_hint()}", EXIT_USAGE
        )
    print(f"fn.{args.name}{entry.schema.signature()}\n")
    print(plain_text(entry.docstring()))
    print(f"\nKernels (registered by plugin {entry.owner}, which owns the schema):")
    print("\n".join(_describe_kernels(entry, system)) or "    none")
    return EXIT_OK


def _configure_ops(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="an operator name, e.g. readers.file")
    parser.add_argument(
        "--all", action="store_true", help="list internal operators too (arithmetic, _private)"
    )


OPS = Command(
    "ops",
    "list operators, or show one operator's docs",
    "Without NAME, list the public operators with a one-line summary. With NAME,\n"
    "print its signature, its documentation generated from the schema and the\n"
    "devices that have a kernel, with the plugin that registered each.",
    _configure_ops,
    _run_ops,
)
