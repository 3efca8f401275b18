"""``DataNode[...]``: DALI's tensor subscripts against NumPy indexing, for every dtype and rank."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import feedline
from feedline import OperatorError, fn, pipeline_def
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families

DTYPES = [
    np.bool_,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
]


@pytest.fixture(autouse=True)
def subscript_plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    """external_source (python), the subscript operators (tensor), expand_dims (arrays)."""
    use_families(empty_plugin_system, "python", "tensor", "arrays")
    yield empty_plugin_system


def run_indexed(
    index: Callable[..., Any], samples: list[np.ndarray], layout: str = "", *extra: list[Any]
) -> tuple[list[np.ndarray], str]:
    """Run ``index(source, *extra_sources)`` once over ``samples``; the samples and layout."""

    @pipeline_def(batch_size=len(samples), num_threads=1, device_id=None)
    def pipe() -> Any:
        data = fn.external_source(source=lambda: samples, layout=layout)
        others = [fn.external_source(source=[e], cycle=True) for e in extra]
        return index(data, *others)

    p = pipe()
    try:
        p.build()
        (out,) = p.run()
    finally:
        p.close()
    return [np.asarray(s) for s in out], out.layout()


def sample_of(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    values = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return (values % 2 == 1) if dtype is np.bool_ else values.astype(dtype)


@st.composite
def subscripts(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """An index expression of up to ``len(shape)`` subscripts, valid for ``shape``."""
    items: list[Any] = []
    for extent in shape[: draw(st.integers(0, len(shape)))]:
        if extent and draw(st.booleans()):
            items.append(draw(st.integers(-extent, extent - 1)))
        else:
            bound = st.none() | st.integers(-extent - 2, extent + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            items.append(slice(draw(bound), draw(bound), draw(step)))
    return tuple(items)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@settings(max_examples=8)
@given(data=st.data())
def test_matches_numpy_for_every_dtype_and_rank(dtype: Any, ndim: int, data: Any) -> None:
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    index = data.draw(subscripts(shape))
    samples = [sample_of(dtype, shape), sample_of(dtype, shape)[::-1].copy()]
    if not index:
        index = (slice(None),)
    out, _ = run_indexed(lambda x: x[index], samples)
    for got, sample in zip(out, samples, strict=True):
        expected = sample[index]
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_layout_loses_the_indexed_dimensions() -> None:
    samples = [np.arange(24, dtype=np.float32).reshape(2, 3, 4)] * 2
    out, layout = run_indexed(lambda x: x[1:, :-1, 1], samples, "HWC")
    assert layout == "HW"
    np.testing.assert_array_equal(out[0], samples[0][1:, :-1, 1])
    _, layout = run_indexed(lambda x: x[0, ::-2], samples, "HWC")
    assert layout == "WC"


def test_ragged_samples_are_indexed_each_with_its_own_shape() -> None:
    values = np.arange(6, dtype=np.int16)
    samples = [values.reshape(2, 3), values.reshape(3, 2)]
    out, _ = run_indexed(lambda x: x[-1, ::-1], samples)
    for got, sample in zip(out, samples, strict=True):
        np.testing.assert_array_equal(got, sample[-1, ::-1])


def test_none_is_a_full_range_as_in_dali() -> None:
    samples = [np.arange(6, dtype=np.uint8).reshape(2, 3)] * 2
    out, layout = run_indexed(lambda x: x[None, 1], samples, "AB")
    np.testing.assert_array_equal(out[0], samples[0][:, 1])
    assert layout == "A"


def test_new_axes_named_and_unnamed() -> None:
    samples = [np.arange(6, dtype=np.float32).reshape(2, 3)] * 2
    out, layout = run_indexed(lambda x: x[feedline.newaxis("C"), -1:, :-2], samples, "AB")
    np.testing.assert_array_equal(out[0], samples[0][np.newaxis, -1:, :-2])
    assert layout == "CAB"
    out, layout = run_indexed(lambda x: x[1, feedline.newaxis("C"), 1], samples, "AB")
    assert out[0].shape == (1,) and layout == "C"
    out, layout = run_indexed(lambda x: x[1:, feedline.newaxis, :2], samples, "AB")
    np.testing.assert_array_equal(out[0], samples[0][1:, np.newaxis, :2])
    assert layout == ""


def test_indices_given_as_data_nodes_change_per_sample() -> None:
    samples = [np.arange(20, dtype=np.int32).reshape(4, 5)] * 3
    starts = [np.int64(1), np.int64(-5), np.int64(2)]
    steps = [np.int16(2), np.int16(-1), np.int16(-3)]
    at = [np.int8(0), np.int8(-1), np.int8(3)]
    out, _ = run_indexed(lambda x, lo, st_, a: x[lo::st_, a], samples, "", starts, steps, at)
    for i, got in enumerate(out):
        np.testing.assert_array_equal(got, samples[i][starts[i] :: steps[i], at[i]])


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (lambda x: x[3], "Index 3 is out of range for axis 0 of length 3"),
        (lambda x: x[-4], "Index -4 is out of range for axis 0 of length 3"),
        (lambda x: x[:, 7], "Index 7 is out of range for axis 1 of length 2"),
        (lambda x: x[0, 0, 0], "Too many indices (3) for a 2-D tensor."),
        (lambda x: x[:, :, :], "Too many indices (3) for a 2-D tensor."),
        (lambda x: x[::0], "Step cannot be zero"),
        (lambda x: x[:, :, :, feedline.newaxis], "not enough dimensions"),
    ],
)
def test_errors_at_run_have_dalis_wording(index: Callable[..., Any], message: str) -> None:
    samples = [np.zeros((3, 2), np.uint8)] * 2
    with pytest.raises(OperatorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_indexed(index, samples)
    assert issubclass(OperatorError, RuntimeError)


def test_refused_when_the_graph_is_defined() -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        x = fn.external_source(source=lambda: [np.zeros(3)])
        with pytest.raises(NotImplementedError, match="Ellipsis"):
            _ = x[..., 0]
        with pytest.raises(TypeError, match="Invalid type for an index"):
            _ = x[1.0]
        with pytest.raises(ValueError, match="all axes or none"):
            _ = x[feedline.newaxis("A"), feedline.newaxis]
        assert "SubscriptDimCheck" in x[:].name
        return x

    pipe().close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"at_0": 0, "lo_0": 1}, "both as an index and as a range"),
        ({"at_0": 0, "step_0": 1}, "cannot have a step"),
        ({"lo_2": 0, "num_subscripts": 1}, "declares fewer"),
    ],
)
def test_inconsistent_operator_arguments_fail_at_build(
    kwargs: dict[str, int], message: str
) -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        x = fn.external_source(source=lambda: [np.zeros((3, 3, 3))])
        return fn._tensor_subscript(x, **kwargs)

    p = pipe()
    with pytest.raises(Exception, match=message):
        p.build()
    p.close()
