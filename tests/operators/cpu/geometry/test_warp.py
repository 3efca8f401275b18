"""``rotate`` and ``warp_affine``: DALI conventions against Pillow and a per-pixel loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import OperatorError, fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.core.types import InterpType
from feedline.operators.cpu.geometry import warp
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import (
    PerSample,
    generated_image,
    real_images,
    run_op,
    use_transforms,
)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


@pytest.fixture(params=["numpy", "opencv"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the NumPy path and, when cv2 is installed, with the OpenCV path."""
    if request.param == "numpy":
        monkeypatch.setattr(warp, "_cv2", None)
    elif warp._cv2 is None:
        pytest.skip("OpenCV (cv2) is not installed")
    return request.param


def pixel_reference(
    image: np.ndarray,
    matrix: np.ndarray,
    out_size: tuple[int, int],
    nearest: bool,
    fill: float | None,
) -> np.ndarray:
    """DALI's documented warp, one output pixel at a time (float64, HWC)."""
    h, w, c = image.shape
    out = np.zeros((*out_size, c))

    def tap(y: int, x: int) -> np.ndarray:
        if 0 <= y < h and 0 <= x < w:
            return image[y, x].astype(np.float64)
        if fill is not None:
            return np.full(c, fill)
        return image[min(max(y, 0), h - 1), min(max(x, 0), w - 1)].astype(np.float64)

    for oy in range(out_size[0]):
        for ox in range(out_size[1]):
            sx = matrix[0, 0] * (ox + 0.5) + matrix[0, 1] * (oy + 0.5) + matrix[0, 2]
            sy = matrix[1, 0] * (ox + 0.5) + matrix[1, 1] * (oy + 0.5) + matrix[1, 2]
            if nearest:
                out[oy, ox] = tap(math.floor(sy), math.floor(sx))
                continue
            fx, fy = sx - 0.5, sy - 0.5
            x0, y0 = math.floor(fx), math.floor(fy)
            ax, ay = fx - x0, fy - y0
            top = tap(y0, x0) * (1 - ax) + tap(y0, x0 + 1) * ax
            bottom = tap(y0 + 1, x0) * (1 - ax) + tap(y0 + 1, x0 + 1) * ax
            out[oy, ox] = top * (1 - ay) + bottom * ay
    return out


def rotation_reference_matrix(angle: float, in_size: tuple[int, int], out_size: tuple[int, int]):
    """Destination→source matrix: translate out centre to origin, rotate back, move to input."""
    a = math.radians(angle)
    to_origin = np.array([[1, 0, -out_size[1] / 2], [0, 1, -out_size[0] / 2], [0, 0, 1]])
    # on screen (y down) a counter-clockwise rotation of the content by `a` is undone by
    # rotating the destination point by -a in screen coordinates
    undo = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
    to_input = np.array([[1, 0, in_size[1] / 2], [0, 1, in_size[0] / 2], [0, 0, 1]])
    return (to_input @ undo @ to_origin)[:2]


def corner_canvas(height: int, width: int, angle: float) -> tuple[int, int]:
    """Canvas from the rotated corners, rounded up and parity-matched (DALI's rule)."""
    a = np.float32(angle) * np.float32(math.pi / 180)
    c, s = float(np.cos(a)), float(np.sin(a))
    corners = np.array([[0, 0], [width, 0], [0, height], [width, height]], dtype=np.float64)
    rotated = corners @ np.array([[c, -s], [s, c]])
    extent_w, extent_h = rotated.max(axis=0) - rotated.min(axis=0)
    size = [math.ceil(extent_h - 0.01), math.ceil(extent_w - 0.01)]
    aligned = (height, width) if abs(c) > abs(s) else (width, height)
    return tuple(v + (v - ref) % 2 for v, ref in zip(size, aligned, strict=True))


# (height, width, angle) -> output (height, width), observed with NVIDIA DALI 2.4 (CPU)
DALI_CANVAS = {
    (4, 5, 30.0): (6, 7),
    (16, 34, 0.5): (18, 36),
    (17, 22, 90.0): (22, 17),
    (26, 19, 45.0): (33, 32),
    (37, 38, 45.0): (54, 55),
    (4, 30, 89.9): (30, 6),
    (3, 1, 60.0): (3, 5),
    (34, 25, -184.17062): (36, 29),
    (4, 30, 89.98): (30, 6),
    (4, 30, 89.85): (32, 6),
    (10, 10, 0.05): (10, 10),
    (10, 10, 0.06): (12, 12),
}


@pytest.mark.parametrize(("key", "expected"), DALI_CANVAS.items())
def test_canvas_size_matches_dali(key: tuple[int, int, float], expected: tuple[int, int]) -> None:
    assert warp.rotated_size(*key) == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.floats(-720, 720, allow_nan=False))
