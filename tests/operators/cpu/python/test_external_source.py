"""external_source: source kinds, cycle modes, per-sample mode, checks, push mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import Pipeline, fn, pipeline_def, types
from feedline.core.errors import OperatorError


def single(source=None, batch_size: int = 2, depth: int = 1, **kwargs) -> Pipeline:
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, prefetch_queue_depth=depth)
    def graph():
        return fn.external_source(source=source, **kwargs)

    return graph()


def run_all(pipe: Pipeline, limit: int = 20) -> list[list]:
    batches = []
    for _ in range(limit):
        try:
            out = pipe.run()
        except StopIteration:
            break
        batches.append([s.tolist() for s in out[0].samples()])
    return batches


def test_zero_arg_callable() -> None:
    pipe = single(lambda: np.ones((2, 3), np.uint8))
    assert pipe.run()[0].shape() == [(3,), (3,)]


def test_batch_info_and_iteration_arguments() -> None:
    seen = []
    pipe = single(lambda info: seen.append(info) or np.zeros((1, 1), np.int32), batch_info=True)
    pipe.run()
    pipe.run()
    assert seen == [types.BatchInfo(0, 0), types.BatchInfo(1, 0)]


def test_per_sample_mode_drops_partial_batch_on_stop() -> None:
    def sample(info: types.SampleInfo) -> np.ndarray:
        if info.idx_in_epoch >= 5:
            raise StopIteration
        assert info.idx_in_epoch == info.iteration * 2 + info.idx_in_batch
        return np.array([info.idx_in_epoch, info.epoch_idx], np.int32)

    pipe = single(sample, batch=False)
    assert run_all(pipe) == [[[0, 0], [1, 0]], [[2, 0], [3, 0]]]
    pipe.reset()
    assert run_all(pipe)[0] == [[0, 1], [1, 1]]


@pytest.mark.parametrize(
    ("cycle", "expected"),
    [
        (None, [[[1]], [[2]]]),
        ("raise", [[[1]], [[2]]]),
    ],
)
def test_cycle_modes_end_of_epoch(cycle, expected) -> None:
    data = [np.array([[1]], np.int32), np.array([[2]], np.int32)]
    pipe = single(data, batch_size=1, cycle=cycle)
    assert run_all(pipe) == expected
    pipe.reset()
    again = run_all(pipe)
    assert again == ([] if cycle is None else expected)


def test_cycle_quiet_and_generator_function() -> None:
    data = [np.array([[1]], np.int32), np.array([[2]], np.int32)]
    pipe = single(data, batch_size=1, cycle="quiet")
    assert run_all(pipe, limit=5) == [[[1]], [[2]], [[1]], [[2]], [[1]]]

    def gen():
        yield np.array([[7]], np.int32)

    pipe = single(gen, batch_size=1, cycle=True)
    assert run_all(pipe, limit=3) == [[[7]]] * 3


def test_bad_sources_are_refused_when_the_operator_is_called() -> None:
    def generator():
        yield 1

    def keyword_only(*, flag):
        return flag

    def defaulted(info, extra=1):
        return extra

    with pytest.raises(TypeError, match="Cannot cycle through a generator"):
        single(generator(), cycle=True)
    with pytest.raises(ValueError, match="only be specified if `source` is iterable"):
        single(lambda: 1, cycle="quiet")
    with pytest.raises(TypeError, match=r"var-positional argument `\*a`"):
        single(lambda *a: 1)
    with pytest.raises(TypeError, match="keyword-only argument `flag`"):
        single(keyword_only)
    with pytest.raises(TypeError, match="more than one positional argument"):
        single(defaulted)  # parameters with defaults count, as in DALI
    with pytest.raises(TypeError, match="0 or 1"):
        single(lambda a, b, c: 1)
    with pytest.raises(ValueError, match="Invalid value 'sometimes' for the argument `cycle`"):
        single([1], cycle="sometimes")
    with pytest.raises(ValueError, match="valid only for parallel"):
        single(lambda: 1, prefetch_queue_depth=2)


def test_parallel_source_rules_checked_when_called() -> None:
    with pytest.raises(TypeError, match="must accept exactly one argument"):
        single(lambda: 1, parallel=True)
    with pytest.raises(TypeError, match="with an iterable must be run in a batch mode"):
        single([np.zeros(2)], parallel=True)
    with pytest.raises(ValueError, match="must be a positive integer"):
        single(lambda info: 1, parallel=True, batch=True, prefetch_queue_depth=0)


def test_source_given_positionally_and_default_prefetch_depth() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        return fn.external_source(lambda: np.full((2, 1), 5, np.int16), prefetch_queue_depth=None)

    assert graph().run()[0].as_array().tolist() == [[5], [5]]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def twice():
        return fn.external_source(lambda: 1, source=lambda: 1)

    with pytest.raises(TypeError, match="multiple values for argument 'source'"):
        twice()


def test_num_outputs_given_positionally_after_the_source() -> None:
    batches = [[np.array([1], np.uint8)], [np.array([2, 3], np.uint8)]]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pair():
        first, second = fn.external_source(lambda: batches, 2)
        return first, second

    first, second = pair().run()
    assert (first.at(0).tolist(), second.at(0).tolist()) == ([1], [2, 3])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def three():
        return fn.external_source(lambda: batches, 2, 3)

    with pytest.raises(
        TypeError, match=r"at most 2 positional argument\(s\) \(source, num_outputs\)"
    ):
        three()


def test_per_sample_mode_without_arguments_and_from_iterators() -> None:
    count = iter(range(100))
    pipe = single(lambda: np.array([next(count)], np.int32), batch_size=3, batch=False)
    assert run_all(pipe, limit=2) == [[[0], [1], [2]], [[3], [4], [5]]]

    def samples():
        yield from (np.array([i], np.int64) for i in range(7))

    pipe = single(samples, batch_size=3, batch=False)
    assert run_all(pipe) == [[[0], [1], [2]], [[3], [4], [5]]]  # the last 1 sample: no batch


def test_cycle_calls_iter_again_on_a_resettable_iterable() -> None:
    class Countdown:
        """Its own iterator: ``__iter__`` starts it over."""

        def __iter__(self):
            self.left = 2
            return self

        def __next__(self):
            if self.left == 0:
                raise StopIteration
            self.left -= 1
            return [np.array([self.left], np.int8)]

    pipe = single(Countdown(), batch_size=1, cycle="quiet")
    assert run_all(pipe, limit=5) == [[[1]], [[0]], [[1]], [[0]], [[1]]]
    pipe = single(Countdown(), batch_size=1, cycle="raise")
    assert run_all(pipe, limit=5) == [[[1]], [[0]]]
    pipe.reset()
    assert run_all(pipe, limit=5) == [[[1]], [[0]]]


def test_variable_batch_size_and_too_large() -> None:
    sizes = iter([1, 2, 3])
    pipe = single(lambda: np.zeros((next(sizes), 1), np.float32), batch_size=3)
    assert [len(pipe.run()[0]) for _ in range(3)] == [1, 2, 3]
    pipe = single(lambda: np.zeros((4, 1), np.float32), batch_size=3)
    with pytest.raises(OperatorError, match="more than the pipeline's batch size"):
        pipe.run()
    pipe = single(lambda: [], batch_size=3)
    with pytest.raises(OperatorError, match="empty"):
        pipe.run()


def test_dtype_ndim_layout_checks_and_multiple_outputs() -> None:
    pipe = single(lambda: np.zeros((2, 2), np.int32), dtype=types.FLOAT)
    with pytest.raises(OperatorError, match="expected data of type float and got: int32"):
        pipe.run()
    pipe = single(lambda: np.zeros((2, 2), np.int32), ndim=2)
    with pytest.raises(OperatorError, match="expected data with 2 dimensions and got 1"):
        pipe.run()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def two():
        a, b = fn.external_source(
            source=lambda: (np.zeros((2, 4, 4, 3), np.uint8), np.ones((2, 1), np.int32)),
            num_outputs=2,
            layout=["HWC", None],
            dtype=[types.UINT8, types.INT32],
        )
        return a, b

    images, labels = two().run()
    assert images.layout() == "HWC" and labels.as_array().tolist() == [[1], [1]]


def test_several_outputs_may_come_as_one_array() -> None:
    # DALI indexes what the source gives: an array's first axis is the output index
    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def per_sample():
        a, b = fn.external_source(
            source=lambda: np.arange(24.0).reshape(2, 3, 4), num_outputs=2, batch=False
        )
        return a, b

    a, b = per_sample().run()
    assert a.at(0).tolist() == np.arange(12.0).reshape(3, 4).tolist()
    assert b.at(2).tolist() == np.arange(12.0, 24.0).reshape(3, 4).tolist()

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def whole_batches():
        return tuple(fn.external_source(source=lambda: np.zeros((2, 3, 5)), num_outputs=2))

    assert [out.shape() for out in whole_batches().run()] == [[(5,)] * 3] * 2


def test_copy_unless_no_copy_and_ragged_lists() -> None:
    buffer = np.zeros((2, 2), np.float32)
    copied = single(lambda: buffer).run()[0]
    shared = single(lambda: buffer, no_copy=True).run()[0]
    buffer[0, 0] = 9
    assert copied.as_array()[0, 0] == 0 and shared.as_array()[0, 0] == 9
    ragged = single(lambda: [np.zeros(2, np.uint8), np.zeros(3, np.uint8)]).run()[0]
    assert ragged.shape() == [(2,), (3,)]
    with pytest.raises(OperatorError, match="share ndim and dtype"):
        single(lambda: [np.zeros(2, np.uint8), np.zeros((3, 1), np.uint8)]).run()


@settings(max_examples=25, deadline=None)
@given(
    batch=hnp.arrays(
        st.sampled_from([np.uint8, np.int32, np.float32]),
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
        elements={"allow_nan": False, "min_value": 0, "max_value": 100},
    )
)
def test_a_list_of_samples_is_copied_once_into_the_batch(batch: np.ndarray) -> None:
    """Rows of one array, in order, could be taken as a view of it: without ``no_copy`` the
    batch must still own its data."""
    rows = list(batch)
    out = single(lambda: rows, batch_size=len(rows)).run()[0]
    expected = batch.copy()
    batch[...] = 0
    np.testing.assert_array_equal(out.as_array(), expected)


@pytest.mark.parametrize("sides", [[600, 600], [600, 500]], ids=["uniform", "ragged"])
def test_copies_land_in_recycled_memory_but_held_batches_stay(sides: list[int]) -> None:
    counter = iter(range(100))
    arrays: list[np.ndarray] = []

    def source() -> list[np.ndarray]:
        value = next(counter)
        arrays[:] = [np.full((side, side), value, np.float32) for side in sides]
        return arrays

    pipe = single(source)
    held = [pipe.run()[0] for _ in range(3)]
    for array in arrays:
        array[...] = -1  # the caller's arrays change after the batch was taken
    addresses = set()
    for _ in range(6):
        (batch,) = pipe.run()
        addresses.add(batch.samples()[0].__array_interface__["data"][0])
        del batch
    for value, tl in enumerate(held):
        assert [s.shape for s in tl.samples()] == [(side, side) for side in sides]
        assert all(np.all(s == value) for s in tl.samples())
    assert len(addresses) <= 2  # the memory of dropped batches came back


def test_push_mode_fifo_and_repeat_last() -> None:
    pipe = single(name="src")
    pipe.feed_input("src", np.array([[1], [2]], np.int32))
    pipe.feed_input("src", np.array([[3], [4]], np.int32))
    assert run_all(pipe, limit=2) == [[[1], [2]], [[3], [4]]]
    with pytest.raises(OperatorError, match="no data was fed"):
        pipe.run()
    repeating = single(name="src", repeat_last=True)
    repeating.feed_input("src", np.array([[5]], np.int32), layout="X")
    assert run_all(repeating, limit=3) == [[[5]]] * 3
    with pytest.raises(KeyError, match="Could not find an input operator with name"):
        repeating.feed_input("nope", np.zeros((1, 1)))


def test_iterable_of_framework_and_tensorlist_batches() -> None:
    from feedline import TensorListCPU

    batches = [TensorListCPU(np.ones((2, 2), np.uint8))]
    assert single(batches).run()[0].as_array().sum() == 4


def parallel_sample(info: types.SampleInfo) -> np.ndarray:
    if info.idx_in_epoch >= 6:
        raise StopIteration
    return np.array([info.idx_in_epoch, info.epoch_idx], np.int32)


def parallel_failing(info: types.SampleInfo) -> np.ndarray:
    if info.idx_in_epoch == 3:
        raise KeyError("missing annotation 3")
    return np.zeros(1, np.int32)


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_parallel_source_epochs(start_method: str) -> None:
    @pipeline_def(
        batch_size=2, num_threads=1, device_id=None, py_num_workers=2, py_start_method=start_method
    )
    def graph():
        return fn.external_source(source=parallel_sample, parallel=True)

    pipe = graph()
    assert run_all(pipe) == [[[0, 0], [1, 0]], [[2, 0], [3, 0]], [[4, 0], [5, 0]]]
    pipe.reset()
    assert run_all(pipe)[0] == [[0, 1], [1, 1]]
    pipe.close()


def test_parallel_source_error_carries_worker_traceback() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, py_num_workers=2)
    def graph():
        return fn.external_source(source=parallel_failing, parallel=True)

    pipe = graph()
    with pytest.raises(OperatorError) as info:
        run_all(pipe)
    assert "missing annotation 3" in str(info.value) and "Traceback" in str(info.value)
    pipe.close()


def test_parallel_needs_workers() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, py_num_workers=0)
    def graph():
        return fn.external_source(source=parallel_sample, parallel=True)

    with pytest.raises(RuntimeError, match="py_num_workers"):
        graph().build()


def test_unknown_argument_is_rejected_by_name() -> None:
    with pytest.raises(TypeError, match="unexpected argument 'blockng'"):
        single(lambda: np.zeros((1, 1)), blockng=False)


def test_bytes_per_sample_hint_only_with_parallel_and_positive() -> None:
    single(lambda: 1, bytes_per_sample_hint=None)  # None: not given
    with pytest.raises(ValueError, match="`bytes_per_sample_hint` is valid only for parallel"):
        single(lambda: 1, bytes_per_sample_hint=1024)
    with pytest.raises(ValueError, match="must be a positive integer"):
        single(lambda info: 1, parallel=True, bytes_per_sample_hint=0)


def test_num_outputs_always_gives_a_list_even_of_one() -> None:
    """As in DALI, giving num_outputs (1 included) makes the call return a list of nodes, so
    ``op(*fn.external_source(..., num_outputs=n))`` works for every n; without it, one node."""
    seen = {}

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        one = fn.external_source(source=lambda: ([np.arange(3)] * 2,), num_outputs=1)
        bare = fn.external_source(source=lambda: [np.arange(2)] * 2)
        seen["one"], seen["bare"] = one, bare
        return (*one, bare)

    first, second = graph().run()
    assert isinstance(seen["one"], list) and len(seen["one"]) == 1
    assert not isinstance(seen["bare"], list)
    assert first.at(1).tolist() == [0, 1, 2] and second.at(0).tolist() == [0, 1]


def test_without_cycle_the_same_iterator_is_asked_again_after_reset() -> None:
    class SelfRewinding:
        """Its own iterator, never re-created: when it ends it rewinds for the next epoch."""

        def __init__(self) -> None:
            self.position = 0

        def __iter__(self):
            return self

        def __next__(self):
            if self.position == 2:
                self.position = 0
                raise StopIteration
            self.position += 1
            return [np.array([self.position], np.int8)]

    pipe = single(SelfRewinding(), batch_size=1)
    assert run_all(pipe) == [[[1]], [[2]]]
    pipe.reset()
    assert run_all(pipe) == [[[1]], [[2]]]
