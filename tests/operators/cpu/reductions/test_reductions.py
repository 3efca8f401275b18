"""``reductions.*`` against their definitions, with DALI's types, layouts and errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, pipeline_def, types
from feedline.testing import OperatorExample, check_operator

INTEGERS = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64)
INPUTS = (*INTEGERS, np.float32)


def reduce(
    op: str,
    samples: Sequence[np.ndarray],
    layout: str | None = None,
    mean: Sequence[np.ndarray] | None = None,
    num_threads: int = 2,
    **kwargs: Any,
) -> tuple[list[np.ndarray], str]:
    """Run ``fn.reductions.<op>`` once on ``samples``; the output samples and layout."""
    batch = [np.asarray(s) for s in samples]

    @pipeline_def(batch_size=len(batch), num_threads=num_threads, device_id=None)
    def graph() -> Any:
        data = fn.external_source(source=lambda: batch, batch=True, layout=layout)
        reduction = getattr(fn.reductions, op)
        if mean is None:
            return reduction(data, **kwargs)
        means = fn.external_source(source=lambda: list(mean), batch=True)
        return reduction(data, means, **kwargs)

    pipe = graph()
    pipe.build()
    (out,) = pipe.run()
    return [np.array(out.at(i)) for i in range(len(out))], out.layout()


def axes_of(ndim: int, axes: Any) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim))
    axes = (axes,) if isinstance(axes, int) else axes
    return tuple(sorted(a % ndim for a in axes))


def expected(op: str, sample: np.ndarray, axes: tuple[int, ...], keep: bool) -> np.ndarray:
    """DALI's definition in exact arithmetic (Python integers / float64), default types."""
    wide = np.uint64 if sample.dtype.kind == "u" else np.int64
    exact = sample.astype(object if sample.dtype.kind in "iu" else np.float64)
    count = int(np.prod([sample.shape[a] for a in axes]))
    if op == "min":
        result = np.min(exact, axis=axes, keepdims=True).astype(sample.dtype)
    elif op == "max":
        result = np.max(exact, axis=axes, keepdims=True).astype(sample.dtype)
    elif op == "sum":
        total = np.sum(exact, axis=axes, keepdims=True)
        result = total.astype(np.float32 if sample.dtype == np.float32 else wide)
    else:
        values = exact.astype(np.float64)
        if op == "mean":
            result = np.sum(values, axis=axes, keepdims=True) / count
        else:
            result = np.sum(values * values, axis=axes, keepdims=True) / count
            if op == "rms":
                result = np.sqrt(result)
        result = result.astype(np.float32)
    if not keep:
        result = result.reshape([n for i, n in enumerate(sample.shape) if i not in axes])
    return result


def close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def _sample_and_axes(draw: Any) -> tuple[np.ndarray, Any]:
    dtype = draw(st.sampled_from(INPUTS))
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    low, high = (max(info.min, -1000), min(info.max, 1000)) if info else (-1e3, 1e3)
    elements = st.integers(int(low), int(high)) if info else st.floats(low, high, width=32)
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    sample = draw(hnp.arrays(dtype, shape, elements=elements))
    ndim = sample.ndim
    axes = draw(
        st.one_of(
            st.none(),
            st.integers(-ndim, ndim - 1),
            st.lists(st.integers(0, ndim - 1), unique=True).map(tuple),
        )
    )
    return sample, axes


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(("min", "max", "sum", "mean", "mean_square", "rms")),
    st.data(),
    st.booleans(),
)
def test_reductions_follow_their_definition(op: str, data: st.DataObject, keep: bool) -> None:
    sample, axes = data.draw(st.composite(lambda draw: _sample_and_axes(draw))())
    (got,), _ = reduce(op, [sample], axes=axes, keep_dims=keep)
    close(got, expected(op, sample, axes_of(sample.ndim, axes), keep))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(("std_dev", "variance")), st.data(), st.booleans(), st.integers(0, 1))
