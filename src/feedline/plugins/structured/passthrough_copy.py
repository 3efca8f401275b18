"""Copies of selected pipeline outputs (``PipelineDefinition``'s pass-through copy options).

Some DALI versions could corrupt outputs taken straight from a parallel external source, and
ACCV-Lab's pipelines insert ``fn.copy`` on those outputs. feedline does not have that defect;
the options are kept so that ported pipelines keep their meaning (the copies cost a memory copy
per selected output and change nothing else).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from feedline import fn
from feedline.plugins.structured.paths import Name, Path, as_path, format_path
from feedline.plugins.structured.sample_data_group import SampleDataGroup

__all__ = ["InsertCopyForPassthrough", "fn"]


def _leaves_under(group: SampleDataGroup, prefix: tuple[Name, ...]) -> list[tuple[Name, ...]]:
    found: list[tuple[Name, ...]] = []
    for name in group.contained_top_level_field_names:
        if group.is_data_group_field(name):
            found.extend(_leaves_under(group[name], (*prefix, name)))
        else:
            found.append((*prefix, name))
    return found


def _existing(structure: SampleDataGroup, path: Path, what: str) -> tuple[Name, ...]:
    parts = as_path(path)
    node: Any = structure
    for depth, name in enumerate(parts):
        if not isinstance(node, SampleDataGroup) or not node.has_child(name):
            raise ValueError(f"{what} {format_path(parts[: depth + 1])!r} does not exist")
        node = node[name] if node.is_data_group_field(name) else None
    return parts


class InsertCopyForPassthrough:
    """Resolves which output leaves to copy, and copies them in a graph.

    Without selectors every leaf is copied. ``field_names`` selects leaves by name anywhere (or
    only under ``field_names_scope_paths``); ``branch_paths`` selects paths (a group path means
    every leaf under it). An empty selector selects nothing.

    Args:
        structure: the output format.
        field_names: names of leaves to copy.
        field_names_scope_paths: groups that restrict ``field_names``.
        branch_paths: paths of leaves or groups to copy.

    Raises:
        ValueError: a path does not exist, a scope path is not a data group field, or scope
            paths come without field names.
    """

    def __init__(
        self,
        structure: SampleDataGroup,
        field_names: Sequence[Name] | None = None,
        field_names_scope_paths: Sequence[Path] | None = None,
        branch_paths: Sequence[Path] | None = None,
    ) -> None:
        if field_names_scope_paths is not None and field_names is None:
            raise ValueError("field_names_scope_paths needs field_names")
        selected: list[tuple[Name, ...]] = []
        if field_names is None and branch_paths is None:
            selected = _leaves_under(structure, ())
        if field_names is not None:
            scopes = [()] if field_names_scope_paths is None else list(field_names_scope_paths)
            wanted = set(field_names)
            for scope in scopes:
                parts = _existing(structure, scope, "scope path") if scope != () else ()
                group = structure.get_item_in_path(parts) if parts else structure
                if not isinstance(group, SampleDataGroup):
                    raise ValueError(f"scope path {format_path(parts)!r} is not a data group field")
                selected.extend(p for p in _leaves_under(group, parts) if p[-1] in wanted)
        for path in branch_paths or ():
            parts = _existing(structure, path, "branch path")
            item = structure.get_item_in_path(parts)
            selected.extend(
                _leaves_under(item, parts) if isinstance(item, SampleDataGroup) else [parts]
            )
        self._paths_to_copy = tuple(dict.fromkeys(selected))

    @property
    def paths_to_copy(self) -> tuple[tuple[Name, ...], ...]:
        """The leaves that are copied, in output order."""
        return self._paths_to_copy

    def __call__(self, data: SampleDataGroup) -> SampleDataGroup:
        """Replace every selected leaf of ``data`` by ``fn.copy`` of it; returns ``data``."""
        for path in self._paths_to_copy:
            data.set_item_in_path(path, fn.copy(data.get_item_in_path(path)))
        return data
