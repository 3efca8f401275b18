"""What the transformed pipeline code calls: ``if`` statements, ``and``/``or``/``not`` and the
bookkeeping of variables (see :mod:`.transform` for the code that calls these).

Each function decides at run time: a condition that is a DataNode, while a conditional pipeline
is being defined, becomes split and merge operators; anything else runs as the plain Python
statement it replaced.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from feedline.core.graph import DataNode, constant_node, make_operator_call
from feedline.core.pipeline.conditionals.markers import CONVERTED
from feedline.core.pipeline.conditionals.scopes import ConditionStack, active_stack
from feedline.core.pipeline.conditionals.structure import map_leaves, structure_mismatch

__all__ = [
    "CONVERTED",
    "DO_RETURN",
    "RETVAL",
    "UNDEFINED_RETURN",
    "Undefined",
    "and_",
    "get_attr",
    "if_stmt",
    "ld",
    "mark",
    "not_",
    "or_",
    "returned",
]

RETVAL = "__fl_retval"
"""The variable that holds the return value of a function whose ``return`` is in a branch."""
DO_RETURN = "__fl_do_return"
"""The variable that says whether such a function has returned."""


_INCONSISTENT = (
    "Encountered inconsistent outputs out of the `if/else` control flow statement. Variables "
    "need to be initialized in every code path (both `if` branches)."
)


class Undefined:
    """The value of a variable that has none: before its first assignment, or after an ``if``
    that assigned it in one branch only (``branch`` names the other)."""

    __slots__ = ("branch", "name")

    def __init__(self, name: str, branch: str | None = None) -> None:
        self.name = name
        self.branch = branch

    def error(self) -> Exception:
        """The error that reading the variable raises."""
        if self.branch is None:
            return UnboundLocalError(
                f"cannot access local variable '{self.name}' where it is not associated with a "
                "value"
            )
        return RuntimeError(
            f"{_INCONSISTENT} Variable '{self.name}' must also be initialized in the "
            f"`{self.branch}` branch."
        )

    def __repr__(self) -> str:
        return f"Undefined({self.name!r})"


class _UndefinedReturn:
    """The return value of a function that has not returned (yet)."""

    def __repr__(self) -> str:
        return "UNDEFINED_RETURN"


UNDEFINED_RETURN: Any = _UndefinedReturn()


def ld(value: Any) -> Any:
    """A variable read: its value.

    Raises:
        RuntimeError: the variable was assigned in one branch of a conditional ``if`` only.
        UnboundLocalError: it was never assigned.
    """
    if isinstance(value, Undefined):
        raise value.error()
    return value


def get_attr(obj: Any, name: str, display: str) -> Any:
    """``obj.<name>``, or :class:`Undefined` (named ``display``) when it has none."""
    try:
        return getattr(obj, name)
    except AttributeError:
        return Undefined(display)


def mark(function: Any) -> Any:
    """Mark a function defined inside transformed code as transformed itself."""
    with contextlib.suppress(AttributeError, TypeError):
        setattr(function, CONVERTED, True)
    return function


def returned(value: Any) -> Any:
    """The final return value of a function whose ``return`` statements were rewritten."""
    return None if value is UNDEFINED_RETURN else value


def not_(value: Any) -> Any:
    """``not value``: a ``_conditional.not_`` operator for a DataNode in a conditional pipeline."""
    if isinstance(value, DataNode) and active_stack() is not None:
        if value.device != "cpu":
            raise RuntimeError(
                "Logical expression `not` is restricted to scalar (0-d tensors) inputs of `bool` "
                "type, that are placed on CPU. Got a GPU input in logical expression."
            )
        return make_operator_call("_conditional.not_", [value], {})
    return not value


def and_(left: Any, right: Callable[[], Any]) -> Any:
    """``left and right()``, evaluating ``right`` only for the samples where ``left`` holds."""
    stack = active_stack()
    if stack is None or not isinstance(left, DataNode):
        return left and right()
    return _lazy_logical(stack, "and", left, right)


def or_(left: Any, right: Callable[[], Any]) -> Any:
    """``left or right()``, evaluating ``right`` only for the samples where ``left`` does not
    hold."""
    stack = active_stack()
    if stack is None or not isinstance(left, DataNode):
        return left or right()
    return _lazy_logical(stack, "or", left, right)


def _validated(value: Any, expression: str, side: str) -> DataNode:
    if isinstance(value, DataNode) and value.device != "cpu":
        raise RuntimeError(
            f"Logical expression `{expression}` is restricted to scalar (0-d tensors) inputs of "
            "`bool` type, that are placed on CPU. Got a GPU input as the "
            f"{side} argument in logical expression."
        )
    node = make_operator_call(
        "_conditional.validate_logical",
        [value],
        {"expression_name": expression, "expression_side": side},
    )
    assert isinstance(node, DataNode)
    return node


def _lazy_logical(
    stack: ConditionStack, expression: str, left: DataNode, right: Callable[[], Any]
) -> DataNode:
    """``and``/``or`` as an ``if``: the right operand is traced in the branch that needs it,
    the left operand (the predicate) stands for the other branch."""
    predicate = stack.push(_validated(left, expression, "left"))
    try:
        stack.enter(True)
        if expression == "and":
            on_true = stack.localize(_validated(right(), expression, "right"))
        else:
            on_true = stack.localize(predicate)
        stack.enter(False)
        if expression == "and":
            on_false = stack.localize(predicate)
        else:
            on_false = stack.localize(_validated(right(), expression, "right"))
        stack.enter(None)
        return stack.merge(on_true, on_false)
    finally:
        stack.pop()


def if_stmt(
    condition: Any,
    body: Callable[[], None],
    orelse: Callable[[], None],
    get_state: Callable[[], tuple[Any, ...]],
    set_state: Callable[[tuple[Any, ...]], None],
    names: tuple[str, ...],
) -> None:
    """An ``if`` statement whose branches ``body`` and ``orelse`` assign the variables
    ``names`` (read with ``get_state``, written with ``set_state``).

    A DataNode condition in a conditional pipeline traces both branches, each on the samples
    that take it, and merges each variable that the branches leave different.

    Raises:
        RuntimeError: a ``return`` in one branch only.
        ValueError: a variable of different structure in the two branches.
    """
    stack = active_stack()
    if stack is None or not isinstance(condition, DataNode):
        if condition:
            body()
        else:
            orelse()
        return
    if condition.device != "cpu":
        raise ValueError(
            "Invalid device \"gpu\" for argument 'predicate' of operator "
            "'nvidia.dali.fn._conditional.split'. The condition of an `if` must be a CPU batch "
            f"(feedline's fn._conditional.split got {condition.name!r} on the GPU)."
        )
    before = get_state()
    stack.push(condition)
    try:
        stack.enter(True)
        body()
        after_true = get_state()
        set_state(before)
        stack.enter(False)
        orelse()
        after_false = get_state()
        stack.enter(None)
        merged = tuple(
            _merged_variable(stack, name, on_true, on_false)
            for name, on_true, on_false in zip(names, after_true, after_false, strict=True)
        )
    finally:
        stack.pop()
    set_state(merged)


def _merged_variable(stack: ConditionStack, name: str, on_true: Any, on_false: Any) -> Any:
    if name in (RETVAL, DO_RETURN):
        unset = UNDEFINED_RETURN if name == RETVAL else False
        if (on_true is unset) != (on_false is unset):
            missing = "if" if on_true is unset else "else"
            raise RuntimeError(
                f"{_INCONSISTENT} The `{missing}` branch must also have a return statement."
            )
    if on_true is on_false:
        return on_true
    if isinstance(on_true, Undefined) or isinstance(on_false, Undefined):
        return Undefined(name, "if" if isinstance(on_true, Undefined) else "else")
    error = structure_mismatch(name, on_true, on_false)
    if error is not None:
        raise error
    return map_leaves(lambda a, b: _merged_leaf(stack, name, a, b), on_true, on_false)


def _merged_leaf(stack: ConditionStack, name: str, on_true: Any, on_false: Any) -> Any:
    if on_true is on_false and (
        not isinstance(on_true, DataNode) or len(stack.path_of(on_true)) < stack.depth
    ):
        return on_true
    stack.enter(True)
    true_node = _branch_node(stack, name, on_true)
    stack.enter(False)
    false_node = _branch_node(stack, name, on_false)
    stack.enter(None)
    return stack.merge(true_node, false_node)


def _branch_node(stack: ConditionStack, name: str, value: Any) -> DataNode:
    """``value`` as a batch of the branch being traced (constants become constant nodes)."""
    if not isinstance(value, DataNode):
        try:
            value = constant_node(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"variable '{name}' takes different values in the two branches of a conditional "
                f"`if`, so they are merged into one batch, but {value!r} is neither a DataNode "
                f"nor a constant ({exc})"
            ) from exc
    return stack.localize(value)
