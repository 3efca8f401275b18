"""Conditional pipelines against plain Python run sample by sample: ``if``/``elif``/``else``,
nesting, ``and``/``or``/``not``, variables of one branch, ``return`` in branches, helpers,
nests, and conditions that are plain Python values."""

# The functions below are written with if-statements and and/or on purpose: they are what
# the conditional transformation rewrites.
# ruff: noqa: SIM108, SIM201, RUF021

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.conditionals.helpers import assert_same, run_conditional

NUMBERS = [np.int32(v) for v in (-3, 0, 5, 2, -1, 0, 7, -8)]
FLAGS = [np.bool_(v) for v in (True, False, False, True, True, False, True, False)]


def elif_chain(n):
    if n < 0:
        out = n * 10
    elif n == 0:
        out = n + 100
    elif n < 5:
        out = n - 100
    else:
        out = n * 0
    return out


def nested(n, flag):
    if n >= 0:
        if flag:
            out = n + 1
        else:
            out = n + 2
        extra = out * 2
    else:
        if flag:
            out = n - 1
        else:
            out = n - 2
        extra = out * 3
    return out, extra


def one_sided_update(n, flag):
    total = n * 1
    if flag:
        total = total + 40
    return total


def local_only(n):
    if n > 0:
        scratch = n * 2
        n = scratch + 1
    return n


def logic(n, flag):
    a = flag and n > 0
    b = flag or n < 0
    c = not flag
    d = n > 0 and flag or not (n == 0)
    return a, b, c, d


def returns_in_both(n):
    if n > 0:
        return n + 1000
    else:
        return n - 1000


def early_return_chain(n, flag):
    if flag:
        if n > 0:
            return n, n * 2
        else:
            return n * 0, n
    else:
        base = n + 1
        return base, base * 3


def _helper_with_branch(x):
    if x > 2:
        x = x - 2
    return x + 1


def calls_helper(n):
    return _helper_with_branch(n) * 2


class _Box:
    def __init__(self, value):
        self.value = value
        self.other = value


def attribute_targets(n):
    box = _Box(n * 1)
    if n > 0:
        box.value = n + 7
    else:
        box.other = n - 7
    return box.value, box.other


def nests(n, flag):
    if flag:
        pair = (n, {"k": n + 1})
    else:
        pair = (n * 2, {"k": np.int32(9)})
    first, mapping = pair
    return first, mapping["k"]


@pytest.mark.parametrize(
    ("function", "columns"),
    [
        (elif_chain, [NUMBERS]),
        (nested, [NUMBERS, FLAGS]),
        (one_sided_update, [NUMBERS, FLAGS]),
        (local_only, [NUMBERS]),
        (logic, [NUMBERS, FLAGS]),
        (returns_in_both, [NUMBERS]),
        (early_return_chain, [NUMBERS, FLAGS]),
        (calls_helper, [NUMBERS]),
        (attribute_targets, [NUMBERS]),
        (nests, [NUMBERS, FLAGS]),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_matches_plain_python_per_sample(function, columns):
    assert_same(function, *columns)


@settings(max_examples=15)
@given(
    st.lists(st.integers(-20, 20), min_size=1, max_size=9).flatmap(
        lambda ns: st.tuples(
            st.just(ns), st.lists(st.booleans(), min_size=len(ns), max_size=len(ns))
        )
    )
)
def test_nested_branches_for_any_split(data):
    numbers, flags = data
    assert_same(nested, [np.int32(n) for n in numbers], [np.bool_(f) for f in flags])


@pytest.mark.parametrize("flag", [True, False])
def test_all_samples_one_way_leaves_the_other_branch_empty(flag):
    flags = [np.bool_(flag)] * 6
    numbers = [np.int32(v) for v in range(6)]
    assert_same(nested, numbers, flags)
    assert_same(logic, numbers, flags)


def test_the_right_operand_runs_only_where_it_decides():
    seen: list[int] = []

    def record(x):
        seen.append(int(x))
        return x

    def expression(n, flag):
        from feedline import fn

        return flag and fn.reshape(fn.python_function(n, function=record), shape=[]) > 0

    numbers = [np.int32(v) for v in range(1, 9)]
    (out,) = run_conditional(expression, [numbers, FLAGS])
    # (the pipeline may run ahead by an iteration: the same samples again)
    assert sorted(set(seen)) == [int(n) for n, f in zip(numbers, FLAGS, strict=True) if f]
    assert [bool(o) for o in out] == [bool(f) for f in FLAGS]


def test_python_conditions_stay_plain_python():
    def function(n, flag, scale=3, enabled=True):
        total = n * 1
        for step in range(scale):
            if step % 2 == 0 and enabled:
                total = total + step
            elif not enabled:
                total = total * 0
        result = total if scale > 2 else n
        if flag:
            result = result + 1
        return result

    assert_same(function, NUMBERS, FLAGS)


def test_a_scalar_python_condition_builds_only_its_branch():
    from feedline import fn, pipeline_def, types

    image = np.arange(6, dtype=np.uint8).reshape(1, 2, 3)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe(use_flip):
        data = types.Constant(image, layout="HWC")
        if use_flip:
            data = fn.flip(data, horizontal=1)
        return data

    for use_flip in (False, True):
        built = pipe(use_flip=use_flip)
        (out,) = built.run()
        expected = image[:, ::-1] if use_flip else image
        assert np.array(out[0]).tolist() == expected.tolist()
        names = built.executor_statistics()
        assert not any("Split" in name or "Merge" in name for name in names)


def test_a_conditional_pipeline_serializes_and_runs_the_same():
    from feedline import Pipeline, fn, pipeline_def

    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=3, enable_conditionals=True)
    def pipe():
        x = fn.random.uniform(range=[0, 10])
        if x > 5:
            y = x * 2
        else:
            y = x - 100
        return y, (x > 2) and (x < 8)

    original = pipe()
    copy = Pipeline.deserialize(
        serialized_pipeline=original.serialize(), batch_size=6, num_threads=2, device_id=None
    )
    copy.build()
    for _ in range(2):
        for a, b in zip(original.run(), copy.run(), strict=True):
            assert [np.array(s).tolist() for s in a] == [np.array(s).tolist() for s in b]