def test_deviations_follow_their_definition(
    op: str, data: st.DataObject, keep: bool, ddof: int
) -> None:
    sample, axes = data.draw(st.composite(lambda draw: _sample_and_axes(draw))())
    resolved = axes_of(sample.ndim, axes)
    mean = np.mean(sample.astype(np.float64), axis=resolved, keepdims=True).astype(np.float32)
    (got,), _ = reduce(op, [sample], mean=[mean], axes=axes, keep_dims=keep, ddof=ddof)
    count = int(np.prod([sample.shape[a] for a in resolved]))
    squares = np.sum((sample.astype(np.float64) - mean) ** 2, axis=resolved, keepdims=True)
    if not resolved:
        want = np.zeros(sample.shape)  # nothing reduced: DALI reports no deviation
    elif count - ddof <= 0:
        return  # the quotient is ±inf or NaN; checked separately
    else:
        want = squares / (count - ddof)
        want = np.sqrt(want) if op == "std_dev" else want
    if not keep:
        want = want.reshape([n for i, n in enumerate(sample.shape) if i not in resolved])
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3)


def test_sum_wraps_in_the_requested_type_and_defaults_to_64_bits() -> None:
    data = [np.array([[200, 100, 50], [1, 2, 3]], np.uint8)]
    (wide,), _ = reduce("sum", data, axes=1)
    (narrow,), _ = reduce("sum", data, axes=1, dtype=types.UINT8)
    (floats,), _ = reduce("sum", data, axes=1, dtype=types.FLOAT)
    assert wide.dtype == np.uint64 and wide.tolist() == [350, 6]
    assert narrow.dtype == np.uint8 and narrow.tolist() == [350 - 256, 6]
    assert floats.dtype == np.float32 and floats.tolist() == [350.0, 6.0]


def test_integer_means_truncate_toward_zero_after_wrapping() -> None:
    data = [np.array([[-100, -100, -50], [-9, -9, -8]], np.int8)]
    (mean,), _ = reduce("mean", data, axes=1, dtype=types.INT8)
    # -250 wraps to 6 in int8 (6 // 3 = 2); -26 / 3 = -8.67 truncates to -8
    assert mean.tolist() == [2, -8]
    (square,), _ = reduce("mean_square", data, axes=1, dtype=types.INT64)
    assert square.tolist() == [7500, 75]
    (root,), _ = reduce(
        "rms", [np.array([[200, 100, 50], [1, 2, 3]], np.uint8)], axes=1, dtype=types.UINT8
    )
    # squares summed in uint8: 64 + 16 + 196 = 276 -> 20; sqrt(20 / 3) = 2.58 -> 2
    assert root.tolist() == [2, 2]


@pytest.mark.parametrize(
    ("op", "dtype"),
    [
        ("sum", types.INT8),
        ("sum", types.FLOAT64),
        ("mean", types.UINT64),
        ("mean_square", types.UINT8),
        ("rms", types.INT32),
    ],
)
def test_unsupported_output_types_are_refused(op: str, dtype: types.DataType) -> None:
    with pytest.raises(OperatorError, match=f"'dtype' = {dtype.name} is not supported"):
        reduce(op, [np.zeros(3, np.uint8)], dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.bool_])
def test_unsupported_input_types_are_refused(dtype: type) -> None:
    with pytest.raises(OperatorError, match=f"input type {np.dtype(dtype)} is not supported"):
        reduce("max", [np.zeros(3, dtype)])


def test_empty_reductions_give_dalis_neutral_values() -> None:
    empty = [np.zeros((2, 0), np.float32)]
    assert reduce("min", empty, axes=1)[0][0].tolist() == [np.finfo(np.float32).max] * 2
    assert reduce("max", empty, axes=1)[0][0].tolist() == [np.finfo(np.float32).min] * 2
    assert reduce("sum", empty, axes=1)[0][0].tolist() == [0.0, 0.0]
    assert np.isnan(reduce("mean", empty, axes=1)[0][0]).all()
    ints = [np.zeros(0, np.int16)]
    assert reduce("min", ints)[0][0].tolist() == np.iinfo(np.int16).max


@pytest.mark.parametrize("axes", [0, 1, (0, 1)])
def test_samples_without_rows_reduce_to_their_shape(axes: Any) -> None:
    # no elements at all, in a ragged batch: the kept extents stay, sums are zero
    ragged = [np.ones((0, 2), np.int32), np.ones((0, 5), np.int32)]
    out, _ = reduce("sum", ragged, axes=axes)
    for got, sample in zip(out, ragged, strict=True):
        assert np.array_equal(got, np.sum(sample, axis=axes))


