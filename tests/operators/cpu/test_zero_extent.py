"""Samples with a zero extent pass through the operators that DALI passes them through, with
the output shapes DALI gives (checked against DALI 2.4)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import types
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import run_op


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "image", "color", "geometry")


CASES: list[tuple[str, dict[str, Any], tuple[int, ...], tuple[int, ...]]] = [
    ("flip", {"horizontal": 1, "vertical": 1}, (0, 3, 3), (0, 3, 3)),
    ("flip", {"horizontal": True}, (3, 0, 3), (3, 0, 3)),
    ("crop_mirror_normalize", {"mean": [0.0], "std": [1.0]}, (0, 3, 3), (3, 0, 3)),
    ("crop_mirror_normalize", {"mean": [0.0], "std": [1.0]}, (3, 0, 3), (3, 3, 0)),
    ("resize", {"size": [2, 2]}, (0, 3, 3), (0, 2, 3)),
    ("resize", {"size": [2, 2]}, (3, 0, 3), (2, 0, 3)),
    ("brightness", {"brightness": 1.5}, (0, 3, 3), (0, 3, 3)),
    ("hsv", {"hue": 10.0}, (3, 0, 3), (3, 0, 3)),
    ("warp_affine", {"matrix": [1, 0, 0, 0, 1, 0]}, (0, 3, 3), (0, 3, 3)),
    ("paste", {"ratio": 2, "fill_value": 0}, (0, 3, 3), (0, 6, 3)),
    ("paste", {"ratio": 2, "fill_value": 0}, (3, 0, 3), (6, 0, 3)),
    ("transpose", {"perm": [1, 0, 2]}, (0, 3, 3), (3, 0, 3)),
    ("normalize", {}, (3, 0, 3), (3, 0, 3)),
]


@pytest.mark.parametrize(("op", "kwargs", "shape", "expected"), CASES)
def test_zero_extent_samples_pass_through(
    op: str, kwargs: dict[str, Any], shape: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    samples = [np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)]
    if op == "normalize":
        samples = [s.astype(np.float32) for s in samples]
    out, _ = run_op(op, samples, "HWC", **kwargs)
    assert [o.shape for o in out] == [expected, expected]


def test_an_empty_sample_beside_a_full_one() -> None:
    samples = [np.zeros((0, 4, 3), np.uint8), np.full((2, 4, 3), 7, np.uint8)]
    out, _ = run_op("crop_mirror_normalize", samples, "HWC", dtype=types.UINT8, mirror=1)
    assert out[0].shape == (3, 0, 4)
    assert (out[1] == 7).all() and out[1].shape == (3, 2, 4)
