"""Random generators: distributions, shapes, dtypes, per-sample arguments and reproducibility."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, types
from feedline.core.errors import OperatorError
from feedline.core.kernel import KernelContext, SampleContext
from feedline.core.plugins import PluginSystem, get_registry
from feedline.operators.cpu.random import schemas as random_schemas
from feedline.operators.cpu.random.distributions import (
    ChoiceKernel,
    NormalKernel,
    UniformKernel,
    output_shape,
)
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def batch_values(tl: Any) -> np.ndarray:
    return np.stack([tl.at(i) for i in range(len(tl))])


def all_generators() -> tuple[Any, ...]:
    return (
        fn.random.uniform(range=[2.0, 5.0], shape=[3]),
        fn.random.normal(mean=1.0, stddev=2.0, shape=[2, 2]),
        fn.random.coin_flip(probability=0.3, shape=4),
        fn.random.choice(fn.external_source(source=lambda: [np.arange(5) * 10] * 8), shape=[3]),
    )


def test_same_seed_same_values_for_any_thread_count() -> None:
    one = run_pipeline(all_generators, batch_size=8, num_threads=1, iterations=2)
    four = run_pipeline(all_generators, batch_size=8, num_threads=4, iterations=2)
    for it_one, it_four in zip(one, four, strict=True):
        for a, b in zip(it_one, it_four, strict=True):
            np.testing.assert_array_equal(batch_values(a), batch_values(b))
    other_seed = run_pipeline(all_generators, batch_size=8, seed=8)
    assert not np.array_equal(batch_values(one[0][0]), batch_values(other_seed[0][0]))
    assert not np.array_equal(batch_values(one[0][0]), batch_values(one[1][0]))
    samples = batch_values(one[0][0])
    assert not np.array_equal(samples[0], samples[1]), "samples must not share a generator"


def test_distributions_and_default_types() -> None:
    def define() -> Any:
        return (
            fn.random.uniform(range=[-2.0, 3.0], shape=[4000]),
            fn.random.uniform(values=[1.0, 5.0, 7.0], shape=[3000]),
            fn.random.normal(mean=3.0, stddev=0.5, shape=[4000]),
            fn.random.coin_flip(probability=0.2, shape=[4000]),
            fn.random.uniform(),
        )

    uniform, discrete, normal, coin, scalar = run_pipeline(define, batch_size=2)[0]
    u, d, n, c = (batch_values(x) for x in (uniform, discrete, normal, coin))
    assert uniform.dtype == types.FLOAT and coin.dtype == types.INT32
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    assert set(np.unique(d).tolist()) == {1.0, 5.0, 7.0}
    assert abs(n.mean() - 3.0) < 0.05 and abs(n.std() - 0.5) < 0.05
    assert set(np.unique(c).tolist()) == {0, 1} and abs(c.mean() - 0.2) < 0.03
    assert scalar.shape() == [(), ()]


def test_per_sample_arguments_and_shape_like() -> None:
    probabilities = [np.array(float(i % 2), np.float32) for i in range(6)]
    images = [np.zeros((i + 1, 2, 3), np.uint8) for i in range(6)]

    def define() -> Any:
        p = fn.external_source(source=lambda: probabilities)
        shape_like = fn.external_source(source=lambda: images)
        return (
            fn.random.coin_flip(probability=p, shape=[5], dtype=types.BOOL),
            fn.random.normal(shape_like, dtype=types.FLOAT64),
        )

    coins, normals = run_pipeline(define, batch_size=6)[0]
    assert coins.dtype == types.BOOL
    for i in range(6):
        assert coins.at(i).tolist() == [bool(i % 2)] * 5
        assert normals.at(i).shape == (i + 1, 2, 3) and normals.at(i).dtype == np.float64


def test_choice_with_probabilities_and_multidimensional_elements() -> None:
    table = [np.arange(12, dtype=np.int16).reshape(4, 3)] * 4

    def define() -> Any:
        a = fn.external_source(source=lambda: table, layout="NC")
        counts = fn.external_source(source=lambda: [np.array(3, np.int64)] * 4)
        return (
            fn.random.choice(a, p=[0.0, 0.5, 0.5, 0.0], shape=[200]),
            fn.random.choice(a),
            fn.random.choice(counts, shape=[300]),
            fn.random.choice(4, shape=[300]),
        )

    rows, single, picks, literal = run_pipeline(define, batch_size=4)[0]
    values = batch_values(rows)
    assert values.dtype == np.int16 and values.shape == (4, 200, 3)
    assert set(values[..., 0].ravel().tolist()) == {3, 6}
    assert single.layout() == "C" and single.shape()[0] == (3,)
    counts = batch_values(picks)
    assert counts.dtype == np.int64 and set(np.unique(counts).tolist()) == {0, 1, 2}
    drawn = batch_values(literal)
    assert drawn.dtype == np.int32 and set(np.unique(drawn).tolist()) == {0, 1, 2, 3}


def test_integer_dtypes_round_half_away_from_zero_and_saturate() -> None:
    values = [2.5, -2.5, 300.0, -300.0, 0.4]

    def define() -> Any:
        return (
            fn.random.uniform(values=values, shape=[400], dtype=types.UINT8),
            fn.random.uniform(values=values, shape=[400], dtype=types.INT16),
            fn.random.uniform(values=values, shape=[400], dtype=types.BOOL),
        )

    as_uint8, as_int16, as_bool = (batch_values(x) for x in run_pipeline(define, batch_size=2)[0])
    assert set(np.unique(as_uint8).tolist()) == {0, 3, 255}
    assert set(np.unique(as_int16).tolist()) == {-300, -3, 0, 3, 300}
    assert as_bool.dtype == np.bool_ and set(np.unique(as_bool).tolist()) == {False, True}


def make_kernel(cls: type, schema: Any, **kwargs: Any) -> Any:
    static, _ = schema.validate(kwargs)
    kernel = cls(KernelContext(schema.name, schema, static, frozenset(), "cpu", 1, 1, 0, None))
    kernel.setup()
    return kernel


@settings(max_examples=60)
@given(
    st.floats(-1e3, 1e3),
    st.floats(1e-3, 1e3),
    st.lists(st.integers(0, 4), max_size=3),
    st.integers(0, 2**31),
)
def test_uniform_values_stay_in_range(
    low: float, width: float, shape: list[int], seed: int
) -> None:
    kernel = make_kernel(
        UniformKernel, random_schemas.RANDOM_UNIFORM, range=[low, low + width], shape=shape
    )
    out = kernel.run_sample((), kernel.args, SampleContext(0, 0, "", (), seed))
    assert out.shape == tuple(shape) and out.dtype == np.float32
    assert np.all(out >= np.float32(low)) and np.all(out < np.float32(low + width))


@settings(max_examples=60)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=6), st.integers(0, 2**31))
def test_choice_only_draws_elements_with_probability(weights: list[float], seed: int) -> None:
    total = sum(weights)
    if total == 0:
        weights, total = [1.0] * len(weights), float(len(weights))
    p = [w / total for w in weights]
    kernel = make_kernel(ChoiceKernel, random_schemas.RANDOM_CHOICE, p=p, shape=[50])
    elements = np.arange(len(p), dtype=np.uint16) * 7
    out = kernel.run_sample((elements,), kernel.args, SampleContext(0, 0, "", ("",), seed))
    assert out.dtype == np.uint16 and out.shape == (50,)
    allowed = {7 * i for i, q in enumerate(p) if q > 0}
    assert set(out.tolist()) <= allowed


def test_output_shape_rules() -> None:
    assert output_shape(None, None) == ()
    assert output_shape((2, 3), None) == (2, 3)
    assert output_shape(None, np.zeros((4, 1))) == (4, 1)
    with pytest.raises(ValueError, match="cannot both be given"):
        output_shape((2,), np.zeros(3))
    with pytest.raises(ValueError, match="negative extents"):
        output_shape((2, -1), None)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: fn.random.uniform(range=[1.0, 1.0]), OperatorError, r"min < max"),
        (lambda: fn.random.uniform(range=[0.0, 1.0, 2.0]), OperatorError, "range must be"),
        (lambda: fn.random.uniform(range=[0.0, 1.0], values=[1.0]), ValueError, "exclusive"),
        (lambda: fn.random.coin_flip(probability=1.5), OperatorError, r"probability must lie"),
        (lambda: fn.random.normal(stddev=-1.0), OperatorError, "stddev must be non-negative"),
        (lambda: fn.random.uniform(shape=[-1]), ValueError, "negative extents"),
        (
            lambda: fn.random.choice(
                fn.external_source(source=lambda: [np.arange(3)] * 2), p=[0.5, 0.6, 0.0]
            ),
            OperatorError,
            r"Sum of probabilities must be 1.0, but got 1.1 for sample: 0\.",
        ),
        (
            lambda: fn.random.choice(
                fn.external_source(source=lambda: [np.arange(3)] * 2), p=[0.5, 0.5]
            ),
            OperatorError,
            r'Unexpected shape for argument "p". Expected \{3\}, but got \{2\}',
        ),
        (
            lambda: fn.random.choice(2, p=[1.5, -0.5]),
            OperatorError,
            r"Probabilities must be in range \[0, 1\], but got: 1.5 for sample: 0 at index 0\.",
        ),
        (
            lambda: fn.random.choice(2, p=0.25),  # a single p stands for every element
            OperatorError,
            "Sum of probabilities must be 1.0, but got 0.5",
        ),
        (
            lambda: fn.random.choice(0),
            OperatorError,
            "Expected positive number of elements for sampling, got: 0 for sample: 0",
        ),
        (
            lambda: fn.random.choice(fn.external_source(source=lambda: [np.array(2.0)] * 2)),
            OperatorError,
            "Data type float64 is not supported for 0D inputs",
        ),
        (lambda: fn.random.uniform(dtype="float"), TypeError, "argument 'dtype'"),
    ],
)
def test_errors_name_the_argument(make: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        run_pipeline(make, batch_size=2)


@pytest.mark.parametrize(
    ("kwargs", "inputs", "tensor_args", "serial"),
    [
        ({}, 0, (), True),
        ({"shape": (8, 8)}, 0, (), True),
        ({"shape": (65,)}, 0, (), False),
        ({}, 1, (), False),  # shaped like an input: as large as it is
        ({}, 0, ("shape",), False),  # the shape comes per sample
    ],
)
def test_small_draws_run_serially(kwargs, inputs, tensor_args, serial) -> None:
    schema = get_registry().operators["random.normal"].schema
    static, _ = schema.validate(kwargs)
    context = KernelContext(
        schema.name, schema, static, frozenset(tensor_args), "cpu", 1, 2, 0, None, num_inputs=inputs
    )
    kernel = NormalKernel(context)
    kernel.setup()
    assert kernel.serial is serial


def test_choice_over_enum_values_keeps_their_type() -> None:
    filters = [types.DALIInterpType.INTERP_LINEAR, types.DALIInterpType.INTERP_CUBIC]

    def define() -> Any:
        chosen = fn.random.choice(filters, shape=[6])
        return chosen, fn.cast(chosen, dtype=types.INT32), chosen[0]

    chosen, as_int, first = run_pipeline(define, batch_size=3)[0]
    assert chosen.dtype == types.INTERP_TYPE and first.dtype == types.INTERP_TYPE
    assert as_int.dtype == types.INT32
    assert set(batch_values(as_int).ravel()) <= {int(f) for f in filters}


def test_choice_rejects_a_single_enum_value_as_a_count() -> None:
    def define() -> Any:
        return fn.random.choice(types.DALIInterpType.INTERP_CUBIC)

    with pytest.raises(RuntimeError, match="Data type DALIInterpType is not supported for 0D"):
        run_pipeline(define, batch_size=1)
