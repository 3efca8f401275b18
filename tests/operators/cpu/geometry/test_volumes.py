"""Volumetric warps and DALI's 3-D rotation (``geometry.volumes``) against direct definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.plugins import PluginSystem
from feedline.core.types import InterpType
from feedline.operators.cpu.geometry import volumes
from tests.operators.cpu.image_samples import run_op, use_transforms

RNG = np.random.default_rng(17)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 1e-3),
    st.floats(-360, 360),
)
def test_rotation_is_orthonormal_keeps_its_axis_and_turns_right_handed(axis, degrees) -> None:
    rotation = volumes.rotation_3d(axis, degrees)
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-9)
    assert np.linalg.det(rotation) == pytest.approx(1.0)
    unit = np.asarray(axis) / np.linalg.norm(axis)
    np.testing.assert_allclose(rotation @ unit, unit, atol=1e-9)
    # the angle between a vector perpendicular to the axis and its image is |degrees|, and the
    # cross product points along the axis for positive angles
    perpendicular = np.cross(unit, [1.0, 0.0, 0.0] if abs(unit[0]) < 0.9 else [0.0, 1.0, 0.0])
    perpendicular /= np.linalg.norm(perpendicular)
    turned = rotation @ perpendicular
    radians = math.radians(degrees)
    assert perpendicular @ turned == pytest.approx(math.cos(radians), abs=1e-9)
    assert np.cross(perpendicular, turned) @ unit == pytest.approx(math.sin(radians), abs=1e-9)


def test_quarter_turn_about_z_maps_x_to_y() -> None:
    np.testing.assert_allclose(
        volumes.rotation_3d([0, 0, 5], 90) @ [1, 0, 0], [0, 1, 0], atol=1e-12
    )


@pytest.mark.parametrize(
    ("shape", "axis", "degrees", "expected"),
    [
        ((10, 20, 30), (0, 0, 1), 90, (10, 30, 20)),  # about z: H and W swap
        ((10, 20, 30), (1, 0, 0), 90, (20, 10, 30)),  # about x: D and H swap
        ((10, 20, 30), (0, 1, 0), 180, (10, 20, 30)),
        # 45 degrees about z: both in-plane extents are ceil((20 + 30) / sqrt 2) = 36, kept even
        # like the input extent that dominates each (x: W = 30, y: H = 20)
        ((10, 20, 30), (0, 0, 1), 45, (10, 36, 36)),
        ((11, 21, 31), (0, 0, 1), 45, (11, 37, 37)),
    ],
)
def test_canvas_sizes(shape, axis, degrees, expected) -> None:
    assert volumes.rotated_volume_size(shape, axis, degrees) == expected


def test_canvas_without_parity_is_the_rounded_up_bounding_box() -> None:
    assert volumes.rotated_volume_size((11, 21, 31), (0, 0, 1), 45, parity=False) == (11, 37, 37)
    assert volumes.rotated_volume_size((10, 20, 30), (0, 0, 1), 45, parity=False) == (10, 36, 36)
    assert volumes.rotated_volume_size((10, 20, 31), (0, 0, 1), 0, parity=False) == (10, 20, 31)


def reference_warp(volume, matrix, out_shape, fill):
    """Trilinear sampling written voxel by voxel (fill outside, or clamp without fill)."""
    depth, height, width, channels = volume.shape
    out = np.zeros((*out_shape, channels))

    def tap(z, y, x):
        inside = 0 <= z < depth and 0 <= y < height and 0 <= x < width
        if fill is not None and not inside:
            return np.full(channels, fill, float)
        return volume[
            min(max(z, 0), depth - 1), min(max(y, 0), height - 1), min(max(x, 0), width - 1)
        ]

    for z in range(out_shape[0]):
        for y in range(out_shape[1]):
            for x in range(out_shape[2]):
                sx, sy, sz = matrix @ [x + 0.5, y + 0.5, z + 0.5, 1.0]
                fx, fy, fz = sx - 0.5, sy - 0.5, sz - 0.5
                if fill is None:
                    fx, fy, fz = (
                        np.clip(fx, 0, width - 1),
                        np.clip(fy, 0, height - 1),
                        np.clip(fz, 0, depth - 1),
                    )
                x0, y0, z0 = math.floor(fx), math.floor(fy), math.floor(fz)
                ax, ay, az = fx - x0, fy - y0, fz - z0
                value = np.zeros(channels)
                for dz, wz in ((0, 1 - az), (1, az)):
                    for dy, wy in ((0, 1 - ay), (1, ay)):
                        for dx, wx in ((0, 1 - ax), (1, ax)):
                            value += wz * wy * wx * tap(z0 + dz, y0 + dy, x0 + dx)
                out[z, y, x] = value
    return out


@pytest.mark.parametrize("fill", [None, 7.0])
def test_linear_warp_matches_a_voxel_by_voxel_reference(fill) -> None:
    volume = RNG.uniform(0, 100, (5, 6, 7, 2)).astype(np.float32)
    matrix = np.hstack([volumes.rotation_3d([1, 2, 3], 33), [[0.4], [-0.7], [0.9]]])
    got = volumes.warp_volume(volume, matrix, (6, 5, 8), InterpType.INTERP_LINEAR, fill, np.float32)
    np.testing.assert_allclose(got, reference_warp(volume, matrix, (6, 5, 8), fill), atol=1e-3)


def test_nearest_warp_picks_the_voxel_containing_the_point() -> None:
    volume = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6, 1)
    shift = np.array([[1, 0, 0, 1.7], [0, 1, 0, -0.2], [0, 0, 1, 0.6]])
    got = volumes.warp_volume(volume, shift, (4, 5, 6), InterpType.INTERP_NN, None, np.int32)
    z, y, x = np.meshgrid(np.arange(4), np.arange(5), np.arange(6), indexing="ij")
    src = (
        np.clip(np.floor(z + 0.5 + 0.6), 0, 3).astype(int),
        np.clip(np.floor(y + 0.5 - 0.2), 0, 4).astype(int),
        np.clip(np.floor(x + 0.5 + 1.7), 0, 5).astype(int),
    )
    np.testing.assert_array_equal(got[..., 0], volume[..., 0][src])


def test_rotation_by_zero_is_the_identity_and_integers_round() -> None:
    volume = RNG.integers(0, 255, (4, 6, 5, 3), dtype=np.uint8)
    matrix = volumes.rotate_volume_matrix([0, 1, 0], 0.0, volume.shape[:3], volume.shape[:3])
    for interp in (InterpType.INTERP_NN, InterpType.INTERP_LINEAR):
        got = volumes.warp_volume(volume, matrix, volume.shape[:3], interp, None, np.uint8)
        np.testing.assert_array_equal(got, volume)


def test_warp_affine_of_volumes_and_volume_sequences(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)
    volume = RNG.uniform(0, 50, (4, 5, 6, 2)).astype(np.float32)
    forward = np.hstack([volumes.rotation_3d([0, 1, 0], 20), [[1.0], [0.5], [-0.5]]])
    inverse = np.linalg.inv(np.vstack([forward, [0, 0, 0, 1]]))[:3]
    (got,), layout = run_op(
        "warp_affine", [volume], "DHWC", matrix=inverse.ravel().tolist(), size=[5, 6, 7]
    )
    assert layout == "DHWC"
    want = volumes.warp_volume(
        volume, inverse, (5, 6, 7), InterpType.INTERP_LINEAR, None, np.float32
    )
    np.testing.assert_allclose(got, want, atol=1e-5)
    (mapped,), _ = run_op(
        "warp_affine",
        [volume],
        "DHWC",
        matrix=forward.ravel().tolist(),
        inverse_map=False,
        size=[5, 6, 7],
    )
    np.testing.assert_allclose(mapped, want, atol=1e-4)
    (sequence,), _ = run_op(
        "warp_affine", [np.stack([volume, volume[::-1]])], "FDHWC", matrix=inverse.ravel().tolist()
    )
    assert sequence.shape == (2, 4, 5, 6, 2)
    np.testing.assert_allclose(
        sequence[1],
        volumes.warp_volume(
            volume[::-1], inverse, (4, 5, 6), InterpType.INTERP_LINEAR, None, np.float32
        ),
        atol=1e-5,
    )
