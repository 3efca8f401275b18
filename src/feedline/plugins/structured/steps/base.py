"""The processing-step contract and the wrappers that apply a step to selected sub-trees.

A step has two faces, both called while the graph is defined: :meth:`~PipelineStepBase.
check_input_data_format_and_set_output_data_format` validates a blueprint and describes the
step's output format without touching data, and ``step(data)`` adds the step's operators to the
graph. Calling the step cross-checks the two: the processed sample must have the declared format,
and every graph node in it must have the declared element type; otherwise
:class:`FormatError` names the first field that differs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from feedline.core.graph import DataNode
from feedline.plugins.structured.dtypes import node_dtype
from feedline.plugins.structured.paths import Name, Path, as_path, format_path, is_single_name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.values import flat_type

__all__ = [
    "DataGroupArrayInPathElementsAppliedStep",
    "DataGroupArrayWithNameElementsAppliedStep",
    "DataGroupInPathAppliedStep",
    "DataGroupsWithNameAppliedStep",
    "FieldNotFoundError",
    "FormatError",
    "GroupToApplyToSelectedStepBase",
    "PipelineStepBase",
    "check_node_types",
]


class FormatError(ValueError):
    """A sample format that does not fit: a step's input, or its output against its declaration."""


class FieldNotFoundError(FormatError, KeyError):
    """A step found none of the fields it works on (a ``KeyError`` too, as upstream raises)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def check_node_types(data: SampleDataGroup, where: str) -> None:
    """Check every graph node in ``data`` against its field's declared type.

    Raises:
        FormatError: naming the field, the declared and the actual type.
    """
    for name, value, dtype in data.leaves():
        if not isinstance(value, DataNode):
            continue
        actual = node_dtype(value)
        if actual is not None and actual is not flat_type(dtype):
            raise FormatError(
                f"{where}: field {format_path(name)!r} is declared {dtype.name} but its graph "
                f"node {value.name!r} has type {actual.name}"
            )


class PipelineStepBase(ABC):
    """A processing step: validates and transforms the blueprint, then builds its part of the
    graph. Subclasses implement the two hooks below.

    Steps process every field they find consistently (one random draw for all of them); wrap a
    step in a :class:`GroupToApplyToSelectedStepBase` to process sub-trees independently.
    """

    def __call__(self, data: SampleDataGroup) -> SampleDataGroup:
        """Add the step to the graph for ``data`` (DataNode leaves) and return the result.

        Raises:
            FormatError: the input does not fit, or the result differs from the declared output
                format or types (the message names the field).
        """
        snapshot = data.get_empty_like_self()
        processed = self._process(data)
        if not isinstance(processed, SampleDataGroup):
            raise FormatError(
                f"{self!r}: _process returned {type(processed).__name__}, not a SampleDataGroup"
            )
        declared = self.check_input_data_format_and_set_output_data_format(snapshot)
        difference = declared.describe_difference(processed)
        if difference is not None:
            raise FormatError(
                f"{self!r} built an output that differs from its declared format: {difference}"
            )
        if processed._check_type:
            check_node_types(processed, f"output of {self!r}")
        return processed

    def check_input_data_format_and_set_output_data_format(
        self, data_format: SampleDataGroup
    ) -> SampleDataGroup:
        """The output format for input format ``data_format`` (which is left unchanged).

        Raises:
            FormatError: the input format does not fit this step.
        """
        return self._check_and_adjust_data_format_input_to_output(data_format.get_empty_like_self())

    @abstractmethod
    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        """Validate ``data_empty`` (a private copy, may be changed) and return the output format."""

    @abstractmethod
    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        """Add the operators for ``data`` (may be changed in place) and return the result."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class GroupToApplyToSelectedStepBase(PipelineStepBase):
    """Applies a step to each selected sub-tree separately (independent random draws).

    Args:
        processing_step_to_apply: the step run on every selected sub-tree.
    """

    def __init__(self, processing_step_to_apply: PipelineStepBase) -> None:
        if not isinstance(processing_step_to_apply, PipelineStepBase):
            raise TypeError(
                f"{type(self).__name__}: expected a PipelineStepBase, got "
                f"{type(processing_step_to_apply).__name__}"
            )
        self._step = processing_step_to_apply

    @abstractmethod
    def _check_and_get_paths_to_apply_to(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        """The paths of the groups to process (raise :class:`FormatError` if unsuitable)."""

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        for path in self._check_and_get_paths_to_apply_to(data):
            try:
                result = self._step(data.get_item_in_path(path))
            except FormatError as exc:
                raise type(exc)(f"in {format_path(path)!r}: {exc}") from exc
            data.change_type_of_data_and_remove_data(path, result)
            data.set_item_in_path(path, result)
        return data

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for path in self._check_and_get_paths_to_apply_to(data_empty):
            sub = data_empty.get_item_in_path(path)
            try:
                out = self._step.check_input_data_format_and_set_output_data_format(sub)
            except FormatError as exc:
                raise type(exc)(f"in {format_path(path)!r}: {exc}") from exc
            data_empty.change_type_of_data_and_remove_data(path, out)
        return data_empty

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._step!r})"


