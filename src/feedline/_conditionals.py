"""``feedline._conditionals``: where DALI's private ``nvidia.dali._conditionals`` module is, so
that code importing it ports by the module rename. feedline's conditionals live in
:mod:`feedline.core.pipeline.conditionals` (DALI's internal condition-stack API is not
reproduced)."""

from feedline.core.pipeline.conditionals import do_not_convert, is_converted
from feedline.core.pipeline.conditionals.scopes import ConditionStack

__all__ = ["ConditionStack", "do_not_convert", "is_converted"]
