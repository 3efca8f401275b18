"""Comparisons between any two input types give DALI's answers, for every pair of the table.

DALI compares a float with anything in the promoted type of the binary promotion table (so
``float32 < int64`` rounds the integer to float32 first) and compares two integers (or bools) by
their exact values, whatever their signedness. The promoted type is read from the hard-coded
table of ``test_math_promotion``, not from the implementation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu import basic, math_plugin
from feedline.operators.cpu.math_kernels import evaluate
from tests.operators.cpu.test_math_kernels import COMPARISONS
from tests.operators.cpu.test_math_promotion import NAMES, SHORT, TABLE


def edge_values(name: str) -> np.ndarray:
    """Values of type ``name`` that tell apart exact, float32 and float64 comparisons."""
    dtype = np.dtype(SHORT[name])
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind == "f":
        values = [0.0, -1.5, 0.5, 2.0**24, 2.0**24 + 2, 2.0**53, 2.0**63, 2.0**64, np.inf, np.nan]
        return np.array(values, dtype)
    info = np.iinfo(dtype)
    candidates = [0, 1, -1, info.min, info.max, info.max - 1, 2**24 + 1, 2**53 + 1, 2**63 + 1]
    return np.array([v for v in candidates if info.min <= v <= info.max], dtype)


def reference(op: str, left: np.ndarray, right: np.ndarray, promoted: str) -> list[bool]:
    """DALI's answer: in the promoted type when it is a float, else exactly."""
    if promoted.startswith("f"):
        target = SHORT[promoted]
        xs, ys = left.astype(target).tolist(), right.astype(target).tolist()
    else:
        xs, ys = left.tolist(), right.tolist()
    return [COMPARISONS[op](x, y) for x, y in zip(xs, ys, strict=True)]


PAIRS = list(itertools.product(NAMES, NAMES))


@pytest.mark.parametrize(("left_name", "right_name"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_every_type_pair_compares_as_dali(left_name: str, right_name: str) -> None:
    pairs = list(itertools.product(edge_values(left_name), edge_values(right_name)))
    left = np.array([a for a, _ in pairs], SHORT[left_name])
    right = np.array([b for _, b in pairs], SHORT[right_name])
    promoted = TABLE[left_name, right_name]
    for op in COMPARISONS:
        got = evaluate(op, left, right)
        assert got.dtype == np.bool_
        assert got.tolist() == reference(op, left, right, promoted), (op, promoted)


def test_float32_against_int64_compares_in_float32() -> None:
    big = np.array([2**24 + 1, 2**40 + 1], np.int64)
    rounded = np.array([2**24, 2**40], np.float32)
    assert evaluate("eq", big, rounded).tolist() == [True, True]
    assert evaluate("lt", rounded, big).tolist() == [False, False]
    # float64 holds both exactly
    assert evaluate("eq", big, rounded.astype(np.float64)).tolist() == [False, False]


def test_mixed_sign_integers_compare_exactly() -> None:
    # the table promotes uint64 with a signed type to int64, but DALI compares exact values
    assert evaluate("lt", np.int64(-1), np.uint64(2**64 - 1)).item() is True
    assert evaluate("gt", np.uint32(2**32 - 1), np.int32(-1)).item() is True
    assert evaluate("eq", np.uint64(2**63), np.int64(-(2**63))).item() is False


@pytest.fixture
def math_plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    empty_plugin_system.register(basic, "basic")
    empty_plugin_system.register(math_plugin, "math")
    yield empty_plugin_system


@pytest.mark.usefixtures("math_plugins")
def test_data_node_comparison_in_a_pipeline_uses_the_promoted_type() -> None:
    floats = [np.array([2**24, 1.5], np.float32)] * 2
    ints = [np.array([2**24 + 1, 1], np.int64)] * 2

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        f = fn.external_source(source=lambda: floats)
        i = fn.external_source(source=lambda: ints)
        return f < i, f == i, i >= f

    p = pipe()
    try:
        p.build()
        lt, eq, ge = p.run()
    finally:
        p.close()
    assert lt.at(0).tolist() == [False, False]
    assert eq.at(0).tolist() == [True, False]
    assert ge.at(1).tolist() == [True, False]
