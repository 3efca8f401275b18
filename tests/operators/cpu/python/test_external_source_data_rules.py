"""external_source: positional arguments and what the fed data itself decides (layout)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from feedline import Pipeline, fn, types
from feedline.tensors import TensorCPU, TensorListCPU


def _run_once(batch_size: int, make_outputs) -> list:
    pipe = Pipeline(batch_size=batch_size, num_threads=1, device_id=None)
    with pipe:
        outputs = make_outputs()
        pipe.set_outputs(*(outputs if isinstance(outputs, list | tuple) else [outputs]))
    return pipe.run()


def test_num_outputs_may_follow_the_source_positionally() -> None:
    first, second = np.zeros((2, 3), np.int32), np.ones((2, 4), np.float32)
    out = _run_once(2, lambda: fn.external_source(lambda: (first, second), 2))
    assert len(out) == 2
    np.testing.assert_array_equal(out[1].as_array(), second)


def test_a_tensor_list_source_keeps_its_layout_when_none_is_given() -> None:
    data = TensorListCPU(np.zeros((2, 3, 4), np.uint8), "XY")
    (out,) = _run_once(2, lambda: fn.external_source(source=lambda: data))
    assert out.layout() == "XY"


def test_a_list_of_tensors_keeps_their_layout_and_the_argument_wins() -> None:
    samples = [TensorCPU(np.zeros((3, 4), np.uint8), "XY")] * 2
    kept, renamed = _run_once(
        2,
        lambda: (
            fn.external_source(source=lambda: samples),
            fn.external_source(source=lambda: samples, layout="AB"),
        ),
    )
    assert (kept.layout(), renamed.layout()) == ("XY", "AB")


def _fed_pipeline(**kwargs) -> Pipeline:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(name="input", **kwargs))
    return pipe


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            np.zeros((2, 3), np.float32),
            np.zeros((2, 3), np.uint8),
            "Type .* was float and the current type is uint8",
        ),
        (
            np.zeros((2, 3, 1), np.uint8),
            np.zeros((2, 3), np.uint8),
            "Dimensionality .* was 2 and the current is 1",
        ),
    ],
)
def test_type_and_dimensionality_must_not_change_between_iterations(first, second, message) -> None:
    pipe = _fed_pipeline()
    pipe.feed_input("input", first)
    pipe.run()
    with pytest.raises(RuntimeError, match=message):
        pipe.feed_input("input", second)


def test_layout_must_not_change_and_must_match_the_argument() -> None:
    pipe = _fed_pipeline()
    pipe.feed_input("input", [np.zeros(1)], layout="W")
    with pytest.raises(RuntimeError, match='was "W" and the current is "H"'):
        pipe.feed_input("input", [np.zeros(1)], layout="H")
    fixed = _fed_pipeline(layout="H")
    with pytest.raises(RuntimeError, match='Expected data with layout: "H" and got: "W"'):
        fixed.feed_input("input", [np.zeros(1)], layout="W")


def test_declared_dtype_ndim_and_layout_are_checked() -> None:
    with pytest.raises(RuntimeError, match="expected data of type uint8 and got: float"):
        _fed_pipeline(dtype=types.UINT8).feed_input("input", np.zeros((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="expected data with 3 dimensions and got 1"):
        _fed_pipeline(ndim=3).feed_input("input", np.zeros((2, 2), np.float32))
    with pytest.raises(RuntimeError, match="provided layout does not match the ndim"):
        _fed_pipeline(ndim=2, layout="HWC").build()


def test_blocking_waits_for_data_fed_from_another_thread() -> None:
    pipe = _fed_pipeline(blocking=True)
    pipe.build()
    feeder = threading.Timer(0.2, pipe.feed_input, ("input", np.full((2, 1), 7, np.int32)))
    feeder.start()
    (out,) = pipe.run()
    feeder.join()
    assert out.as_array().ravel().tolist() == [7, 7]


def test_without_blocking_a_missing_batch_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="no data was fed"):
        _fed_pipeline().run()


@pytest.mark.parametrize("used", [[0], [1], [0, 2]])
def test_outputs_fed_one_by_one_need_only_those_the_graph_reads(used) -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        outputs = fn.external_source(num_outputs=3)
        read = [outputs[i] for i in used]
        pipe.set_outputs(*read)
    for index, node in zip(used, read, strict=True):
        pipe.feed_input(node, np.full((2, 1), index, np.int32))
    results = pipe.run()
    assert [r.as_array().ravel().tolist() for r in results] == [[i, i] for i in used]


def test_a_source_whose_outputs_are_not_all_read_warns_which() -> None:
    def both():
        return np.zeros((2, 1), np.int32), np.ones((2, 1), np.int32)

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        _, second = fn.external_source(source=both, num_outputs=2)
        pipe.set_outputs(second)
    with pytest.warns(Warning, match="produces 2 outputs, but the output at the index 0 is not"):
        pipe.build()
    assert pipe.run()[0].as_array().ravel().tolist() == [1, 1]
