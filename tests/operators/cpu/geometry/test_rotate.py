"""``rotate`` of volumes and sequences: 3-D rotations, per-frame angles and axes, and the canvas
the frames of a sequence share."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry import rotate, volumes
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import PerSample, run_op, use_transforms

RNG = np.random.default_rng(23)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)
    use_families(empty_plugin_system, "manipulation")


def test_sequence_canvas_takes_the_largest_extent_and_the_majority_parity() -> None:
    plain = {0: (10, 21), 1: (12, 20), 2: (11, 19)}
    corrected = {0: (11, 21), 1: (13, 20), 2: (11, 20)}  # odd, even: 3 and 1 of 3 frames

    def sizes(frame: int, parity: bool) -> tuple[int, int]:
        return (corrected if parity else plain)[frame]

    assert rotate.sequence_canvas(sizes, 3) == (13, 22)
    assert rotate.sequence_canvas(lambda f, p: sizes(1, p), 1) == (13, 20)


def test_volume_about_z_turns_each_slice_like_a_2d_rotation_the_other_way() -> None:
    # 2-D angles turn counter-clockwise on screen (y down); a 3-D rotation about +z is
    # right-handed in (x, y, z), which on screen is the opposite direction
    volume = RNG.uniform(0, 255, (3, 17, 24, 2)).astype(np.float32)
    (turned,), layout = run_op("rotate", [volume], "DHWC", angle=30.0, axis=[0, 0, 1])
    assert layout == "DHWC"
    slices, _ = run_op("rotate", list(volume), "HWC", angle=-30.0)
    assert turned.shape == (3, *slices[0].shape)
    for got, expected in zip(turned, slices, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-3)


def test_volume_size_keep_size_and_fill() -> None:
    volume = RNG.integers(0, 255, (6, 8, 10, 1), dtype=np.uint8)
    (sized,), _ = run_op(
        "rotate", [volume], "DHWC", angle=50.0, axis=[1, 1, 0], size=[5, 9, 7], fill_value=3
    )
    assert sized.shape == (5, 9, 7, 1)
    (far,), _ = run_op(
        "rotate", [volume], "DHWC", angle=0.0, axis=[1, 1, 0], size=[30, 9, 7], fill_value=3
    )
    assert np.all(far[:5] == 3) and np.all(far[-5:] == 3)  # slices beyond the input: fill
    (kept,), _ = run_op("rotate", [volume], "DHWC", angle=50.0, axis=[1, 1, 0], keep_size=True)
    assert kept.shape == volume.shape
    (inferred,), _ = run_op("rotate", [volume], "DHWC", angle=50.0, axis=[1, 1, 0])
    assert inferred.shape[:3] == volumes.rotated_volume_size((6, 8, 10), (1, 1, 0), 50.0)


def _constant(batch: list[np.ndarray]):
    return lambda: batch


def _rotate_with_per_frame_args(
    data: list[np.ndarray], layout: str, **per_frame: list[np.ndarray]
) -> list[np.ndarray]:
    @pipeline_def(batch_size=len(data), num_threads=2, device_id=None)
    def pipe():
        images = fn.external_source(source=lambda: data, batch=True, layout=layout)
        args = {
            name: fn.per_frame(fn.external_source(source=_constant(values), batch=True))
            for name, values in per_frame.items()
        }
        return fn.rotate(images, fill_value=0, **args)

    built = pipe()
    built.build()
    (out,) = built.run()
    return [out.at(i) for i in range(len(data))]


def test_per_frame_angles_and_axes_of_volume_sequences() -> None:
    sequence = RNG.uniform(0, 255, (3, 5, 9, 7, 1)).astype(np.float32)
    angles = [np.float32([10, -75, 140])]
    axes = [np.float32([[1, 0, 0], [0, 1, 1], [1, 2, 3]])]
    (out,) = _rotate_with_per_frame_args([sequence], "FDHWC", angle=angles, axis=axes)
    canvas = rotate.sequence_canvas(
        lambda f, parity: volumes.rotated_volume_size(
            (5, 9, 7), axes[0][f], float(angles[0][f]), parity
        ),
        3,
    )
    assert out.shape == (3, *canvas, 1)
    for frame in range(3):
        (expected,), _ = run_op(
            "rotate",
            [sequence[frame]],
            "DHWC",
            angle=float(angles[0][frame]),
            axis=axes[0][frame].tolist(),
            size=list(canvas),
            fill_value=0,
        )
        np.testing.assert_allclose(out[frame], expected, atol=1e-3)


def test_per_frame_angles_of_image_sequences_share_one_canvas() -> None:
    sequences = [RNG.integers(0, 255, (frames, 20, 31, 3), dtype=np.uint8) for frames in (4, 2)]
    angles = [np.float32([0, 30, 90, 200]), np.float32([15])]  # one value serves every frame
    out = _rotate_with_per_frame_args(sequences, "FHWC", angle=angles)
    for sequence, angle, got in zip(sequences, angles, out, strict=True):
        assert got.shape[0] == len(sequence)
        for frame in range(len(sequence)):
            value = float(angle[frame if len(angle) > 1 else 0])
            (expected,), _ = run_op(
                "rotate",
                [sequence[frame]],
                angle=value,
                size=list(got.shape[1:3]),
                fill_value=0,
            )
            np.testing.assert_array_equal(got[frame], expected)


def test_per_frame_values_must_match_the_frames() -> None:
    with pytest.raises(Exception, match="per-frame parameters, but there are 3 frames"):
        _rotate_with_per_frame_args(
            [np.zeros((3, 8, 8, 1), np.uint8)], "FHWC", angle=[np.float32([1, 2])]
        )


def test_per_sample_axes_as_argument_inputs() -> None:
    volume = RNG.uniform(0, 1, (4, 6, 8, 1)).astype(np.float32)
    out, _ = run_op(
        "rotate",
        [volume, volume],
        "DHWC",
        angle=90.0,
        axis=PerSample([np.float32([0, 0, 1]), np.float32([1, 0, 0])]),
        interp_type=types.INTERP_NN,
    )
    assert out[0].shape == (4, 8, 6, 1) and out[1].shape == (6, 4, 8, 1)
