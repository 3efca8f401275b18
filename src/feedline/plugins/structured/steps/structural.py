"""Steps that change the format only: removing fields and padding to a uniform batch shape."""

from __future__ import annotations

from collections.abc import Sequence

from feedline.plugins.structured.paths import Name, format_path
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FieldNotFoundError, FormatError, PipelineStepBase
from feedline.types import DataType

__all__ = ["PaddingToUniform", "UnneededFieldRemover", "find_data_fields"]


def find_data_fields(
    data: SampleDataGroup,
    name: Name,
    what: str,
    dtype: DataType | None = None,
    kind: str = "fields",
) -> list[tuple[Name, ...]]:
    """Paths of the data fields named ``name`` (groups of that name are skipped).

    Raises:
        FormatError: none found, or one has another type than ``dtype`` (naming it).
    """
    paths = [
        p
        for p in data.find_all_occurrences(name)
        if not data.path_exists_and_is_data_group_field(p)
    ]
    if not paths:
        raise FieldNotFoundError(
            f"{what}: No occurrences of {kind} found (no data field named {name!r})"
        )
    for path in paths:
        actual = data.get_type_of_item_in_path(path)
        if dtype is not None and actual is not dtype:
            raise FormatError(
                f"{what}: field {format_path(path)!r} has type {actual.name}, expected {dtype.name}"
            )
    return paths


class UnneededFieldRemover(PipelineStepBase):
    """Removes every field (leaf or group) with one of the given names; costs nothing at run time.

    Args:
        unneeded_field_names: the names to remove.
    """

    def __init__(self, unneeded_field_names: Name | Sequence[Name]) -> None:
        names = (
            [unneeded_field_names]
            if isinstance(unneeded_field_names, str | int)
            else list(unneeded_field_names)
        )
        if not names:
            raise ValueError("UnneededFieldRemover: give at least one field name")
        self._names = names

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        return self._process(data_empty)

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        for name in self._names:
            data.remove_all_occurrences(name)
        return data

    def __repr__(self) -> str:
        return f"UnneededFieldRemover({self._names!r})"


class PaddingToUniform(PipelineStepBase):
    """Pads fields to the largest shape in the batch, so the iterator can stack them.

    Args:
        field_names: names of the fields to pad (a group pads every leaf below it); ``None``
            pads every leaf.
        fill_value: the value of the padded elements.
    """

    def __init__(
        self, field_names: Name | Sequence[Name] | None = None, fill_value: float = 0.0
    ) -> None:
        if field_names is None or isinstance(field_names, str | int):
            self._names = None if field_names is None else [field_names]
        else:
            self._names = list(field_names)
        self._fill = float(fill_value)

    def _targets(self, data: SampleDataGroup) -> list[SampleDataGroup | tuple[Name, ...]]:
        if self._names is None:
            return [data]
        found = [p for name in self._names for p in data.find_all_occurrences(name)]
        if not found:
            raise FieldNotFoundError(
                f"{self!r}: No fields to be padded with name "
                f"{', '.join(repr(n) for n in self._names)} were found"
            )
        return found

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._targets(data_empty)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for target in self._targets(data):
            if isinstance(target, SampleDataGroup):
                target.ensure_uniform_size_in_batch(self._fill)
            elif data.path_exists_and_is_data_group_field(target):
                data.get_item_in_path(target).ensure_uniform_size_in_batch(self._fill)
            else:
                node = data.get_item_in_path(target)
                data.set_item_in_path(target, fn.pad(node, fill_value=self._fill))
        return data

    def __repr__(self) -> str:
        return f"PaddingToUniform({self._names!r}, fill_value={self._fill})"