def test_canvas_size_matches_corner_rule(height: int, width: int, angle: float) -> None:
    assert warp.rotated_size(height, width, angle) == corner_canvas(height, width, angle)


def test_rotation_matrix_matches_composed_reference() -> None:
    for angle in (0.0, 30.0, -123.4, 270.0):
        got = warp.rotate_matrix(angle, (20, 30), (25, 35))
        np.testing.assert_allclose(got, rotation_reference_matrix(angle, (20, 30), (25, 35)))


def test_rotation_direction_is_counter_clockwise_on_screen() -> None:
    image = np.zeros((9, 9, 1), np.uint8)
    image[4, 8] = 255  # a dot right of the centre
    (out,), _ = run_op("rotate", [image], angle=90.0, interp_type=types.INTERP_NN)
    assert out.shape == (9, 9, 1)
    assert out[0, 4, 0] == 255  # it moved to the top


def _not_on_ties(matrix: np.ndarray, out_size: tuple[int, int]) -> np.ndarray:
    """Pixels whose source point is not within 0.01 px of a pixel edge (Pillow: fixed point)."""
    ys, xs = np.mgrid[0 : out_size[0], 0 : out_size[1]] + 0.5
    sx = matrix[0, 0] * xs + matrix[0, 1] * ys + matrix[0, 2]
    sy = matrix[1, 0] * xs + matrix[1, 1] * ys + matrix[1, 2]
    far = lambda v: np.abs(v - np.round(v)) > 1e-2  # noqa: E731
    return far(sx) & far(sy)


def _interior(matrix: np.ndarray, out_size: tuple[int, int], in_size: tuple[int, int]):
    ys, xs = np.mgrid[0 : out_size[0], 0 : out_size[1]] + 0.5
    sx = matrix[0, 0] * xs + matrix[0, 1] * ys + matrix[0, 2] - 0.5
    sy = matrix[1, 0] * xs + matrix[1, 1] * ys + matrix[1, 2] - 0.5
    return (sx >= 0) & (sx <= in_size[1] - 1) & (sy >= 0) & (sy <= in_size[0] - 1)


def _pillow_rotate(image: np.ndarray, matrix: np.ndarray, out_size, resample) -> np.ndarray:
    pil = Image.fromarray(image).transform(
        (out_size[1], out_size[0]),
        Image.Transform.AFFINE,
        data=tuple(matrix.ravel()),
        resample=resample,
        fillcolor=(0, 0, 0),
    )
    return np.asarray(pil)


@pytest.mark.parametrize("folder", ["file_tree", "coco_dali_dummy"])
def test_real_images_match_pillow(folder: str, backend: str) -> None:
    images = real_images(folder, 2, max_side=120)
    angles = [23.0, -131.5]
    nearest, _ = run_op(
        "rotate", images, angle=PerSample(angles), interp_type=types.INTERP_NN, fill_value=0.0
    )
    linear, _ = run_op("rotate", images, angle=PerSample(angles), fill_value=0.0)
    for image, angle, nn, lin in zip(images, angles, nearest, linear, strict=True):
        in_size = image.shape[:2]
        out_size = corner_canvas(*in_size, angle)
        assert nn.shape == lin.shape == (*out_size, 3)
        matrix = rotation_reference_matrix(angle, in_size, out_size)
        ref = _pillow_rotate(image, matrix, out_size, Image.Resampling.NEAREST)
        keep = _not_on_ties(matrix, out_size)
        np.testing.assert_array_equal(nn[keep], ref[keep])
        ref = _pillow_rotate(image, matrix, out_size, Image.Resampling.BILINEAR)
        inside = _interior(matrix, out_size, in_size)
        diff = np.abs(lin[inside].astype(int) - ref[inside])
        assert diff.max() <= 1  # stated tolerance: one level (rounding of the blend)
        assert diff.mean() < 0.55  # Pillow's fixed-point blend rounds about every other pixel apart


