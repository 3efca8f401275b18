"""``jitter``: offsets within range, border fill, mask, reproducibility, schema docs."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError, fn
from feedline.operators.cpu.effects.schemas import SCHEMAS
from tests.operators.cpu.image_samples import PerSample, run_op


def coordinates(h: int, w: int) -> np.ndarray:
    """An image whose pixels encode their own position (y * 1000 + x + 1)."""
    y, x = np.mgrid[0:h, 0:w]
    return (y * 1000 + x + 1).astype(np.int32)


@pytest.mark.parametrize("n_degree", [1, 2, 3, 5])
def test_every_pixel_comes_from_within_the_offset_range(n_degree: int) -> None:
    image = coordinates(40, 30)
    (out,), _ = run_op("jitter", [image], "HW", nDegree=n_degree, fill_value=-1)
    half = n_degree // 2
    y, x = np.mgrid[0:40, 0:30]
    inside = out > 0
    dy = (out[inside] - 1) // 1000 - y[inside]
    dx = (out[inside] - 1) % 1000 - x[inside]
    assert dy.min() >= -half and dy.max() <= n_degree - 1 - half
    assert dx.min() >= -half and dx.max() <= n_degree - 1 - half
    if n_degree > 1:
        assert len(np.unique(dx)) == n_degree  # every offset occurs
        assert (~inside).any()  # borders reached outside: filled
    else:
        np.testing.assert_array_equal(out, image)


def test_mask_and_reproducibility() -> None:
    image = coordinates(16, 16)
    out, _ = run_op("jitter", [image, image], "HW", mask=PerSample([0, 1]), seed=3)
    np.testing.assert_array_equal(out[0], image)
    assert not np.array_equal(out[1], image)
    again, _ = run_op("jitter", [image, image], "HW", mask=PerSample([0, 1]), seed=3, num_threads=1)
    np.testing.assert_array_equal(again[1], out[1])
    rgb = np.repeat(image[:, :, None], 3, axis=2)
    (moved,), _ = run_op("jitter", [rgb], "HWC", nDegree=4)
    assert (moved[:, :, 0] == moved[:, :, 2]).all()  # channels move together


def test_jitter_errors_and_generated_docs() -> None:
    with pytest.raises((OperatorError, ValueError), match="'nDegree' = 0"):
        run_op("jitter", [np.zeros((4, 4, 3), np.uint8)], "HWC", nDegree=0)
    with pytest.raises(
        (OperatorError, ValueError),
        match='The layout "CHW" does not match any of the allowed layouts',
    ):
        run_op("jitter", [np.zeros((3, 4, 4), np.uint8)], "CHW")
    for schema in SCHEMAS:
        doc = getattr(fn, schema.name).__doc__
        assert all(f"    {arg.name} (" in doc for arg in schema.args)
