"""AffineTransformer: the matrix, box/point updates, and images and boxes staying aligned."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import types
from feedline.plugins.structured import AffineTransformer, PipelineDefinition, SampleDataGroup
from feedline.plugins.structured.steps.affine import (
    affine_matrix,
    transform_boxes,
    transform_points,
)
from tests.plugins.structured.helpers import FixedCallable


def matrix(
    image_hw: tuple[int, int],
    mode: str = "stretch",
    flip: int = 0,
    draws: Any = (0, 0.5, 0.5),
    scale: tuple = (1.0, 1.0),
    shift: tuple = (0.0, 0.0),
    out: tuple = (50, 100),
) -> np.ndarray:
    return affine_matrix(
        np.zeros((*image_hw, 3)),
        np.array(draws),
        np.array(flip),
        output_hw=out,
        mode=mode,
        scale_range=scale,
        translation_range=shift,
    )


def test_matrix_resizing_modes_and_flip() -> None:
    corners = np.array([[0, 0, 200, 50]], np.float32)
    assert np.allclose(transform_boxes(corners, matrix((50, 200))), [[0, 0, 100, 50]])
    assert np.allclose(transform_boxes(corners, matrix((50, 200), "pad")), [[0, 12.5, 100, 37.5]])
    assert np.allclose(transform_boxes(corners, matrix((50, 200), "crop")), [[-50, 0, 150, 50]])
    flipped = transform_boxes(np.array([[10, 5, 30, 20]], np.float32), matrix((50, 200), flip=1))
    assert np.allclose(flipped, [[85, 5, 95, 20]])
    shifted = matrix((50, 200), draws=(1, 1, 0), scale=(1, 2), shift=(-0.1, 0.1))
    assert np.allclose(transform_points(np.array([[100, 25]], np.float32), shifted), [[60, 20]])


def test_points_keep_their_shape_and_type() -> None:
    points = np.arange(12, dtype=np.float64).reshape(2, 6)
    moved = transform_points(points, matrix((10, 10)))
    assert moved.shape == (2, 6) and moved.dtype == np.float32
    assert transform_boxes(np.zeros((0, 4)), matrix((10, 10))).shape == (0, 4)


def white_box_sample() -> tuple[SampleDataGroup, tuple]:
    blueprint = SampleDataGroup()
    blueprint.add_data_field("image", types.UINT8)
    blueprint.add_data_field("boxes", types.FLOAT)
    blueprint.add_data_field("points", types.FLOAT)
    sample = blueprint.get_empty_like_self()
    image = np.zeros((60, 90, 3), np.uint8)
    image[10:30, 20:50] = 255
    sample["image"] = image
    sample["boxes"] = [[20, 10, 50, 30]]
    sample["points"] = [[20, 10, 50, 30]]
    return blueprint, sample.get_data()


@pytest.mark.parametrize("mode", ["stretch", "pad", "crop"])
def test_images_and_boxes_stay_aligned(mode: str) -> None:
    blueprint, values = white_box_sample()
    step = AffineTransformer(
        (64, 64),
        mode,
        box_field_names="boxes",
        point_field_names="points",
        prob_flip=0.5,
        scale_range=(0.7, 1.2),
        translation_range=(-0.1, 0.1),
    )
    definition = PipelineDefinition(
        FixedCallable(blueprint, values, 8), [step], use_parallel_external_source=False
    )
    pipe = definition.get_dali_pipeline(batch_size=8, num_threads=1, device_id=None, seed=11)
    pipe.build()
    images, boxes, points = (tl.as_array() for tl in pipe.run())
    flips = 0
    for image, box, point in zip(images, boxes, points, strict=True):
        ys, xs = np.nonzero(image[..., 0] > 127)
        found = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
        assert np.allclose(found, box[0], atol=1.5), (found, box[0])
        flips += point[0][0] > point[0][2]
        assert np.allclose(np.sort(point[0][::2]), box[0][::2])
    assert 0 < flips < 8
    pipe.close()