@pytest.mark.parametrize("nearest", [False, True])
@pytest.mark.parametrize("fill", [None, 17.0])
def test_border_handling_matches_pixel_loop(nearest: bool, fill: float | None, backend: str):
    rng = np.random.default_rng(5)
    image = generated_image(rng, 9, 12)
    matrix = np.array([[0.8, 0.45, -3.2], [-0.35, 1.15, 2.6]])
    interp = InterpType.INTERP_NN if nearest else InterpType.INTERP_LINEAR
    got = warp.warp_affine(image, "HWC", matrix, (14, 11), interp, fill)
    expected = pixel_reference(image, matrix, (14, 11), nearest, fill)
    keep = _not_on_ties(matrix, (14, 11)) if nearest else np.ones((14, 11), bool)
    assert got.dtype == np.uint8
    assert np.abs(got[keep] - expected[keep]).max() <= (0 if nearest else 1.0)
    as_float = warp.warp_affine(image.astype(np.float32), "HWC", matrix, (14, 11), interp, fill)
    np.testing.assert_allclose(as_float[keep], expected[keep], atol=1e-3)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    fill=st.sampled_from([None, 0.0, -2.5]),
    nearest=st.booleans(),
)
def test_float_warps_match_pixel_loop(seed: int, fill: float | None, nearest: bool) -> None:
    rng = np.random.default_rng(seed)
    image = rng.normal(size=(int(rng.integers(1, 7)), int(rng.integers(1, 7)), 2))
    matrix = rng.normal(size=(2, 3)) * [[0.6, 0.6, 2.0], [0.6, 0.6, 2.0]] + [[1, 0, 0], [0, 1, 0]]
    out_size = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
    interp = InterpType.INTERP_NN if nearest else InterpType.INTERP_LINEAR
    got = warp.warp_affine(image.astype(np.float32), "HWC", matrix, out_size, interp, fill)
    expected = pixel_reference(image, matrix, out_size, nearest, fill)
    keep = _not_on_ties(matrix, out_size) if nearest else np.ones(out_size, bool)
    np.testing.assert_allclose(got[keep], expected[keep], atol=1e-4)


