"""Functions that call themselves, converted for conditionals: directly, in a lambda and in a
generator expression, each with a per-sample condition inside."""

from __future__ import annotations

from typing import Any

import pytest

from feedline.core.pipeline.conditionals.convert import converted, is_converted
from tests.core.conditionals.helpers import assert_same

VALUES = [0.0, 1.0, 2.5, 3.0, 7.0, -4.0]


def step(x: Any) -> Any:
    if x > 2:  # noqa: SIM108 (a statement is what the conditionals convert)
        x = x - 1
    else:
        x = x + 10
    return x


def direct(x: Any, depth: int) -> Any:
    if depth == 0:
        return x
    return direct(step(x), depth - 1)


def in_lambda(x: Any, depth: int) -> Any:
    if depth == 0:
        return x
    again = lambda value: in_lambda(step(value), depth - 1)  # noqa: E731
    return again(x)


def in_generator_expression(x: Any, depth: int) -> Any:
    if depth == 0:
        return x
    parts = [in_generator_expression(step(x), depth - 1) * k for k in (1, 2)]
    return sum(part for part in (in_generator_expression(p, 0) for p in parts))


def nested_recursion(x: Any) -> Any:
    def inner(value: Any, depth: int) -> Any:
        if depth == 0:
            return value
        return sum(inner(step(value), depth - 1) for _ in range(2))

    return inner(x, 2)


@pytest.mark.parametrize(
    "function",
    [
        lambda x: direct(x, 3),
        lambda x: in_lambda(x, 3),
        lambda x: in_generator_expression(x, 2),
        nested_recursion,
    ],
    ids=["direct", "in_lambda", "in_generator_expression", "nested"],
)
def test_recursive_functions_match_plain_python(function: Any) -> None:
    assert_same(function, VALUES)


def test_a_converted_recursive_function_keeps_its_name_and_calls_the_original_name() -> None:
    rebuilt = converted(direct, force=True)
    assert is_converted(rebuilt)
    assert rebuilt.__name__ == rebuilt.__code__.co_name == "direct"
    assert rebuilt.__code__.co_freevars == ("__fl_rt",)  # `direct` stays a global lookup
    assert rebuilt(5, 2) == direct(5, 2)
