"""``tensor_resize`` (and its older spelling ``experimental.tensor_resize``): sizes, regions,
axes, rounding, the shared resampler, errors and determinism."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.tensor_resize import adjust_output_size, tensor_resize_plan
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.families import use_families

_DEFAULTS: dict[str, Any] = {
    "sizes": None,
    "scales": None,
    "size_rounding": "round",
    "alignment": (0.5,),
    "axes": None,
    "axis_names": None,
    "mode": "default",
    "max_size": None,
    "roi_start": None,
    "roi_end": None,
    "roi_relative": False,
    "subpixel_scale": True,
}


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "image", "manipulation")


def _resize(
    data: np.ndarray, name: str = "tensor_resize", layout: str | None = None, **kwargs: Any
) -> np.ndarray:
    """One sample through ``fn.<name>`` in a one-iteration pipeline."""
    op = fn.experimental.tensor_resize if name.startswith("experimental") else fn.tensor_resize

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        return op(types.Constant(data, layout=layout), **kwargs)

    built = pipe()
    built.build()
    return np.array(built.run()[0].at(0))


def _plan(shape: tuple[int, ...], layout: str = "", **kwargs: Any) -> Any:
    return tensor_resize_plan(shape, layout, {**_DEFAULTS, **kwargs})


# Output shapes DALI 2.4 produced.
@pytest.mark.parametrize(
    ("shape", "args", "expected"),
    [
        ((5,), {"scales": (0.7,)}, (4,)),
        ((5,), {"scales": (0.7,), "size_rounding": "truncate"}, (3,)),
        ((5,), {"scales": (0.7,), "size_rounding": "ceil"}, (4,)),
        ((1, 1, 2, 2), {"scales": (1.0, 1.0, 2.0, 3.0)}, (1, 1, 4, 6)),
        ((4, 5), {"sizes": (0.0, 10.0)}, (8, 10)),
        ((4,), {"scales": (2.5,)}, (10,)),
        ((0, 4), {"scales": (2.0,)}, (0, 8)),
        ((2, 3, 4, 2), {"sizes": (6.0, 2.0), "axes": (1, 2)}, (2, 6, 2, 2)),
        ((2, 3, 4, 2), {"sizes": (6.0,), "axes": (-3,)}, (2, 6, 4, 2)),
        ((6, 8), {"sizes": (3.0, 3.0), "mode": "not_larger"}, (2, 3)),
        ((6, 8), {"sizes": (3.0, 3.0), "mode": "not_smaller"}, (3, 4)),
        ((6, 8), {"scales": (2.0,), "max_size": (10.0,)}, (10, 10)),
    ],
)
def test_output_shapes_match_dali(
    shape: tuple[int, ...], args: dict[str, Any], expected: tuple[int, ...]
) -> None:
    assert _plan(shape, **args).out_shape == expected


def test_only_changed_axes_are_resampled() -> None:
    plan = _plan((2, 3, 4, 2), sizes=(6.0, 2.0), axes=(1, 2))
    assert plan.axes == (1, 2)
    assert _plan((1, 1, 2, 2), scales=(1.0, 1.0, 1.0, 3.0)).axes == (2, 3)  # two kept
    assert _plan((7,), scales=(2.0,)).axes == (0,)


def test_alignment_keeps_its_point_of_the_region() -> None:
    data = np.array([1, 2, 3, 4, 5], np.float32)
    kwargs = {"sizes": [2.5], "antialias": False}
    assert _resize(data, alignment=1.0, **kwargs).tolist() == [0.0 + 1.0, 2.5, 4.5]
    start = _resize(data, alignment=0.0, **kwargs)
    assert start[0] == pytest.approx(1.5)
    np.testing.assert_allclose(_plan((5,), sizes=(2.5,), alignment=(0.0,)).source, [(0.0, 6.0)])


def test_reversed_region_mirrors() -> None:
    data = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(_resize(data, sizes=[6], roi_start=[6], roi_end=[0]), data[::-1])


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 9), st.integers(2, 24))
def test_linear_upscaling_is_interpolation_between_centres(length: int, out: int) -> None:
    data = np.random.default_rng(length).random(length).astype(np.float32) * 100
    if out < length:
        return
    got = _resize(data, sizes=[out], antialias=False)
    centres = (np.arange(out) + 0.5) * (length / out) - 0.5
    np.testing.assert_allclose(got, np.interp(centres, np.arange(length), data), atol=1e-3)


@settings(max_examples=10, deadline=None)
@given(st.integers(3, 20), st.integers(3, 20), st.integers(1, 30), st.integers(1, 30))
def test_same_pixels_as_resize(height: int, width: int, out_h: int, out_w: int) -> None:
    image = np.random.default_rng(height * 31 + width).integers(0, 256, (height, width, 3))
    image = image.astype(np.uint8)
    got = _resize(image, layout="HWC", sizes=[out_h, out_w], axis_names="HW")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        return fn.resize(types.Constant(image, layout="HWC"), size=[out_h, out_w])

    built = pipe()
    built.build()
    np.testing.assert_array_equal(got, np.array(built.run()[0].at(0)))


def test_leading_axes_are_batches_of_planes() -> None:
    volume = np.random.default_rng(1).random((3, 5, 6)).astype(np.float32)
    got = _resize(volume, sizes=[9, 4], axes=[1, 2], interp_type=types.INTERP_CUBIC)
    for plane, resized in zip(volume, got, strict=True):
        np.testing.assert_allclose(
            _resize(plane, sizes=[9, 4], interp_type=types.INTERP_CUBIC), resized, atol=1e-5
        )


def test_output_type() -> None:
    data = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert _resize(data, scales=[2.0]).dtype == np.uint8
    assert _resize(data, scales=[2.0], dtype=types.FLOAT).dtype == np.float32


def test_older_spelling_is_the_same_operator() -> None:
    data = np.random.default_rng(2).random((4, 6)).astype(np.float32)
    np.testing.assert_array_equal(
        _resize(data, "experimental.tensor_resize", scales=[0.6, 1.7]),
        _resize(data, scales=[0.6, 1.7]),
    )


def test_per_sample_sizes_and_same_result_for_any_thread_count() -> None:
    samples = [np.random.default_rng(i).random((5, 7)).astype(np.float32) for i in range(4)]
    sizes = [np.float32([3 + i, 9 - i]) for i in range(4)]

    def run(threads: int) -> list[np.ndarray]:
        @pipeline_def(batch_size=4, num_threads=threads, device_id=None)
        def pipe() -> Any:
            data = fn.external_source(lambda: samples, batch=True)
            return fn.tensor_resize(data, sizes=fn.external_source(lambda: sizes, batch=True))

        built = pipe()
        built.build()
        out = built.run()[0]
        return [np.array(out.at(i)) for i in range(4)]

    one, four = run(1), run(4)
    assert [o.shape for o in one] == [(3 + i, 9 - i) for i in range(4)]
    for a, b in zip(one, four, strict=True):
        np.testing.assert_array_equal(a, b)


def test_adjust_output_size_modes() -> None:
    assert adjust_output_size([0.0, 0.0], [4.0, 5.0], "default", None) == [4.0, 5.0]
    assert adjust_output_size([8.0, 0.0], [4.0, 5.0], "stretch", None) == [8.0, 5.0]
    assert adjust_output_size([8.0, 0.0], [4.0, 5.0], "default", None) == [8.0, 10.0]
    assert adjust_output_size([8.0, 20.0], [4.0, 5.0], "not_larger", None) == [8.0, 10.0]


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        (np.zeros((4, 4), np.float32), {}, "Need one of ``scales`` or ``sizes``"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "scales": [2]}, "but not both"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "roi_start": [1]}, "specified together"),
        (
            np.zeros((4, 4), np.float32),
            {"sizes": [2], "axes": [0], "axis_names": "H"},
            "mutually exclusive",
        ),
        (
            np.zeros((4, 4), np.float32),
            {"scales": [2], "mode": "not_smaller"},
            "incompatible with not-smaller",
        ),
        (np.zeros((4, 4), np.float32), {"sizes": [2, 2, 3]}, "a list of 2 elements. 3 given"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "axes": [2]}, r"not in range \[-2,1\]"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "axis_names": "C"}, "Axis 'C' is not"),
        (np.zeros((4, 4), np.int32), {"sizes": [2]}, "Unsupported type: int32"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "dtype": types.UINT8}, "'dtype'"),
        (np.zeros((4,) * 4, np.float32), {"scales": [2]}, "more than 3 consecutive"),
        (np.zeros((), np.float32), {"scales": [2]}, "at least 1D"),
        (np.zeros((4, 4), np.float32), {"sizes": [2], "size_rounding": "floor"}, "one of"),
    ],
)
def test_errors(data: np.ndarray, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((RuntimeError, ValueError, TypeError), match=message):
        _resize(data, **kwargs)


def test_check_operator() -> None:
    samples = [np.random.default_rng(i).random((2, 5, 6)).astype(np.float32) for i in range(3)]
    example = OperatorExample([samples], args={"sizes": [8, 3], "axes": [1, 2]})
    assert "threads" in check_operator("tensor_resize", example)
    assert "threads" in check_operator("experimental.tensor_resize", example)