def test_identity_and_integer_shift_are_exact(backend: str) -> None:
    rng = np.random.default_rng(6)
    image = generated_image(rng, 10, 13)
    (same,), _ = run_op("warp_affine", [image], matrix=[1, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(same, image)
    (shifted,), _ = run_op("warp_affine", [image], matrix=[1, 0, 2, 0, 1, 1], fill_value=5.0)
    np.testing.assert_array_equal(shifted[:-1, :-2], image[1:, 2:])
    assert (shifted[-1] == 5).all() and (shifted[:, -2:] == 5).all()


def test_inverse_map_and_matrix_input_agree() -> None:
    rng = np.random.default_rng(7)
    images = [generated_image(rng, 11, 15).astype(np.float32) for _ in range(2)]
    forward = np.array([[1.1, 0.2, 1.5], [-0.1, 0.9, -2.0]])
    inverse = np.linalg.inv(np.vstack([forward, [0, 0, 1]]))[:2]
    by_inverse, _ = run_op(
        "warp_affine", images, matrix=forward.ravel().tolist(), inverse_map=False
    )
    by_matrix, _ = run_op("warp_affine", images, matrix=inverse.ravel().tolist())
    mats = [inverse.astype(np.float32)] * 2
    by_input, _ = run_op("warp_affine", images, "HWC", mats)
    for a, b, c in zip(by_inverse, by_matrix, by_input, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-3)
        np.testing.assert_allclose(b, c, atol=1e-3)


def test_size_keep_size_and_dtype() -> None:
    rng = np.random.default_rng(8)
    image = generated_image(rng, 12, 16)
    (out,), _ = run_op("rotate", [image], angle=10.0, size=(20.4, 31.6))
    assert out.shape == (20, 32, 3)
    (out,), _ = run_op("rotate", [image], angle=10.0, keep_size=True, dtype=types.FLOAT)
    assert out.shape == (12, 16, 3) and out.dtype == np.float32
    (out,), _ = run_op(
        "warp_affine", [image.astype(np.int16)], matrix=[1, 0, 0, 0, 1, 0], size=(5, 6)
    )
    np.testing.assert_array_equal(out, image[:5, :6])


def test_layouts_agree_with_hwc() -> None:
    rng = np.random.default_rng(9)
    image = generated_image(rng, 10, 14)
    (hwc,), _ = run_op("rotate", [image], angle=33.0)
    (chw,), layout = run_op(
        "rotate", [np.ascontiguousarray(image.transpose(2, 0, 1))], layout="CHW", angle=33.0
    )
    assert layout == "CHW"
    np.testing.assert_array_equal(chw, hwc.transpose(2, 0, 1))
    (hw,), _ = run_op("rotate", [np.ascontiguousarray(image[..., 0])], layout="HW", angle=33.0)
    np.testing.assert_array_equal(hw, hwc[..., 0])
    frames = np.stack([image, image[::-1]])
    (seq,), _ = run_op("rotate", [frames], layout="FHWC", angle=33.0)
    (second,), _ = run_op("rotate", [np.ascontiguousarray(image[::-1])], angle=33.0)
    np.testing.assert_array_equal(seq[0], hwc)
    np.testing.assert_array_equal(seq[1], second)


def test_deprecated_output_dtype() -> None:
    image = np.zeros((4, 4, 3), np.uint8)
    with pytest.warns(DeprecationWarning, match="output_dtype"):
        (out,), _ = run_op("rotate", [image], angle=5.0, output_dtype=types.FLOAT)
    assert out.dtype == np.float32


@pytest.mark.parametrize(
    ("op", "sample", "layout", "kwargs", "message"),
    [
        (
            "rotate",
            np.zeros((4, 4, 3), np.uint8),
            "HWC",
            {"angle": 1.0, "interp_type": types.INTERP_CUBIC},
            "INTERP_CUBIC is not supported",
        ),
        (
            "rotate",
            np.zeros((4, 4, 3), np.uint8),
            "HWC",
            {"angle": 1.0, "axis": [0, 0, 1]},
            "'axis' applies only to 3-D",
        ),
        (
            "rotate",
            np.zeros((2, 4, 4, 3), np.uint8),
            "DHWC",
            {"angle": 1.0},
            "Argument `axis` is required for 3-D volumes",
        ),
        (
            "rotate",
            np.zeros((2, 4, 4, 3), np.uint8),
            "DHWC",
            {"angle": 1.0, "axis": [0, 0, 0]},
            "non-zero length",
        ),
        (
            "rotate",
            np.zeros((2, 4, 4, 3), np.uint8),
            "DHWC",
            {"angle": 1.0, "axis": [0, 0, 1], "size": [4, 4]},
            "3 elements",
        ),
        (
            "warp_affine",
            np.zeros((2, 4, 4, 3), np.uint8),
            "DHWC",
            {"matrix": [1, 0, 0, 0, 1, 0]},
            r"12 elements \(3x4\)",
        ),
        ("rotate", np.zeros((4, 4, 3), np.float64), "HWC", {"angle": 1.0}, "float64"),
        ("rotate", np.zeros((0, 4, 3), np.uint8), "HWC", {"angle": 1.0}, "empty image"),
        ("rotate", np.zeros((4, 4, 3), np.uint8), "HWC", {"angle": 1.0, "size": [3]}, "2 elements"),
        (
            "warp_affine",
            np.zeros((4, 4, 3), np.uint8),
            "HWC",
            {"matrix": [1, 0, 0, 1]},
            "6 elements",
        ),
        ("warp_affine", np.zeros((4, 4, 3), np.uint8), "HWC", {}, "'matrix'"),
        (
            "warp_affine",
            np.zeros((4, 4, 3), np.uint8),
            "HWC",
            {"matrix": [1, 2, 0, 2, 4, 0], "inverse_map": False},
            "not invertible",
        ),
        (
            "warp_affine",
            np.zeros((4, 4, 3), np.uint8),
            "WHC",
            {"matrix": [1, 0, 0, 0, 1, 0]},
            'The layout "WHC" does not match any of the allowed layouts',
        ),
    ],
)
def test_bad_inputs(op: str, sample: np.ndarray, layout: str, kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op(op, [sample], layout, **kwargs)


def _warp_with_per_frame_matrices(data, layout, matrices, **kwargs):
    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        images = fn.external_source(source=lambda: data, batch=True, layout=layout)
        per_frame = fn.per_frame(fn.external_source(source=lambda: matrices, batch=True))
        return fn.warp_affine(images, matrix=per_frame, **kwargs)

    built = pipe()
    built.build()
    (out,) = built.run()
    return [out.at(i) for i in range(len(data))]


@pytest.mark.parametrize(
    ("layout", "shape", "rows"), [("FHWC", (3, 12, 15, 2), 2), ("FDHWC", (3, 4, 6, 5, 1), 3)]
)
def test_per_frame_matrices_warp_each_frame_with_its_own(
    empty_plugin_system: PluginSystem, layout: str, shape: tuple, rows: int
) -> None:
    use_families(empty_plugin_system, "manipulation")
    rng = np.random.default_rng(3)
    sequence = rng.uniform(0, 100, shape).astype(np.float32)
    identity = np.eye(rows, rows + 1)
    matrices = np.stack([identity + rng.uniform(-0.2, 0.2, identity.shape) for _ in range(3)])
    flat = [matrices.reshape(3, -1).astype(np.float32)]
    size = [7, 9] if rows == 2 else [3, 5, 4]
    (got,) = _warp_with_per_frame_matrices([sequence], layout, flat, size=size, fill_value=0)
    assert got.shape == (3, *size, shape[-1])
    for frame in range(3):
        (expected,), _ = run_op(
            "warp_affine",
            [sequence[frame]],
            layout[1:],
            matrix=flat[0][frame].tolist(),
            size=size,
            fill_value=0,
        )
        np.testing.assert_allclose(got[frame], expected, atol=1e-4)
