"""``cat`` and ``stack`` against NumPy's concatenate/stack and DALI's argument rules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError
from feedline.operators.cpu.arrays.join import resolve_stack_axis
from tests.operators.cpu.image_samples import run_op


def test_cat_joins_along_an_existing_axis_sample_by_sample() -> None:
    a = [np.zeros((2, 3), np.int32), np.ones((1, 4), np.int32)]
    b = [np.full((5, 3), 7, np.int32), np.full((2, 4), 8, np.int32)]
    out, layout = run_op("cat", a, "HW", b)
    assert layout == "HW"
    assert [o.shape for o in out] == [(7, 3), (3, 4)]
    np.testing.assert_array_equal(out[1], np.concatenate([a[1], b[1]]))
    out, _ = run_op("cat", a, "HW", a, axis_name="W")
    assert [o.shape for o in out] == [(2, 6), (1, 8)]
    out, _ = run_op("cat", a, "HW", a, a, axis=-1)
    assert out[0].shape == (2, 9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"axis": 2}, r"out of range \[-2, 1\]"),
        ({"axis": 0, "axis_name": "H"}, "mutually exclusive"),
        ({"axis_name": "C"}, "not a dimension"),
        ({"axis": 1}, "differ outside axis 1"),
    ],
)
def test_cat_errors(kwargs: dict, message: str) -> None:
    a = [np.zeros((2, 3), np.uint8)]
    b = [np.zeros((4, 3), np.uint8)]
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("cat", a, "HW", b, **kwargs)


def test_cat_and_stack_need_one_type() -> None:
    with pytest.raises((OperatorError, TypeError), match="same type"):
        run_op("cat", [np.zeros(2, np.uint8)], None, [np.zeros(2, np.int16)])
    with pytest.raises((OperatorError, TypeError), match="same type"):
        run_op("stack", [np.zeros(2, np.uint8)], None, [np.zeros(2, np.float32)])


@settings(max_examples=40)
@given(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), st.integers(1, 3), st.data())
def test_stack_matches_numpy_for_every_axis(shape: tuple, count: int, data: st.DataObject) -> None:
    ndim = len(shape)
    axis = data.draw(st.integers(-ndim, ndim))
    parts = [
        np.arange(np.prod(shape), dtype=np.int16).reshape(shape) + 10 * k for k in range(count)
    ]
    out, _ = run_op("stack", [parts[0]], None, *[[p] for p in parts[1:]], axis=axis)
    np.testing.assert_array_equal(out[0], np.stack(parts, axis=resolve_stack_axis(axis, ndim)))


def test_stack_axis_name_and_layout() -> None:
    planes = [np.zeros((2, 3), np.uint8)]
    out, layout = run_op("stack", planes, "HW", planes, planes, axis=0, axis_name="C")
    assert layout == "CHW" and out[0].shape == (3, 2, 3)
    out, layout = run_op("stack", planes, "HW", planes, axis=-1, axis_name="C")
    assert layout == "HWC" and out[0].shape == (2, 3, 2)  # -1 = last: interleaved
    out, layout = run_op("stack", planes, "HW", planes)
    assert layout == "" and out[0].shape == (2, 2, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"axis": 3}, r"out of range \[-2, 2\]"), ({"axis_name": "AB"}, "single character")],
)
def test_stack_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("stack", [np.zeros((2, 3), np.uint8)], "HW", [np.zeros((2, 3), np.uint8)], **kwargs)
    with pytest.raises((OperatorError, ValueError), match="must be equal"):
        run_op("stack", [np.zeros((2, 3), np.uint8)], "HW", [np.zeros((3, 2), np.uint8)])


def test_different_layouts_are_refused() -> None:
    from feedline import fn, pipeline_def

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():  # type: ignore[no-untyped-def]
        a = fn.external_source(source=lambda: [np.zeros((2, 2), np.uint8)], layout="HW")
        b = fn.external_source(source=lambda: [np.zeros((2, 2), np.uint8)], layout="WH")
        return fn.cat(a, b)

    p = pipe()
    with pytest.raises((OperatorError, ValueError), match="different layouts"):
        p.build()
        p.run()
