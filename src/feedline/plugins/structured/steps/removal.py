"""``ConditionalElementRemover``: drops the objects a mask marks ``False`` from annotations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FieldNotFoundError, PipelineStepBase

__all__ = ["ConditionalElementRemover"]


def _keep(field: str, axis: int, ndim: int) -> Any:
    def keep(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if values.ndim != ndim:
            raise ValueError(
                f"ConditionalElementRemover: field {field!r} has {values.ndim} dimensions, "
                f"fields_to_process_num_dims says {ndim}"
            )
        return np.ascontiguousarray(np.compress(mask.reshape(-1).astype(bool), values, axis=axis))

    return keep


class ConditionalElementRemover(PipelineStepBase):
    """Keeps, in every annotation group, only the elements whose mask entry is ``True``.

    Args:
        annotation_field_name: the name of the annotation groups (each is processed on its own).
        mask_field_name: the BOOL field of each group: one entry per element.
        field_names_to_process: the fields to filter.
        field_dims_to_process: for each of them, the axis that enumerates the elements.
        fields_to_process_num_dims: for each of them, its number of dimensions (checked per
            sample).
        remove_mask_field: remove the mask field afterwards.

    Raises:
        ValueError: the three sequences differ in length.
    """

    def __init__(
        self,
        annotation_field_name: Name,
        mask_field_name: Name,
        field_names_to_process: Sequence[Name],
        field_dims_to_process: Sequence[int],
        fields_to_process_num_dims: Sequence[int],
        remove_mask_field: bool = False,
    ) -> None:
        names = list(field_names_to_process)
        if not len(names) == len(field_dims_to_process) == len(fields_to_process_num_dims):
            raise ValueError(
                "ConditionalElementRemover: field_names_to_process, field_dims_to_process and "
                "fields_to_process_num_dims must have one entry per field"
            )
        self._name = annotation_field_name
        self._mask = mask_field_name
        self._fields = list(
            zip(names, field_dims_to_process, fields_to_process_num_dims, strict=True)
        )
        self._remove_mask = bool(remove_mask_field)

    def _groups(self, data: SampleDataGroup) -> list[SampleDataGroup]:
        paths = [
            p
            for p in data.find_all_occurrences(self._name)
            if data.path_exists_and_is_data_group_field(p)
        ]
        if not paths:
            raise FieldNotFoundError(
                f"{self!r}: No occurrences of annotations found (no data group field named "
                f"{self._name!r})"
            )
        groups = [data.get_item_in_path(p) for p in paths]
        for path, group in zip(paths, groups, strict=True):
            for name, _, _ in self._fields:
                if not group.has_child(name):
                    raise FieldNotFoundError(
                        f"No field to process {name!r} in annotation at {path}"
                    )
            if not group.has_child(self._mask):
                raise FieldNotFoundError(f"No mask field {self._mask!r} in annotation at {path}")
        return groups

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for group in self._groups(data_empty):
            if self._remove_mask:
                group.remove_field(self._mask)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for group in self._groups(data):
            mask = group[self._mask]
            for name, axis, ndim in self._fields:
                group[name] = fn.python_function(
                    group[name], mask, function=_keep(str(name), axis, ndim)
                )
            if self._remove_mask:
                group.remove_field(self._mask)
        return data

    def __repr__(self) -> str:
        return f"ConditionalElementRemover({self._name!r}, mask={self._mask!r})"
