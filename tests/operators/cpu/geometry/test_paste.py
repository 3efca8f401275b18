"""``paste`` against DALI-observed geometry and its argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry.paste import paste_geometry
from tests.operators.cpu.image_samples import PerSample, real_images, run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


# -------------------------------------------------------------------------------------- paste

# (h, w, ratio, paste_x, paste_y) -> (canvas_h, canvas_w, y0, x0), observed with DALI 2.4 CPU
DALI_PASTE = {
    (5, 7, 1.3, 1.0, 1.0): (6, 9, 1, 2),
    (5, 7, 1.3, 0.5, 0.5): (6, 9, 0, 1),
    (5, 7, 1.5, 0.3, 0.8): (7, 10, 1, 0),
    (5, 7, 2.7, 0.3, 0.8): (13, 18, 6, 3),
    (5, 7, 2.7, 0.5, 0.5): (13, 18, 4, 5),
    (4, 4, 1.3, 1.0, 1.0): (5, 5, 1, 1),
    (3, 10, 1.5, 0.5, 0.5): (4, 15, 0, 2),
    (3, 10, 2.7, 0.3, 0.8): (8, 27, 4, 5),
}


@pytest.mark.parametrize(("key", "expected"), DALI_PASTE.items())
def test_paste_geometry_matches_dali(key, expected) -> None:
    h, w, ratio, px, py = key
    assert paste_geometry(h, w, ratio, px, py, 0.0) == expected
    image = np.full((h, w, 3), 200, np.uint8)
    (out,), _ = run_op("paste", [image], ratio=ratio, paste_x=px, paste_y=py, fill_value=(1, 2, 3))
    canvas_h, canvas_w, y0, x0 = expected
    assert out.shape == (canvas_h, canvas_w, 3)
    ys, xs = np.nonzero(out[..., 0] == 200)
    assert (ys.min(), xs.min(), ys.max() - ys.min() + 1, xs.max() - xs.min() + 1) == (y0, x0, h, w)


def test_paste_real_images_and_min_canvas() -> None:
    images = real_images("coco_dali_dummy", 2)
    out, layout = run_op(
        "paste",
        images,
        ratio=PerSample([1.5, 2.0]),
        paste_x=0.0,
        paste_y=1.0,
        fill_value=(9, 8, 7),
        min_canvas_size=PerSample([0.0, 1000.0]),
    )
    assert layout == "HWC"
    first, second = out
    h, w = images[0].shape[:2]
    assert first.shape == (int(h * 1.5), int(w * 1.5), 3)
    np.testing.assert_array_equal(first[-h:, :w], images[0])
    mask = np.ones(first.shape[:2], bool)
    mask[-h:, :w] = False
    assert (first[mask] == [9, 8, 7]).all()
    assert second.shape == (1000, 1000, 3)


@pytest.mark.parametrize(
    ("sample", "kwargs", "message"),
    [
        (
            np.zeros((4, 4, 3), np.float32),
            {"ratio": 2.0},
            "requested type: uint8 current buffer type: float32",
        ),
        (np.zeros((4, 4, 3), np.int32), {"ratio": 2.0}, "current buffer type: int32"),
        (np.zeros((4, 4, 3), np.uint8), {"ratio": 0.5}, "ratio of less than 1 is not supported"),
        (
            np.zeros((4, 4, 3), np.uint8),
            {"ratio": 2.0, "min_canvas_size": -1.0},
            "min_canvas_size_ of less than 0 is not supported",
        ),
        (np.zeros((4, 4, 3), np.uint8), {"ratio": 2.0, "paste_x": 1.5}, r"in range \[0, 1\]"),
        (np.zeros((4, 4, 3), np.uint8), {"ratio": 2.0, "paste_y": -0.1}, "paste_y must be in"),
        (np.zeros((4, 4, 2), np.uint8), {"ratio": 2.0}, "'n_channels' = 3"),
    ],
)
def test_paste_errors(sample: np.ndarray, kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("paste", [sample], fill_value=(0,), **kwargs)


def test_paste_fill_value_checks() -> None:
    image = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(OperatorError, match="1 or 3 values"):
        run_op("paste", [image], ratio=2.0, fill_value=(1, 2))
    with pytest.raises(OperatorError, match=r"within \[0, 255\]"):
        run_op("paste", [image], ratio=2.0, fill_value=(300,))
    with pytest.raises(
        OperatorError, match='The layout "CHW" does not match any of the allowed layouts'
    ):
        run_op("paste", [image], "CHW", ratio=2.0, fill_value=(0,))


def test_paste_refuses_4d_data_without_layout_in_dalis_words() -> None:
    with pytest.raises(
        OperatorError,
        match="The number of dimensions 4 does not match any of the allowed layouts for input 0",
    ):
        run_op("paste", [np.zeros((5, 6, 7, 8), np.uint8)], None, ratio=2.0, fill_value=(0,))
