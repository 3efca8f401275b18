"""external_source: positional arguments and what the fed data itself decides (layout)."""

from __future__ import annotations

import numpy as np

from feedline import Pipeline, fn
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
