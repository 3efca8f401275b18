"""Which functions the conditional transformation applies to, and what it leaves alone."""

from __future__ import annotations

import ast
import textwrap

import numpy as np

from feedline.core.pipeline.conditionals import convert
from feedline.core.pipeline.conditionals.convert import converted, is_converted
from feedline.core.pipeline.conditionals.transform import transform_function


def _transformed_source(source: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    return ast.unparse(transform_function(tree.body[0]))


def test_an_if_with_break_of_an_outer_loop_stays_plain():
    source = _transformed_source(
        """
        def f(xs):
            for x in xs:
                if x:
                    break
            return x
        """
    )
    assert "if x:" in source and "if_stmt" not in source


def test_conditional_expressions_and_loops_stay_plain():
    source = _transformed_source(
        """
        def f(a, b):
            while a:
                a = a - 1
            return b if a else a
        """
    )
    assert "while a:" in source and "b if a else a" in source


def test_returns_in_branches_become_one_return():
    source = _transformed_source(
        """
        def f(x):
            if x:
                return 1
            else:
                return 2
        """
    )
    assert "return 1" not in source and "return 2" not in source
    assert source.count("return __fl_rt.returned(") == 1


def test_transformed_functions_keep_closures_defaults_and_names():
    offset = 10

    def helper(x, scale=2, *, bias=1):
        if x > 0:
            x = x * scale
        return x + bias + offset

    rebuilt = converted(helper)
    assert rebuilt is not helper and is_converted(rebuilt)
    assert rebuilt.__qualname__ == helper.__qualname__
    for value in (-3, 0, 4):
        assert rebuilt(np.int32(value)) == helper(np.int32(value))
        assert rebuilt(value, 3, bias=0) == helper(value, 3, bias=0)


def test_library_and_feedline_functions_are_not_transformed():
    assert converted(np.clip) is np.clip
    assert converted(textwrap.dedent) is textwrap.dedent
    assert converted(convert.call) is convert.call
    assert converted(len) is len


class _Augment:
    """A callable helper object, as augmentation libraries write them."""

    def __init__(self, amount):
        self.amount = amount
        self.__private = 1

    def __call__(self, x):
        if x > 0:
            x = x + self.amount
        return x

    def uses_private(self, x):
        return x + self.__private


def test_callable_objects_and_partials_are_called_through_their_transformed_code():
    import functools

    augment = _Augment(5)
    through_call = converted(augment)
    assert is_converted(through_call.__func__)
    assert through_call(np.int32(2)) == augment(np.int32(2)) == 7
    partial = converted(functools.partial(_Augment.__call__, augment))
    assert is_converted(partial.func) and partial(np.int32(-1)) == -1


def test_methods_with_private_names_are_left_as_written():
    augment = _Augment(1)
    assert converted(augment.uses_private) == augment.uses_private
    assert not is_converted(converted(augment.uses_private))
