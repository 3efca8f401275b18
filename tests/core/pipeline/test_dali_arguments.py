"""Pipeline constructor arguments that only tune DALI's CUDA executor: accepted, reported by
their properties, warned about where DALI warns, and without effect on the results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from feedline import Pipeline, fn, types
from feedline.core.pipeline import OperatorConcurrency, StreamPolicy


def _run(**kwargs) -> np.ndarray:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=3, **kwargs)
    pipe.set_outputs(fn.random.uniform(range=[0.0, 1.0]))
    (out,) = pipe.run()
    pipe.close()
    return out.as_array()


@pytest.mark.parametrize("policy", list(StreamPolicy))
@pytest.mark.parametrize("concurrency", list(OperatorConcurrency))
def test_policies_are_accepted_reported_and_change_nothing(policy, concurrency) -> None:
    pipe = Pipeline(batch_size=1, stream_policy=policy, concurrency=concurrency)
    assert (pipe.stream_policy, pipe.concurrency) == (policy, concurrency)
    np.testing.assert_array_equal(_run(stream_policy=policy, concurrency=concurrency), _run())


def test_a_policy_of_the_wrong_type_names_the_argument() -> None:
    with pytest.raises(TypeError, match="stream_policy must be a StreamPolicy"):
        Pipeline(batch_size=1, stream_policy="single")
    with pytest.raises(TypeError, match="concurrency must be a OperatorConcurrency"):
        Pipeline(batch_size=1, concurrency=1)


def test_deprecated_arguments_warn_as_in_dali() -> None:
    with pytest.warns(Warning, match="max_streams` is deprecated"):
        Pipeline(batch_size=1, max_streams=2)
    with pytest.warns(Warning, match="experimental_exec_dynamic is deprecated"):
        pipe = Pipeline(batch_size=1, experimental_exec_dynamic=True)
    assert pipe.exec_dynamic
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Pipeline(batch_size=1, default_cuda_stream_priority=None, max_streams=None)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"py_callback_pickler": pytest}, ValueError, "should not be set when 'fork'"),
        ({"output_dtype": "float"}, TypeError, "output_dtype"),
        ({"output_dtype": [types.FLOAT, types.NO_TYPE]}, ValueError, "NO_TYPE"),
        ({"output_ndim": [1, -1]}, ValueError, "non-negative"),
        ({"output_ndim": 1.5}, TypeError, "output_ndim"),
        ({"output_layout": ["HWC", 3]}, TypeError, "output_layout"),
    ],
)
def test_constructor_arguments_are_checked_where_dali_checks_them(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        Pipeline(batch_size=1, **kwargs)


def test_valid_output_specs_and_a_spawn_pickler_are_accepted() -> None:
    Pipeline(batch_size=1, output_dtype=[types.FLOAT, None], output_ndim=3, output_layout="HWC")
    Pipeline(batch_size=1, py_start_method="spawn", py_callback_pickler=pytest)


def test_policies_survive_serialization_and_are_exported_where_dali_has_them() -> None:
    import feedline

    assert feedline.StreamPolicy is StreamPolicy
    assert feedline.OperatorConcurrency is OperatorConcurrency
    pipe = Pipeline(
        batch_size=1,
        num_threads=1,
        device_id=None,
        stream_policy=StreamPolicy.PER_OPERATOR,
        concurrency=OperatorConcurrency.NONE,
    )
    pipe.set_outputs(fn.constant(idata=[1]))
    copy = Pipeline.deserialize(pipe.serialize())
    assert (copy.stream_policy, copy.concurrency) == (
        StreamPolicy.PER_OPERATOR,
        OperatorConcurrency.NONE,
    )
    copy.close()


@pytest.mark.parametrize(
    "specs", [{"output_dtype": [types.INT32, types.INT32]}, {"output_ndim": [1, 1]}]
)
def test_output_specs_of_another_length_fail_at_build_and_serialize(specs) -> None:
    for action in ("build", "serialize"):
        pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, **specs)
        pipe.set_outputs(fn.constant(idata=[1]))
        with pytest.raises(RuntimeError, match="Lengths of provided output descriptions"):
            getattr(pipe, action)()


@pytest.mark.parametrize("threads", [np.int64(2), np.uint8(3)])
def test_numpy_integers_are_thread_counts(threads) -> None:
    """DALI takes any integer for num_threads (its tests draw them with NumPy)."""
    pipe = Pipeline(batch_size=2, num_threads=threads, device_id=None)
    with pipe:
        pipe.set_outputs(fn.random.uniform(range=[0, 1]))
    pipe.build()
    (out,) = pipe.run()
    assert len(out) == 2
    assert type(pipe.num_threads) is int and pipe.num_threads == threads


def test_a_float_thread_count_is_refused() -> None:
    pipe = Pipeline(batch_size=2, num_threads=2.0, device_id=None)
    with pipe:
        pipe.set_outputs(fn.random.uniform(range=[0, 1]))
    with pytest.raises(TypeError, match="num_threads must be an int"):
        pipe.build()
