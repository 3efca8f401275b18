"""``SampleDataGroup``: a typed tree of named fields, used as format (blueprint) and container.

Leaves (data fields) have a declared element type and hold one value; inner nodes (data group
fields) are ``SampleDataGroup`` objects. A blueprint is a group whose leaves are all ``None``.
Format changes are explicit (add the field, then assign). Assignment maps strings to numbers and
converts values to the declared type outside the pipeline, and checks the element type of graph
nodes inside it (while the graph is defined, see :mod:`.dtypes`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.graph import DataNode
from feedline.plugins.structured.dtypes import node_dtype
from feedline.plugins.structured.group_views import GroupViews
from feedline.plugins.structured.paths import Name, Path, as_path, check_name, format_path
from feedline.plugins.structured.values import (
    apply_mapping,
    check_leaf_type,
    convert,
    decode_string,
    encode_string,
    flat_type,
    numpy_type,
)
from feedline.types import DataType

__all__ = ["EmptyPathError", "FieldTypeError", "SampleDataGroup"]


def _numpy_name(dtype: DataType) -> str:
    try:
        return np.dtype(numpy_type(dtype)).name
    except ValueError:
        return dtype.name


class FieldTypeError(TypeError, RuntimeError):
    """A graph node of the wrong element type assigned to a field.

    A ``RuntimeError`` too: ACCV-Lab reports the mismatch as one (when the first batch runs).
    """


class EmptyPathError(ValueError, AssertionError):
    """An empty path where a field is needed (an ``AssertionError`` too, as upstream raises)."""


class SampleDataGroup(GroupViews):
    """Structured sample data, or (with all leaves ``None``) the blueprint of its format.

    Read children with ``obj[name]`` / :meth:`get_item_in_path` (a STRING leaf reads as ``str``
    outside the pipeline), assign with ``obj[name] = value`` / :meth:`set_item_in_path`,
    iterate over child names with ``for name in obj``, test ``name in obj``, and ``len(obj)`` is
    the number of direct children. ``print(obj)`` shows the format.
    """

    def __init__(self) -> None:
        self._names: list[Name] = []
        self._layout: tuple[Any, ...] | None = None
        self._types: dict[Name, Any] = {}
        self._values: dict[Name, Any] = {}
        self._mappings: dict[Name, dict[Any, Any]] = {}
        self._apply_mapping = True
        self._do_convert = True
        self._check_type = True
        self._shared = False

    def _own_format(self) -> None:
        """Copy the format containers before changing them if a copy still shares them."""
        if self._shared:
            self._names = self._names.copy()
            self._types = self._types.copy()
            self._mappings = self._mappings.copy()
            self._shared = False

    # -- flags ----------------------------------------------------------------------------

    def _groups(self) -> list[SampleDataGroup]:
        return [v for v in self._values.values() if isinstance(v, SampleDataGroup)]

    def set_apply_mapping(self, apply: bool) -> None:
        """Map strings to numbers on assignment (fields with a mapping); recursive."""
        self._apply_mapping = bool(apply)
        for group in self._groups():
            group.set_apply_mapping(apply)

    def set_do_convert(self, convert: bool) -> None:
        """Convert assigned values to the declared types (outside the pipeline); recursive."""
        self._do_convert = bool(convert)
        for group in self._groups():
            group.set_do_convert(convert)

    def set_do_check_type(self, check_type: bool) -> None:
        """Check the element type of graph nodes assigned inside the pipeline; recursive."""
        self._check_type = bool(check_type)
        for group in self._groups():
            group.set_do_check_type(check_type)

    def _inherit_flags(self, child: SampleDataGroup) -> SampleDataGroup:
        child.set_apply_mapping(self._apply_mapping)
        child.set_do_convert(self._do_convert)
        child.set_do_check_type(self._check_type)
        return child

    # -- building the format --------------------------------------------------------------

    def _new_name(self, name: Name) -> Name:
        check_name(name)
        if name in self._types:
            raise KeyError(f"a field named {name!r} already exists")
        return name

    def add_data_field(
        self, name: Name, type: DataType, mapping: Mapping[Any, Any] | None = None
    ) -> None:
        """Append an empty data field of element type ``type``.

        Args:
            name: the new child's name.
            type: its element type (after mapping, when a mapping is given).
            mapping: input value → number; the key ``None`` gives the default for unknown strings.

        Raises:
            KeyError: the name exists. TypeError: a bad type or mapping. ValueError: a bad name,
            or a mapping on a STRING field.
        """
        self._new_name(name)
        dtype = check_leaf_type(type, name)
        if mapping is not None:
            if not isinstance(mapping, Mapping):
                raise TypeError(f"field {name!r}: mapping must be a dict, got {mapping!r}")
            if dtype is DataType.STRING:
                raise ValueError(f"field {name!r}: a STRING field cannot have a mapping")
        self._own_format()
        self._names.append(name)
        self._layout = None
        self._types[name] = dtype
        self._values[name] = None
        if mapping is not None:
            self._mappings[name] = dict(mapping)

    def add_data_group_field(
        self, name: Name, blueprint_sample_data_group: SampleDataGroup
    ) -> None:
        """Append a child group with the format of ``blueprint_sample_data_group`` (no values)."""
        self._new_name(name)
        if not isinstance(blueprint_sample_data_group, SampleDataGroup):
            raise TypeError(
                f"field {name!r}: expected a SampleDataGroup blueprint, got "
                f"{type(blueprint_sample_data_group).__name__}"
            )
        child = self._inherit_flags(blueprint_sample_data_group.get_empty_like_self())
        self._own_format()
        self._names.append(name)
        self._layout = None
        self._types[name] = SampleDataGroup
        self._values[name] = child

    def add_data_field_array(
        self,
        name: Name,
        type: DataType,
        num_fields: int,
        mapping: Mapping[Any, Any] | None = None,
    ) -> None:
        """Append a child group holding ``num_fields`` data fields named ``0..num_fields-1``."""
        self._new_name(name)
        array = SampleDataGroup.create_data_field_array(type, num_fields, mapping)
        self.add_data_group_field(name, array)

    def add_data_group_field_array(
        self, name: Name, blueprint_sample_data_group: SampleDataGroup, num_fields: int
    ) -> None:
        """Append a child group holding ``num_fields`` empty copies of the blueprint."""
        self._new_name(name)
        array = SampleDataGroup.create_data_group_field_array(
            blueprint_sample_data_group, num_fields
        )
        self.add_data_group_field(name, array)

    @staticmethod
    def _check_count(num_fields: object) -> int:
        if isinstance(num_fields, bool) or not isinstance(num_fields, int) or num_fields < 0:
            raise ValueError(f"num_fields must be an int >= 0, got {num_fields!r}")
        return num_fields

    @staticmethod
    def create_data_field_array(
        type: DataType, num_fields: int, mapping: Mapping[Any, Any] | None = None
    ) -> SampleDataGroup:
        """A free-standing array group of ``num_fields`` empty data fields."""
        array = SampleDataGroup()
        for index in range(SampleDataGroup._check_count(num_fields)):
            array.add_data_field(index, type, mapping)
        return array

    @staticmethod
    def create_data_group_field_array(
        sample_data_group: SampleDataGroup, num_fields: int
    ) -> SampleDataGroup:
        """A free-standing array group of ``num_fields`` empty copies of ``sample_data_group``."""
        array = SampleDataGroup()
        for index in range(SampleDataGroup._check_count(num_fields)):
            array.add_data_group_field(index, sample_data_group)
        return array

    def remove_field(self, name: Name) -> None:
        """Remove the direct child ``name`` (and its mapping). Raises KeyError if missing."""
        if name not in self._types:
            raise KeyError(f"Cannot delete field {name!r}: there is no such field")
        self._own_format()
        self._names.remove(name)
        self._layout = None
        del self._types[name], self._values[name]
        self._mappings.pop(name, None)

    def remove_all_occurrences(self, name_to_remove: Name) -> None:
        """Remove every field named ``name_to_remove`` in this tree (groups with their subtree)."""
        for path in reversed(self.find_all_occurrences(name_to_remove)):
            parent = self.get_item_in_path(path[:-1])
            if path[-1] in parent:
                parent.remove_field(path[-1])

    def change_type_of_data_and_remove_data(
        self, path: Path, new_type: Any, new_mapping: Mapping[Any, Any] | None = None
    ) -> None:
        """Change the type of the field at ``path`` and clear its value.

        A data field takes a new element type (and ``new_mapping``, or none); a group takes the
        format of the blueprint ``new_type`` (empty, with this group's flags).

        Raises:
            KeyError: no field at ``path``. TypeError: a data field would become a group or the
            other way round, or a bad type. ValueError: a mapping for a group or a STRING type.
        """
        names = as_path(path)
        if not names:
            raise EmptyPathError("change_type_of_data_and_remove_data needs a non-empty path")
        parent = self.get_parent_of_path(names)
        name = names[-1]
        parent._child(name)
        is_group = isinstance(parent._values[name], SampleDataGroup)
        shown = format_path(names)
        if is_group != isinstance(new_type, SampleDataGroup):
            kind = "data group field" if is_group else "data field"
            raise TypeError(
                f"field {shown!r} is a {kind}; its type cannot become {new_type!r} "
                "(remove it and add a new field instead)"
            )
        if is_group:
            if new_mapping is not None:
                raise ValueError(f"field {shown!r}: a data group field cannot have a mapping")
            parent._values[name] = parent._inherit_flags(new_type.get_empty_like_self())
            return
        dtype = check_leaf_type(new_type, shown)
        if new_mapping is not None and dtype is DataType.STRING:
            raise ValueError(f"field {shown!r}: a STRING field cannot have a mapping")
        parent._own_format()
        parent._types[name] = dtype
        parent._values[name] = None
        parent._mappings.pop(name, None)
        if new_mapping is not None:
            parent._mappings[name] = dict(new_mapping)

    # -- copies ---------------------------------------------------------------------------

    def _copy(self, keep_values: bool) -> SampleDataGroup:
        layout = self._get_layout()
        # The copy shares the format (names, types, mappings, layout) until either changes it.
        self._shared = True
        state = self.__dict__.copy()
        values = self._values.copy() if keep_values else dict.fromkeys(self._names)
        old = self._values
        for is_group, payload, _ in layout:
            if is_group:
                values[payload] = old[payload]._copy(keep_values)
        state["_values"] = values
        new = object.__new__(SampleDataGroup)
        new.__dict__ = state
        return new

    def _filled_copy(self, data: Sequence[Any], start: int) -> tuple[SampleDataGroup, int]:
        layout = self._get_layout()
        self._shared = True
        state = self.__dict__.copy()
        values: dict[Name, Any] = {}
        old = self._values
        for is_group, payload, _ in layout:
            if is_group:
                values[payload], start = old[payload]._filled_copy(data, start)
            else:
                for name in payload:
                    values[name] = data[start]
                    start += 1
        state["_values"] = values
        new = object.__new__(SampleDataGroup)
        new.__dict__ = state
        return new, start

    def get_like_self_filled(self, data: Sequence[Any]) -> SampleDataGroup:
        """A new tree of this format holding ``data`` (one value per leaf, flat order, stored as
        is): :meth:`get_empty_like_self` and :meth:`set_data` in one pass.

        Raises:
            ValueError: ``data`` has more or fewer values than there are leaves.
        """
        if not isinstance(data, list | tuple):
            data = list(data)
        try:
            new, end = self._filled_copy(data, 0)
        except IndexError:
            end = -1
        if end != len(data):
            raise ValueError(f"got {len(data)} values for {self._count()} data fields")
        return new

    def get_like_self_filled_from_iterator_output(
        self, data: Sequence[Mapping[str, Any]], index: int
    ) -> SampleDataGroup:
        """A new tree of this format filled from iterator batch ``data[index]`` (flat names)."""
        result = self.get_empty_like_self()
        result.set_data_from_dali_generic_iterator_output(data, index)
        return result

    def get_empty_like_self(self) -> SampleDataGroup:
        """A deep copy of the format (names, types, mappings, flags) with every leaf empty."""
        return self._copy(keep_values=False)

    def get_copy(self) -> SampleDataGroup:
        """A copy of the format that shares the leaf values (arrays are not copied)."""
        return self._copy(keep_values=True)

    # -- access ---------------------------------------------------------------------------

    def __getitem__(self, name: Name) -> Any:
        value = self._child(name)
        if (
            value is not None
            and self._types[name] is DataType.STRING
            and not isinstance(value, DataNode)
        ):
            return decode_string(value)
        return value

    def __setitem__(self, name: Name, value: Any) -> None:
        current = self._child(name)
        dtype = self._types[name]
        if isinstance(current, SampleDataGroup):
            if not isinstance(value, SampleDataGroup):
                raise TypeError(
                    f"field {name!r} is a data group field; assign a SampleDataGroup, not a "
                    f"{type(value).__name__}"
                )
            if not current.type_matches(value):
                raise KeyError(
                    f"field {name!r}: the assigned group has another format "
                    f"({current.describe_difference(value)}); change the type first"
                )
            self._values[name] = value
            return
        if isinstance(value, DataNode):
            self._values[name] = self._checked_node(name, dtype, value)
            return
        if dtype is DataType.STRING:
            self._values[name] = encode_string(value, str(name))
            return
        if self._apply_mapping and name in self._mappings:
            value = apply_mapping(value, self._mappings[name], dtype, str(name))
        if self._do_convert:
            value = convert(value, dtype, str(name))
        self._values[name] = value

    def _checked_node(self, name: Name, dtype: DataType, node: DataNode) -> DataNode:
        if self._apply_mapping and name in self._mappings:
            warnings.warn(
                f"field {name!r}: mappings are not applied to graph nodes; the node is stored "
                "as is (call set_apply_mapping(False) inside the pipeline)",
                UserWarning,
                stacklevel=3,
            )
        if self._check_type:
            actual = node_dtype(node)
            expected = flat_type(dtype)
            if actual is not None and actual is not expected:
                raise FieldTypeError(
                    f"field {name!r} is declared {dtype.name}"
                    f"{' (carried as UINT8)' if dtype is DataType.STRING else ''} but the "
                    f"assigned node {node.name!r} has type {actual.name}: Expected type "
                    f"({_numpy_name(expected)}) and actual data type "
                    f"({_numpy_name(actual)}) do not match for {name!r}"
                )
        return node

    def get_item_in_path(self, path: Path) -> Any:
        """The item at ``path`` (``self`` for an empty path).

        Raises:
            KeyError: naming the path, when a part is missing or is a data field.
        """
        names = as_path(path)
        if not names:
            return self
        parent = self.get_parent_of_path(names)
        if names[-1] not in parent._types:
            raise KeyError(f"path {format_path(names)!r} does not exist")
        return parent[names[-1]]

    def set_item_in_path(self, path: Path, value: Any) -> None:
        """Assign ``value`` at ``path`` (same rules as ``obj[name] = value``)."""
        names = as_path(path)
        if not names:
            raise EmptyPathError("set_item_in_path needs a non-empty path")
        parent = self.get_parent_of_path(names)
        if names[-1] not in parent._types:
            raise KeyError(f"path {format_path(names)!r} does not exist")
        parent[names[-1]] = value

    def get_parent_of_path(self, path: Path) -> SampleDataGroup:
        """The group holding the last element of ``path`` (``self`` for a single name).

        Raises:
            KeyError: naming the path, when the parent does not exist or is a data field (or, for
                a single name, when the child is missing). ValueError: an empty path.
        """
        names = as_path(path)
        if not names:
            raise EmptyPathError("an empty path has no parent")
        if len(names) == 1:
            if names[0] not in self._types:
                raise KeyError(f"No element {names[0]!r} is present in this group")
            return self
        item: Any = self
        for depth, name in enumerate(names[:-1]):
            if not isinstance(item, SampleDataGroup) or name not in item._types:
                raise KeyError(
                    f"No field with name {name!r}: path {format_path(names)!r} does not exist "
                    f"(no group {format_path(names[: depth + 1])!r})"
                )
            item = item._values[name]
        if not isinstance(item, SampleDataGroup):
            raise KeyError(
                f"path {format_path(names)!r}: {format_path(names[:-1])!r} is a data field, "
                "not a group"
            )
        return item

    # -- inside the pipeline --------------------------------------------------------------

    def _leaf_nodes(self) -> list[tuple[SampleDataGroup, Name]]:
        out: list[tuple[SampleDataGroup, Name]] = []
        for name in self._names:
            value = self._values[name]
            if isinstance(value, SampleDataGroup):
                out += value._leaf_nodes()
            else:
                out.append((self, name))
        return out

    def _pad_leaves(self, fill_value: float, strings_only: bool) -> None:
        from feedline import fn

        for group, name in self._leaf_nodes():
            if strings_only and group._types[name] is not DataType.STRING:
                continue
            value = group._values[name]
            if not isinstance(value, DataNode):
                raise TypeError(
                    f"field {name!r} holds {type(value).__name__}, not a graph node: padding to "
                    "a uniform batch shape works only inside the pipeline definition"
                )
            group._values[name] = fn.pad(value, fill_value=fill_value)

    def ensure_uniform_size_in_batch(self, fill_value: float) -> None:
        """Pad every leaf (a graph node) to the largest shape in the batch with ``fill_value``.

        Raises:
            TypeError: a leaf is not a graph node (called outside the pipeline definition).
        """
        self._pad_leaves(fill_value, strings_only=False)

    def ensure_uniform_size_in_batch_for_all_strings(self) -> None:
        """Pad every STRING leaf (uint8 bytes in the pipeline) with NULs to a uniform length."""
        self._pad_leaves(0, strings_only=True)

    @staticmethod
    def get_numpy_type_for_dali_type(dali_type: DataType) -> Any:
        """The NumPy type of a numeric type (Python ``bool`` for BOOL).

        Raises:
            ValueError: ``STRING`` and other types without a NumPy type.
        """
        return numpy_type(dali_type)

    def __repr__(self) -> str:
        return f"SampleDataGroup({', '.join(map(repr, self._names))})"
