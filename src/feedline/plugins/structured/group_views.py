"""Read-only views of a structured sample: queries, flattening, comparison, search and printing.

:class:`GroupViews` is the base of :class:`~feedline.plugins.structured.SampleDataGroup`; it
holds everything that reads the tree without changing its format. Flattening visits the leaves
depth first, children in insertion order; only leaves contribute (``cams.[0].image``, ...).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

from feedline.plugins.structured.paths import Name, Path, as_path, flat_name, is_single_name
from feedline.plugins.structured.values import flat_type
from feedline.types import DataType

__all__ = ["GroupViews"]

_MISSING = object()


class GroupViews:
    """Queries over ``_names`` (ordered), ``_types``, ``_values`` and ``_mappings``."""

    _names: list[Name]
    _layout: tuple[Any, ...] | None
    _types: dict[Name, Any]
    _values: dict[Name, Any]
    _mappings: dict[Name, dict[Any, Any]]

    # -- direct children ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[Name]:
        return iter(tuple(self._names))

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def has_child(self, name: Name) -> bool:
        """Whether a direct child named ``name`` exists."""
        return name in self._types

    def _child(self, name: Name) -> Any:
        try:
            return self._values[name]
        except (KeyError, TypeError):
            shown = ", ".join(repr(n) for n in self._names) or "none"
            raise KeyError(f"No field with name {name!r} (fields: {shown})") from None

    def is_data_field(self, name: Name) -> bool:
        """Whether child ``name`` is a data field (a leaf). Raises KeyError if it is missing."""
        return not isinstance(self._child(name), GroupViews)

    def is_data_group_field(self, name: Name) -> bool:
        """Whether child ``name`` is a group. Raises KeyError if it is missing."""
        return isinstance(self._child(name), GroupViews)

    def get_type_of_field(self, name: Name) -> Any:
        """The declared type of child ``name`` (``STRING`` stays ``STRING``); the
        ``SampleDataGroup`` class for groups. Raises KeyError if it is missing."""
        self._child(name)
        return self._types[name]

    @property
    def contained_top_level_field_names(self) -> tuple[Name, ...]:
        """Names of the direct children, in insertion order."""
        return tuple(self._names)

    @property
    def field_top_level_types(self) -> tuple[Any, ...]:
        """Types of the direct children, in the order of :attr:`contained_top_level_field_names`."""
        return tuple(self._types[n] for n in self._names)

    # -- arrays ---------------------------------------------------------------------------

    def _array_target(self, field: Name | None) -> GroupViews | None:
        if field is None:
            return self
        child = self._child(field)
        return child if isinstance(child, GroupViews) else None

    def is_array(self, field: Name | None = None) -> bool:
        """Whether ``self`` (or child ``field``) is an array: children named ``0..n-1`` in order.

        An empty group is an array of length 0; a data field is not an array.
        """
        group = self._array_target(field)
        return group is not None and group._names == list(range(len(group._names)))

    def _element_kinds(self, field: Name | None) -> set[bool]:
        """Whether the elements of the non-empty array ``self``/``field`` are groups (empty set
        if it is no such array)."""
        group = self._array_target(field)
        if group is None or not group._names or not group.is_array():
            return set()
        return {isinstance(v, GroupViews) for v in group._values.values()}

    def is_data_field_array(self, field: Name | None = None) -> bool:
        """Whether ``self`` (or child ``field``) is a non-empty array whose elements are leaves."""
        return self._element_kinds(field) == {False}

    def is_data_group_field_array(self, field: Name | None = None) -> bool:
        """Whether ``self`` (or child ``field``) is a non-empty array whose elements are groups."""
        return self._element_kinds(field) == {True}

    # -- paths ----------------------------------------------------------------------------

    @staticmethod
    def path_is_single_name(path: Path) -> bool:
        """True if ``path`` is one name (a ``str``/``int``), False for a sequence of names."""
        return is_single_name(path)

    def _walk(self, path: Path) -> Any:
        """The item at ``path`` (``self`` for an empty path), or ``_MISSING``."""
        item: Any = self
        for name in as_path(path):
            if not isinstance(item, GroupViews):
                return _MISSING
            item = item._values.get(name, _MISSING)
            if item is _MISSING:
                return _MISSING
        return item

    def path_exists(self, path: Path) -> bool:
        """Whether a field exists at ``path`` (False, never an error, if any part is missing)."""
        return self._walk(path) is not _MISSING

    def path_exists_and_is_data_group_field(self, path: Path) -> bool:
        """Whether a group exists at ``path`` (False if missing or a data field)."""
        return isinstance(self._walk(path), GroupViews)

    def get_type_of_item_in_path(self, path: Path) -> Any:
        """The declared type at ``path``; the ``SampleDataGroup`` class for groups and for the
        empty path. Raises KeyError naming the path if it does not exist."""
        names = as_path(path)
        if not names:
            return type(self)
        parent = self._walk(names[:-1])
        if not isinstance(parent, GroupViews) or names[-1] not in parent._types:
            raise KeyError(f"path {_show(names)} does not exist")
        return parent._types[names[-1]]

    # -- flattening -----------------------------------------------------------------------

    def _leaf_paths(self, prefix: str, out: list[tuple[str, Any]]) -> None:
        for name in self._names:
            value = self._values[name]
            full = f"{prefix}{flat_name(name)}"
            if isinstance(value, GroupViews):
                value._leaf_paths(full + ".", out)
            else:
                out.append((full, self._types[name]))

    def _flat(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        self._leaf_paths("", out)
        return out

    @property
    def field_names_flat(self) -> tuple[str, ...]:
        """Flat names of all leaves (``a.[0].b``), depth first in insertion order."""
        return tuple(name for name, _ in self._flat())

    @property
    def field_types_flat(self) -> tuple[DataType, ...]:
        """Types of all leaves in flat order, ``STRING`` shown as ``UINT8`` (how it travels)."""
        return tuple(flat_type(dtype) for _, dtype in self._flat())

    def leaves(self) -> list[tuple[tuple[Name, ...], Any, Any]]:
        """``(path, stored value, declared type)`` of every leaf, in flat order."""
        out: list[tuple[tuple[Name, ...], Any, Any]] = []
        self._leaf_items((), out)
        return out

    def _leaf_items(self, prefix: tuple[Name, ...], out: list[Any]) -> None:
        for name in self._names:
            value = self._values[name]
            if isinstance(value, GroupViews):
                value._leaf_items((*prefix, name), out)
            else:
                out.append(((*prefix, name), value, self._types[name]))

    def _get_layout(self) -> tuple[Any, ...]:
        """The children as runs of leaf names and single group names (cached until a child is
        added or removed): ``(False, names, getter)`` or ``(True, name, None)``."""
        layout = self._layout
        if layout is not None:
            return layout
        segments: list[tuple[bool, Any, Any]] = []
        run: list[Name] = []
        for name in self._names:
            if isinstance(self._values[name], GroupViews):
                if run:
                    segments.append(_leaf_run(run))
                    run = []
                segments.append((True, name, None))
            else:
                run.append(name)
        if run:
            segments.append(_leaf_run(run))
        self._layout = tuple(segments)
        return self._layout

    def _collect(self, out: list[Any]) -> None:
        values = self._values
        for is_group, payload, getter in self._get_layout():
            if is_group:
                values[payload]._collect(out)
            elif getter is None:
                out.append(values[payload[0]])
            else:
                out += getter(values)

    def _count(self) -> int:
        values = self._values
        return sum(
            values[payload]._count() if is_group else len(payload)
            for is_group, payload, _ in self._get_layout()
        )

    def get_data(self, as_list_type: bool = False) -> tuple[Any, ...] | list[Any]:
        """The stored values of all leaves in flat order (strings as their uint8 bytes)."""
        out: list[Any] = []
        self._collect(out)
        return out if as_list_type else tuple(out)

    def _fill(self, data: Sequence[Any], start: int) -> int:
        values = self._values
        for is_group, payload, _ in self._get_layout():
            if is_group:
                start = values[payload]._fill(data, start)
            else:
                for name in payload:
                    values[name] = data[start]
                    start += 1
        return start

    def set_data(self, data: Sequence[Any]) -> None:
        """Store ``data`` (one value per leaf, flat order) as is: no mapping or conversion.

        Raises:
            ValueError: ``data`` has more or fewer values than there are leaves (the leaves are
                then left partly filled).
        """
        if not isinstance(data, list | tuple):
            data = list(data)
        try:
            end = self._fill(data, 0)
        except IndexError:
            end = -1
        if end != len(data):
            raise ValueError(f"set_data: got {len(data)} values for {self._count()} data fields")

    def set_data_from_dali_generic_iterator_output(self, data: Sequence[Any], index: int) -> None:
        """Fill the leaves from an iterator batch ``data[index]`` keyed by flat names.

        Raises:
            KeyError: a flat name of this format is missing from the batch.
        """
        batch = data[index]
        values = []
        for name in self.field_names_flat:
            if name not in batch:
                raise KeyError(f"the iterator output has no field {name!r}")
            values.append(batch[name])
        self.set_data(values)

    # -- comparison -----------------------------------------------------------------------

    def type_matches(self, other: GroupViews) -> bool:
        """Whether ``other`` has the same names (in the same order), types and nesting.

        Values, flags and mappings are ignored; ``STRING`` differs from ``UINT8``.
        """
        if not isinstance(other, GroupViews) or self._names != other._names:
            return False
        for name in self._names:
            mine, theirs = self._values[name], other._values[name]
            if isinstance(mine, GroupViews) or isinstance(theirs, GroupViews):
                if not (isinstance(mine, GroupViews) and mine.type_matches(theirs)):
                    return False
            elif self._types[name] is not other._types[name]:
                return False
        return True

    def get_flat_index_first_discrepancy_to_other(self, other: GroupViews) -> int:
        """The first flat index whose name or (flat) type differs, the shorter length if one
        format is a prefix of the other, or -1 when the flat formats agree."""
        mine, theirs = self._flat(), other._flat()
        for index, ((n1, t1), (n2, t2)) in enumerate(zip(mine, theirs, strict=False)):
            if n1 != n2 or flat_type(t1) is not flat_type(t2):
                return index
        return -1 if len(mine) == len(theirs) else min(len(mine), len(theirs))

    def describe_difference(self, other: GroupViews) -> str | None:
        """Where ``other`` differs from this format, in words naming the field; None if equal."""
        return _difference(self, other, ())

    # -- search ---------------------------------------------------------------------------

    def _find(self, name: Name, prefix: tuple[Name, ...], out: list[tuple[Name, ...]]) -> None:
        for child in self._names:
            path = (*prefix, child)
            if child == name and type(child) is type(name):
                out.append(path)
            value = self._values[child]
            if isinstance(value, GroupViews):
                value._find(name, path, out)

    def find_all_occurrences(self, name_to_find: Name) -> tuple[tuple[Name, ...], ...]:
        """Paths of every field (leaf or group) named ``name_to_find``, depth first."""
        out: list[tuple[Name, ...]] = []
        self._find(name_to_find, (), out)
        return tuple(out)

    def get_num_occurrences(self, name_to_find: Name) -> int:
        """How many fields in the tree are named ``name_to_find``."""
        return len(self.find_all_occurrences(name_to_find))

    # -- validation helper ----------------------------------------------------------------

    def check_has_children(
        self,
        data_field_children: Name | Sequence[Name] | None = None,
        data_group_field_children: Name | Sequence[Name] | None = None,
        data_field_array_children: Name | Sequence[Name] | None = None,
        data_group_field_array_children: Name | Sequence[Name] | None = None,
        current_name: str | None = None,
    ) -> None:
        """Check that the named children exist and are of the stated kind.

        Raises:
            ValueError: a child is missing or of another kind (the message names both).
        """
        where = f"`{current_name}`" if current_name is not None else "the data group"
        checks = (
            (data_field_children, self.is_data_field, "a data field"),
            (data_group_field_children, self.is_data_group_field, "a data group field"),
            (data_field_array_children, self.is_data_field_array, "a data field array"),
            (
                data_group_field_array_children,
                self.is_data_group_field_array,
                "a data group field array",
            ),
        )
        for names, predicate, kind in checks:
            if names is None:
                continue
            for name in (names,) if is_single_name(names) else names:  # type: ignore[union-attr]
                if not self.has_child(name):
                    raise ValueError(f"{where} does not have child `{name}`")
                if not predicate(name):
                    raise ValueError(f"child `{name}` of {where} is not {kind}")

    # -- output ---------------------------------------------------------------------------

    def to_dictionary(self) -> dict[Name, Any]:
        """Nested ``dict`` of the values (arrays keyed by int); strings decoded to ``str``."""
        out: dict[Name, Any] = {}
        for name in self._names:
            value = self._values[name]
            if isinstance(value, GroupViews):
                out[name] = value.to_dictionary()
            else:
                out[name] = self[name]  # type: ignore[index] (strings decoded outside the graph)
        return out

    def _lines(self, indent: str, details: bool, out: list[str]) -> None:
        for name in self._names:
            value = self._values[name]
            if isinstance(value, GroupViews):
                out += [f"{indent}{name}:", f"{indent}{{"]
                value._lines(indent + "  ", details, out)
                out.append(f"{indent}}}")
                continue
            line = f"{indent}{name}: DALIDataType.{self._types[name].name}   "
            if details:
                line += (
                    f"(is set: {value is not None}; mapping available: {name in self._mappings})"
                )
            out.append(line)

    def _render(self, details: bool) -> str:
        out = ["{"]
        self._lines("  ", details, out)
        out.append("}")
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self._render(details=True)

    def get_string_no_details(self) -> str:
        """The format as text, without the per-field 'is set'/'mapping' details."""
        return self._render(details=False)


def _leaf_run(names: list[Name]) -> tuple[bool, tuple[Name, ...], Any]:
    return (False, tuple(names), itemgetter(*names) if len(names) > 1 else None)


def _show(path: Sequence[Name]) -> str:
    return ".".join(flat_name(n) for n in path) if path else "<root>"


def _difference(mine: GroupViews, other: GroupViews, prefix: tuple[Name, ...]) -> str | None:
    for name in mine._names:
        path = _show((*prefix, name))
        if name not in other._types:
            return f"field {path!r} is missing"
        a, b = mine._values[name], other._values[name]
        if isinstance(a, GroupViews) != isinstance(b, GroupViews):
            kinds = ("a data group field", "a data field")
            first, second = (kinds[0], kinds[1]) if isinstance(a, GroupViews) else kinds[::-1]
            return f"field {path!r} should be {first} but is {second}"
        if isinstance(a, GroupViews):
            found = _difference(a, b, (*prefix, name))
            if found:
                return found
        elif mine._types[name] is not other._types[name]:
            return (
                f"field {path!r} should have type {mine._types[name].name} but has "
                f"{other._types[name].name}"
            )
    extra = [n for n in other._names if n not in mine._types]
    if extra:
        return f"field {_show((*prefix, extra[0]))!r} is not expected"
    if mine._names != other._names:
        return (
            f"the fields of {_show(prefix)!r} are in another order: {other._names} "
            f"instead of {mine._names}"
        )
    return None
