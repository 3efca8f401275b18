"""``reshape`` with ``rel_shape`` and ``src_dims``: DALI's wildcard rules and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


def reshaped(shape: tuple[int, ...], **kwargs: object) -> tuple[int, ...]:
    (out,), _ = run_op("reshape", [np.zeros(shape, np.uint8)], None, **kwargs)
    return out.shape


@pytest.mark.parametrize(
    ("shape", "kwargs", "expected"),
    [
        ((4, 6), {"rel_shape": [-1, 0.5]}, (8, 3)),  # the wildcard takes what is left
        ((4, 6, 2), {"rel_shape": [0.5, -1]}, (2, 24)),  # fewer values than dimensions
        ((4, 6), {"rel_shape": [1, 1, -1]}, (4, 6, 1)),  # a trailing wildcard adds a dimension
        ((200, 300, 100), {"src_dims": [2, 0, 1], "rel_shape": [0.5, 0.5, -1]}, (50, 100, 1200)),
        ((10, 20, 30), {"src_dims": [2, -1, 1, 0]}, (30, 1, 20, 10)),
    ],
)
def test_relative_shapes_and_wildcards(shape, kwargs, expected) -> None:
    assert reshaped(shape, **kwargs) == expected


@pytest.mark.parametrize(
    ("shape", "kwargs", "message"),
    [
        ((4, 6), {"rel_shape": [1, -1, 1]}, r"`rel_shape` has more elements \(3\) than there are"),
        ((4, 0), {"rel_shape": [-1, 1]}, r"Cannot infer the extent of dimension 0 .* 4 x 0"),
        ((4, 6), {"rel_shape": [0.5, -1, -1]}, "Only one negative extent is allowed"),
        ((2, 3, 4), {"src_dims": [2, 0]}, "Requested a shape with 8 elements but the original"),
        ((2, 3, 4), {"src_dims": [2, 0, 1], "rel_shape": [1, -1]}, "different lengths: 3 vs 2"),
        ((3,), {"src_dims": [0, 1]}, r"`src_dims\[1\] == 1` is out of bounds"),
    ],
)
def test_errors_in_dalis_words(shape, kwargs, message) -> None:
    with pytest.raises(OperatorError, match=message):
        reshaped(shape, **kwargs)