_UNSET: Any = object()


def _either(owner: str, upstream: tuple[str, Any], alias: tuple[str, Any]) -> Any:
    """The value of a parameter given under upstream's name or feedline's alias (not both)."""
    given = [(name, value) for name, value in (upstream, alias) if value is not _UNSET]
    if len(given) != 1:
        raise TypeError(f"{owner}: give exactly one of {upstream[0]!r} and {alias[0]!r}")
    return given[0][1]


def _names(names: Name | Sequence[Name], what: str) -> tuple[Name, ...]:
    result = (names,) if is_single_name(names) else tuple(names)  # type: ignore[arg-type]
    if not result:
        raise ValueError(f"{what}: give at least one name")
    return result


class DataGroupInPathAppliedStep(GroupToApplyToSelectedStepBase):
    """Applies the step to the group at ``path_to_apply_to``."""

    def __init__(self, processing_step_to_apply: PipelineStepBase, path_to_apply_to: Path) -> None:
        super().__init__(processing_step_to_apply)
        self._path = as_path(path_to_apply_to)
        if not self._path:
            raise ValueError(f"{type(self).__name__}: the path must not be empty")

    def _check_and_get_paths_to_apply_to(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        if not data.path_exists_and_is_data_group_field(self._path):
            raise FormatError(f"{self!r}: no data group field at {format_path(self._path)!r}")
        return [self._path]


class DataGroupsWithNameAppliedStep(GroupToApplyToSelectedStepBase):
    """Applies the step to every group named as one of ``names`` (each separately)."""

    def __init__(
        self,
        processing_step_to_apply: PipelineStepBase,
        names_of_groups_to_apply_to: Name | Sequence[Name] = _UNSET,
        check_minimum_one_name_match: bool = True,
        *,
        names: Name | Sequence[Name] = _UNSET,
    ) -> None:
        super().__init__(processing_step_to_apply)
        owner = type(self).__name__
        chosen = _either(
            owner, ("names_of_groups_to_apply_to", names_of_groups_to_apply_to), ("names", names)
        )
        self._names = _names(chosen, owner)
        self._check = bool(check_minimum_one_name_match)

    def _check_and_get_paths_to_apply_to(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        paths = [
            path
            for name in self._names
            for path in data.find_all_occurrences(name)
            if data.path_exists_and_is_data_group_field(path)
        ]
        if self._check and not paths:
            raise FormatError(f"{self!r}: no data group field named any of {list(self._names)}")
        return paths


def _elements(data: SampleDataGroup, path: tuple[Name, ...], what: str) -> list[tuple[Name, ...]]:
    array = data.get_item_in_path(path)
    if not array.is_data_group_field_array():
        raise FormatError(f"{what}: {format_path(path)!r} is not an array of data groups")
    return [(*path, index) for index in range(len(array))]


class DataGroupArrayInPathElementsAppliedStep(GroupToApplyToSelectedStepBase):
    """Applies the step to each element of the group array at ``path_to_array``."""

    def __init__(
        self,
        processing_step_to_apply: PipelineStepBase,
        path_to_array_to_apply_to: Path = _UNSET,
        *,
        path_to_array: Path = _UNSET,
    ) -> None:
        super().__init__(processing_step_to_apply)
        chosen = _either(
            type(self).__name__,
            ("path_to_array_to_apply_to", path_to_array_to_apply_to),
            ("path_to_array", path_to_array),
        )
        self._path = as_path(chosen)

    def _check_and_get_paths_to_apply_to(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        if not data.path_exists_and_is_data_group_field(self._path):
            raise FormatError(f"{self!r}: no data group field at {format_path(self._path)!r}")
        return _elements(data, self._path, repr(self))


class DataGroupArrayWithNameElementsAppliedStep(GroupToApplyToSelectedStepBase):
    """Applies the step to each element of every group array named ``name`` (e.g. per camera)."""

    def __init__(
        self,
        processing_step_to_apply: PipelineStepBase,
        name_of_arrays_to_apply_to: Name = _UNSET,
        check_minimum_one_name_match: bool = True,
        *,
        name: Name = _UNSET,
    ) -> None:
        super().__init__(processing_step_to_apply)
        self._name = _either(
            type(self).__name__,
            ("name_of_arrays_to_apply_to", name_of_arrays_to_apply_to),
            ("name", name),
        )
        self._check = bool(check_minimum_one_name_match)

    def _check_and_get_paths_to_apply_to(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        arrays = [
            path
            for path in data.find_all_occurrences(self._name)
            if data.path_exists_and_is_data_group_field(path)
        ]
        if self._check and not arrays:
            raise FormatError(f"{self!r}: no data group field named {self._name!r}")
        return [element for path in arrays for element in _elements(data, path, repr(self))]
