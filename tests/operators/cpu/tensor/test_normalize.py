"""``normalize`` against statistics computed with NumPy in the test."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import PerSample, real_images, run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


def test_real_images_per_sample_and_per_channel() -> None:
    images = real_images("file_tree", 2)
    out, layout = run_op("normalize", images)
    assert layout == "HWC"
    for image, got in zip(images, out, strict=True):
        x = image.astype(np.float64)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, (x - x.mean()) / x.std(), atol=1e-4)
    out, _ = run_op("normalize", images, axis_names="HW")
    for image, got in zip(images, out, strict=True):
        x = image.astype(np.float64)
        mean, std = x.mean(axis=(0, 1)), x.std(axis=(0, 1))
        np.testing.assert_allclose(got, (x - mean) / std, atol=1e-4)
        np.testing.assert_allclose(got.mean(axis=(0, 1)), 0, atol=1e-4)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    axes=st.sampled_from([None, (0,), (1,), (0, 1), (-1,)]),
    ddof=st.integers(0, 1),
    epsilon=st.sampled_from([0.0, 0.5]),
    scale=st.floats(0.5, 3),
    shift=st.floats(-2, 2),
    batch=st.booleans(),
)
# Two close values along the reduced axis: a variance near 1e-8 magnifies float32 rounding.
@example(seed=23489, axes=(1,), ddof=0, epsilon=0.0, scale=1.0, shift=0.0, batch=False)
def test_matches_numpy_statistics(seed, axes, ddof, epsilon, scale, shift, batch) -> None:
    rng = np.random.default_rng(seed)
    samples = [
        rng.normal(3, 2, (4, int(rng.integers(2, 5)), 3)).astype(np.float32) for _ in range(3)
    ]
    reduce = tuple(a % 3 for a in axes) if axes is not None else (0, 1, 2)
    if batch and 1 not in reduce:
        samples = [s[:, :2].copy() for s in samples]  # batch stats need equal kept extents
    kwargs = {"ddof": ddof, "epsilon": epsilon, "scale": scale, "shift": shift, "batch": batch}
    if axes is not None:
        kwargs["axes"] = list(axes)
    out, _ = run_op("normalize", samples, **kwargs)
    if batch:
        flat = [s.astype(np.float64) for s in samples]
        count = sum(int(np.prod([s.shape[a] for a in reduce])) for s in flat)
        mean = sum(s.sum(axis=reduce, keepdims=True) for s in flat) / count
        var = sum(((s - mean) ** 2).sum(axis=reduce, keepdims=True) for s in flat) / (count - ddof)
        stats = [(mean, var)] * 3
    else:
        stats = [
            (
                s.astype(np.float64).mean(axis=reduce, keepdims=True),
                s.astype(np.float64).var(axis=reduce, ddof=ddof, keepdims=True),
            )
            for s in samples
        ]
    for sample, got, (mean, var) in zip(samples, out, stats, strict=True):
        expected = scale * (sample - mean) / np.sqrt(var + epsilon) + shift
        # The operator subtracts the mean rounded to float32 (as DALI does): up to an ulp of the
        # mean, magnified by scale / stddev where the variance is tiny.
        rounding = np.abs(scale / np.sqrt(var + epsilon) * mean) * np.finfo(np.float32).eps
        error = np.abs(got - expected)
        bound = 1e-4 * np.abs(expected) + 1e-3 + rounding
        assert (error <= bound).all(), (
            f"max error {error.max()}, bound there {bound.flat[error.argmax()]}"
        )


def test_given_statistics_and_integer_output() -> None:
    x = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    (out,), _ = run_op(
        "normalize", [x], mean=10.0, stddev=4.0, scale=2.0, shift=100.0, dtype=types.UINT8
    )
    expected = np.clip(np.floor(2 * (x - 10.0) / 4 + 100 + 0.5), 0, 255)
    np.testing.assert_array_equal(out, expected)
    # DALI 2.4: a given mean is the centre of the computed deviation
    (out,), _ = run_op("normalize", [x], mean=2.0)
    xf = x.astype(np.float64)
    np.testing.assert_allclose(out, (xf - 2) / np.sqrt(((xf - 2) ** 2).mean()), rtol=1e-5)
    # ... and epsilon also applies to a given standard deviation
    (out,), _ = run_op("normalize", [x], stddev=2.0, epsilon=0.5)
    np.testing.assert_allclose(out, (xf - xf.mean()) / np.sqrt(4.5), rtol=1e-5, atol=1e-5)


def test_per_sample_tensor_statistics() -> None:
    rng = np.random.default_rng(2)
    samples = [rng.normal(size=(3, 4, 3)).astype(np.float32) for _ in range(2)]
    means = [s.mean(axis=(0, 1), keepdims=True) for s in samples]
    out, _ = run_op("normalize", samples, mean=PerSample(means), stddev=PerSample([2.0, 4.0]))
    for sample, mean, std, got in zip(samples, means, [2.0, 4.0], out, strict=True):
        np.testing.assert_allclose(got, (sample - mean) / std, atol=1e-5)


@pytest.mark.parametrize("batch", [False, True])
def test_ddof_not_below_the_reduced_count_leaves_only_epsilon(batch: bool) -> None:
    """DALI 2.4 takes the variance as 0 when ``ddof`` reaches the number of reduced elements:
    the output is then ``shift`` without epsilon, ``(x - mean) / sqrt(epsilon)`` with it."""
    rng = np.random.default_rng(5)
    samples = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(2)]
    ddof = 4 if batch else 2  # the reduced count: 2 rows per sample, of every sample with batch
    out, _ = run_op("normalize", samples, "HW", axes=[0], ddof=ddof, shift=0.5, batch=batch)
    for got in out:
        np.testing.assert_array_equal(got, 0.5)
    out, _ = run_op(
        "normalize", samples, "HW", axes=[0], ddof=5, mean=1.0, epsilon=0.25, batch=batch
    )
    for sample, got in zip(samples, out, strict=True):
        np.testing.assert_allclose(got, (sample - 1.0) / 0.5, rtol=1e-6)


def test_constant_input_gives_shift() -> None:
    (out,), _ = run_op("normalize", [np.ones((3, 3), np.float32)], "HW", shift=1.5)
    np.testing.assert_array_equal(out, 1.5)


@pytest.mark.parametrize(
    ("sample", "kwargs", "message"),
    [
        (np.zeros((3, 3, 3), np.float64), {}, "input type float64"),
        (np.zeros((3, 3, 3), np.float32), {"dtype": types.FLOAT64}, "FLOAT64"),
        (np.zeros((3, 3, 3), np.float32), {"axes": [0], "axis_names": "H"}, "mutually"),
        (np.zeros((3, 3, 3), np.float32), {"axes": [4]}, "out of range"),
        (np.zeros((3, 3, 3), np.float32), {"axis_names": "D"}, "'D'"),
    ],
)
def test_errors(sample: np.ndarray, kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("normalize", [sample], **kwargs)


def test_bad_tensor_statistics() -> None:
    sample = np.zeros((3, 4, 3), np.float32)
    with pytest.raises(OperatorError, match="does not match the input shape"):
        run_op("normalize", [sample], mean=PerSample([np.zeros((3, 2, 1), np.float32)]))
    with pytest.raises(OperatorError, match="non-scalar mean cannot be used with batch"):
        run_op("normalize", [sample], batch=True, mean=PerSample([np.zeros((1, 1, 3), np.float32)]))