@pytest.mark.parametrize(
    ("kwargs", "layout"),
    [
        ({"axes": 1}, "HC"),
        ({"axes": 1, "keep_dims": True}, "HWC"),
        ({}, ""),
        ({"keep_dims": True}, "HWC"),
        ({"axis_names": "HW"}, "C"),
        ({"axes": []}, "HWC"),
    ],
)
def test_output_layout_drops_reduced_axes(kwargs: dict, layout: str) -> None:
    sample = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,), got_layout = reduce("sum", [sample], "HWC", **kwargs)
    assert got_layout == layout
    assert got.ndim == len(layout) or not layout


def test_axis_names_match_axes() -> None:
    sample = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    by_name, _ = reduce("max", [sample], "ABC", axis_names="AC")
    by_index, _ = reduce("max", [sample], "ABC", axes=[0, 2])
    assert by_name[0].tolist() == by_index[0].tolist() == [15, 19, 23]


def test_no_axes_converts_without_reducing() -> None:
    sample = np.array([[1, 2], [3, 4]], np.uint8)
    (got,), _ = reduce("sum", [sample], axes=[])
    assert got.dtype == np.uint64 and got.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    ("kwargs", "layout", "error", "message"),
    [
        ({"axes": 2}, None, IndexError, r"axis index out of range: 2 not in range \[-2, 1\]"),
        ({"axes": [1, -1]}, None, ValueError, "duplicate axis index 1"),
        ({"axis_names": "C"}, "HW", ValueError, "axis 'C' of axis_names='C' is not present"),
        ({"axes": 0, "axis_names": "H"}, "HW", ValueError, "mutually exclusive"),
    ],
)
def test_axis_errors(kwargs: dict, layout: str | None, error: type, message: str) -> None:
    with pytest.raises((error, OperatorError), match=message) as info:
        reduce("sum", [np.zeros((2, 3), np.float32)], layout, **kwargs)
    cause = info.value.__cause__ if isinstance(info.value, OperatorError) else info.value
    assert isinstance(cause, error)


def test_variance_takes_a_constant_mean_and_ddof() -> None:
    sample = np.array([1, 2, 3, 9], np.float32)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph() -> Any:
        data = fn.external_source(source=lambda: [sample], batch=True)
        return (
            fn.reductions.variance(data, 4.0),
            fn.reductions.std_dev(data, 3.75, ddof=1),
            fn.reductions.variance(data, 4.0, ddof=4),
        )

    pipe = graph()
    pipe.build()
    variance, std, infinite = (np.array(x.at(0)) for x in pipe.run())
    assert variance == pytest.approx(np.mean((sample - 4.0) ** 2))
    assert std == pytest.approx(np.std(sample, ddof=1))
    assert infinite == np.inf


def test_mean_must_be_float32_and_fit_the_output() -> None:
    data = [np.ones((2, 3), np.float32)]
    with pytest.raises(OperatorError, match="the mean must be float32, got int32"):
        reduce("variance", data, mean=[np.zeros(2, np.int32)], axes=1)
    with pytest.raises(OperatorError, match=r"the mean has shape \(3,\)"):
        reduce("variance", data, mean=[np.zeros(3, np.float32)], axes=1)


def test_results_do_not_depend_on_the_thread_count() -> None:
    rng = np.random.default_rng(5)
    samples = [rng.integers(0, 255, (8, 6, 3)).astype(np.uint8) for _ in range(6)]
    one, _ = reduce("rms", samples, "HWC", num_threads=1, axis_names="HW")
    three, _ = reduce("rms", samples, "HWC", num_threads=3, axis_names="HW")
    for a, b in zip(one, three, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "op", ["min", "max", "sum", "mean", "mean_square", "rms", "std_dev", "variance"]
)
def test_check_operator(op: str) -> None:
    rng = np.random.default_rng(3)
    samples = [rng.integers(0, 99, (4 + i, 3)).astype(np.int32) for i in range(3)]
    inputs: list[list[np.ndarray]] = [samples]
    if op in ("std_dev", "variance"):
        inputs.append([np.mean(s, axis=0).astype(np.float32) for s in samples])
    example = OperatorExample(inputs, ["HC"] + [""] * (len(inputs) - 1), {"axis_names": "H"})
    assert "threads" in check_operator(f"reductions.{op}", example)
