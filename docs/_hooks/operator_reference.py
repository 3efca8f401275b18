"""MkDocs hook: generates ``reference/operators.md`` from the registered operator schemas.

The page is built at every ``mkdocs build`` from what the installed plugins register, with the
same generator as ``fn.<name>.__doc__`` and ``feedline ops NAME`` (``OpSchema.signature`` and
``OpSchema.docstring``), so it cannot drift from the code and is never committed.
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

PAGE = "reference/operators.md"


def operator_reference() -> str:
    """The Markdown of the operator reference: one section per public operator."""
    from feedline.core.plugins import PluginSystem, use_plugin_system

    with use_plugin_system(PluginSystem()) as system:
        registry = system.ensure_loaded()
        entries = sorted(
            (name, entry) for name, entry in registry.operators.items() if not entry.schema.hidden
        )
        lines = [
            "# Operator reference",
            "",
            "Generated from the operator schemas of the plugins installed when the site was built",
            "(the text `help(fn.NAME)` and `feedline ops NAME` print). Each operator is",
            "`fn.<name>` in a pipeline.",
            "",
            "| operator | summary | plugin |",
            "|---|---|---|",
        ]
        for name, entry in entries:
            summary = " ".join(entry.schema.doc.strip().split("\n\n")[0].split())
            anchor = name.replace(".", "")
            summary = summary.replace("|", r"\|")
            lines.append(f"| [`{name}`](#{anchor}) | {summary} | `{entry.owner}` |")
        for name, entry in entries:
            lines += [
                "",
                f"## {name}",
                "",
                "```python",
                f"fn.{name}{entry.schema.signature()}",
                "```",
                "",
                "```text",
                entry.schema.docstring(),
                "```",
            ]
    return "\n".join(lines) + "\n"


def on_files(files: Files, config: Any) -> Files:
    """Add the generated page to the site's files."""
    files.append(File.generated(config, PAGE, content=operator_reference()))
    return files
