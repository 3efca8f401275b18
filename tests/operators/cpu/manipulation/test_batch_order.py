"""``permute_batch`` and ``batch_permutation``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.manipulation.batch_order import random_indices
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

SAMPLES = [np.full((i + 1, 2), i, np.int16) for i in range(4)]


def test_permute_batch_picks_samples_with_repetitions() -> None:
    ((out, layout),) = build(
        lambda: fn.permute_batch(feed(SAMPLES, "HW"), indices=[3, 3, 0, 1]), batch_size=4
    )
    assert layout == "HW"
    assert [o.shape[0] for o in out] == [4, 4, 1, 2]


def test_permute_batch_per_sample_indices() -> None:
    indices = [np.int32(i) for i in (1, 0, 0, 2)]
    ((out, _),) = build(
        lambda: fn.permute_batch(feed(SAMPLES), indices=feed(indices)), batch_size=4
    )
    assert [int(o[0, 0]) for o in out] == [1, 0, 0, 2]


@pytest.mark.parametrize(
    ("indices", "message"),
    [
        ([0, 1], "2 indices do not match the batch size 4"),
        ([0, 1, 2, 4], r"indices\[3\] = 4 is not a valid index for an input batch of 4"),
    ],
)
def test_permute_batch_errors(indices: list, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(lambda: fn.permute_batch(feed(SAMPLES), indices=indices), batch_size=4)


@given(st.integers(1, 12), st.booleans(), st.booleans(), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_random_indices_obey_their_flags(size: int, repeat: bool, derange: bool, seed: int):
    got = random_indices(np.random.default_rng(seed), size, repeat, derange)
    assert got.shape == (size,) and ((got >= 0) & (got < size)).all()
    if not repeat:
        assert sorted(got.tolist()) == list(range(size))
    if derange and size > 1:
        assert not np.any(got == np.arange(size))


def test_batch_permutation_is_int32_and_seeded() -> None:
    def graph() -> Any:
        return fn.batch_permutation(no_fixed_points=True, seed=5)

    ((first, _),) = build(graph, batch_size=6, num_threads=1)
    ((again, _),) = build(graph, batch_size=6, num_threads=3)
    assert [int(x) for x in first] == [int(x) for x in again]
    assert first[0].dtype == np.int32 and first[0].shape == ()
    assert sorted(int(x) for x in first) == list(range(6))
    assert all(int(x) != i for i, x in enumerate(first))


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("permute_batch", OperatorExample([SAMPLES], ["HW"], {"indices": [1, 1, 3, 0]})),
        ("batch_permutation", OperatorExample(args={"allow_repetitions": True}, batch_size=5)),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)
