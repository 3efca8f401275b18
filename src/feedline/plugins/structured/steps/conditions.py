"""``AnnotationElementConditionEval``: a per-object condition over annotation fields, as a mask."""

from __future__ import annotations

from typing import Any

from feedline.plugins.structured.conditions import AST, Parser, Variable
from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FieldNotFoundError, PipelineStepBase
from feedline.types import DataType

__all__ = ["AnnotationElementConditionEval"]


def _variables(node: AST) -> list[str]:
    if isinstance(node, Variable):
        return [node.name]
    found: list[str] = []
    for child in vars(node).values():
        children = child if isinstance(child, tuple) else (child,)
        for item in children:
            if isinstance(item, AST):
                found.extend(n for n in _variables(item) if n not in found)
    return found


class AnnotationElementConditionEval(PipelineStepBase):
    """Evaluates ``result = <condition>`` per object in every annotation group; adds a BOOL field.

    The condition language has variables (annotation data fields holding one value per object,
    1-D or with one axis of size 1), numbers, ``-``, comparisons, ``not``, ``and``, ``or`` and
    parentheses, e.g. ``is_valid = (num_lidar >= 1 or num_radar >= 1) and category > 0``.

    Args:
        annotation_field_name: the name of the annotation groups (all of them are processed).
        condition: ``result_name = expression``.
        remove_data_fields_used_in_condition: remove the fields the condition reads afterwards.

    Raises:
        ValueError: the condition is not a statement of the language.
    """

    def __init__(
        self,
        annotation_field_name: Name,
        condition: str,
        remove_data_fields_used_in_condition: bool = False,
    ) -> None:
        statement = Parser(condition).parse()
        self._name = annotation_field_name
        self._condition_text = condition
        self._expression = statement.expression
        self._result = statement.variable.name
        self._used = _variables(self._expression)
        self._remove = bool(remove_data_fields_used_in_condition)

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
        return [data.get_item_in_path(p) for p in paths]

    def _finish(self, group: SampleDataGroup) -> None:
        if self._remove:
            for name in self._used:
                group.remove_field(name)

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for group in self._groups(data_empty):
            group.check_has_children(data_field_children=self._used, current_name=str(self._name))
            group.add_data_field(self._result, DataType.BOOL)
            self._finish(group)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for group in self._groups(data):
            values: dict[str, Any] = {
                name: fn.reshape(group[name], shape=[-1]) for name in self._used
            }
            mask = fn.cast(self._expression.evaluate(values), dtype=DataType.BOOL)
            group.add_data_field(self._result, DataType.BOOL)
            group[self._result] = mask
            self._finish(group)
        return data

    def __repr__(self) -> str:
        return f"AnnotationElementConditionEval({self._name!r}, {self._condition_text!r})"
