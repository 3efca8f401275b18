"""``decoders.image_crop``'s volume arguments on 2-D images: accepted without effect, checked
as DALI checks them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_ops_testing import encode, use_image_plugins
from tests.operators.cpu.image_samples import PerSample, run_op

IMAGE = (np.arange(20 * 30 * 3) % 251).astype(np.uint8).reshape(20, 30, 3)
DATA = [encode(IMAGE, "PNG")]


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


def crop(**kwargs) -> np.ndarray:
    (out,), _ = run_op("decoders.image_crop", DATA, None, **kwargs)
    return out


@settings(max_examples=15, deadline=None)
@given(
    depth=st.floats(-5, 50, allow_nan=False),
    pos_z=st.floats(-3, 3, allow_nan=False),
)
def test_depth_arguments_leave_the_window_unchanged(depth: float, pos_z: float) -> None:
    expected = crop(crop_h=6, crop_w=10, crop_pos_x=0.2)
    got = crop(crop_h=6, crop_w=10, crop_pos_x=0.2, crop_d=depth, crop_pos_z=pos_z)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, IMAGE[7:13, 4:14])


def test_per_sample_depth_position_is_accepted() -> None:
    got = crop(crop=(6, 10), crop_pos_z=PerSample([0.9]))
    np.testing.assert_array_equal(got, IMAGE[7:13, 10:20])


def test_three_value_crop_keeps_height_and_width() -> None:
    np.testing.assert_array_equal(crop(crop=(2, 6, 10)), crop(crop=(6, 10)))


def test_crop_of_four_values_is_refused() -> None:
    with pytest.raises(OperatorError, match="should have 2 or 3 elements"):
        crop(crop=(1, 2, 6, 10))


@pytest.mark.parametrize(
    "kwargs", [{"crop_d": 2}, {"crop": (6, 10), "crop_d": 2}, {"crop_h": 6, "crop_d": 2}]
)
def test_depth_needs_height_and_width(kwargs: dict) -> None:
    with pytest.raises(RuntimeError, match="`crop_d` argument must be provided together") as raised:
        crop(**kwargs)
    assert isinstance(raised.value, ValueError)


def test_depth_check_survives_a_following_resize() -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph():
        data = fn.external_source(source=lambda: DATA, batch=True)
        return fn.resize(fn.decoders.image_crop(data, crop_d=2), size=(4, 4))

    pipe = graph()
    with pytest.raises(ValueError, match="`crop_d` argument must be provided together"):
        pipe.build()
        pipe.run()


def test_other_window_decoders_do_not_take_depth() -> None:
    with pytest.raises(TypeError, match="unexpected argument 'crop_d'"):
        run_op("decoders.image_random_crop", DATA, None, crop_d=2)
