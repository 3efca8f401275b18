"""``random_crop_generator``: the window of ``decoders.image_random_crop``, from a shape."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

from feedline import OperatorError, fn
from feedline.core.plugins import PluginSystem
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "image")


def _png(height: int, width: int, seed: int) -> np.ndarray:
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return np.frombuffer(buffer.getvalue(), np.uint8)


def test_same_seed_gives_the_window_of_image_random_crop() -> None:
    files = [_png(40, 60, 0), _png(33, 21, 1), _png(50, 50, 2)]

    def graph() -> tuple[Any, ...]:
        encoded = feed(files)
        images = fn.decoders.image(encoded)
        anchor, shape = fn.random_crop_generator(fn.peek_image_shape(encoded), seed=77)
        cut = fn.slice(images, start=anchor, shape=shape, axes=[0, 1])
        return fn.decoders.image_random_crop(encoded, seed=77), cut, anchor, shape

    (direct, _), (sliced, _), (anchors, _), (shapes, _) = build(graph, batch_size=3)
    for a, b, anchor, shape in zip(direct, sliced, anchors, shapes, strict=True):
        assert anchor.dtype == shape.dtype == np.int32
        np.testing.assert_array_equal(a, b)


def test_window_lies_inside_the_shape() -> None:
    shapes = [np.array([100, 200], np.int64), np.array([7, 9], np.int64)]
    (anchors, layout), (extents, _) = build(lambda: tuple(fn.random_crop_generator(feed(shapes))))
    assert layout == ""
    for anchor, extent, image in zip(anchors, extents, shapes, strict=True):
        assert np.all(extent > 0) and np.all(anchor >= 0) and np.all(anchor + extent <= image)


@pytest.mark.parametrize("pair", [([0, 0], [1, -1]), ([-1, 5, 3], [4, 0, 3])])
def test_a_shape_without_area_gives_an_empty_window_as_dali(pair: Any) -> None:
    shapes = [np.array(s, np.int64) for s in pair]
    (anchors, _), (extents, _) = build(lambda: tuple(fn.random_crop_generator(feed(shapes))))
    assert [a.tolist() for a in anchors] == [[0, 0]] * 2
    assert [e.tolist() for e in extents] == [[0, 0]] * 2


@pytest.mark.parametrize(
    ("samples", "kwargs", "message"),
    [
        ([np.array([10.0, 20.0], np.float32)] * 2, {}, "Only integer types are supported"),
        ([np.array([10], np.int32)] * 2, {}, "2 or 3 values"),
        ([np.array([10, 10], np.int32)] * 2, {"random_area": [0.0, 1.0]}, "random_area"),
        ([np.array([10, 10], np.int32)] * 2, {"num_attempts": 0}, "num_attempts"),
    ],
)
def test_errors(samples: Any, kwargs: Any, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        build(lambda: tuple(fn.random_crop_generator(feed(samples), **kwargs)))


def test_check_operator() -> None:
    example = OperatorExample([[np.array([64, 48 + i, 3], np.int32) for i in range(3)]])
    assert "threads" in check_operator("random_crop_generator", example)
