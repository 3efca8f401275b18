"""``experimental.numba_function``: a Numba-compiled run_fn filling outputs sized by setup_fn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import OperatorError, fn, types
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

pytest.importorskip("numba", reason="experimental.numba_function needs the numba extra")

SAMPLES = [
    np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    np.arange(60, dtype=np.uint8).reshape(5, 4, 3),
]
U8 = {"in_types": [types.UINT8], "out_types": [types.UINT8], "ins_ndim": [3], "outs_ndim": [3]}


def invert(out0: np.ndarray, in0: np.ndarray) -> None:
    out0[:] = 255 - in0[:]


def invert_batch(out0: Any, in0: Any) -> None:
    for s in range(len(out0)):
        out0[s][:] = 255 - in0[s][:]


def transposed_shape(out_shapes: Any, in_shapes: Any) -> None:
    for s in range(len(out_shapes[0])):
        for d in range(3):
            out_shapes[0][s][d] = in_shapes[0][s][(d + 1) % 3]


def rotate_axes(out0: np.ndarray, in0: np.ndarray) -> None:
    for i in range(in0.shape[0]):
        for j in range(in0.shape[1]):
            for k in range(in0.shape[2]):
                out0[j, k, i] = in0[i, j, k]


def sum_and_count(out0: np.ndarray, out1: np.ndarray, in0: np.ndarray) -> None:
    out0[0] = in0.sum()
    out1[0] = in0.size


def scalar_shapes(out_shapes: Any, in_shapes: Any) -> None:
    for o in range(2):
        for s in range(len(out_shapes[o])):
            out_shapes[o][s][0] = 1


def _run(**kwargs: Any) -> list[tuple[list[np.ndarray], str]]:
    def graph() -> Any:
        nodes = fn.experimental.numba_function(feed(SAMPLES), **kwargs)
        return tuple(nodes) if isinstance(nodes, list) else nodes

    return build(graph)


@pytest.mark.parametrize(("run_fn", "batch"), [(invert, False), (invert_batch, True)])
def test_outputs_take_the_input_shapes_without_setup(run_fn: Any, batch: bool) -> None:
    ((out, layout),) = _run(run_fn=run_fn, batch_processing=batch, **U8)
    assert layout == ""
    for got, sample in zip(out, SAMPLES, strict=True):
        np.testing.assert_array_equal(got, 255 - sample)


def test_setup_fn_sets_the_output_shapes() -> None:
    ((out, _),) = _run(run_fn=rotate_axes, setup_fn=transposed_shape, **U8)
    for got, sample in zip(out, SAMPLES, strict=True):
        np.testing.assert_array_equal(got, sample.transpose(1, 2, 0))


def test_several_outputs_of_other_types() -> None:
    (sums, _), (counts, _) = _run(
        run_fn=sum_and_count,
        setup_fn=scalar_shapes,
        in_types=[types.UINT8],
        out_types=[types.INT64, types.INT32],
        ins_ndim=[3],
        outs_ndim=[1, 1],
    )
    assert [int(s[0]) for s in sums] == [int(s.sum()) for s in SAMPLES]
    assert counts[1].dtype == np.int32 and int(counts[1][0]) == 60


def test_single_values_stand_for_one_element_lists() -> None:
    ((out, _),) = _run(
        run_fn=invert, in_types=types.UINT8, out_types=types.UINT8, ins_ndim=3, outs_ndim=3
    )
    np.testing.assert_array_equal(out[0], 255 - SAMPLES[0])


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"ins_ndim": [3, 3]}, ValueError, "Number of input types and input dimensions"),
        ({"out_types": [types.FLOAT16]}, ValueError, "Numba does not support float16"),
        ({"blocks": [1, 1]}, ValueError, "blocks needs 3 positive numbers"),
    ],
)
def test_call_errors(changes: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        _run(run_fn=invert, **{**U8, **changes})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"outs_ndim": [2]}, r"outs_ndim \[2\] must repeat ins_ndim \[3\]"),
    ],
)
def test_build_errors(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _run(run_fn=invert, **{**U8, **changes})


def test_inputs_of_another_type_are_refused() -> None:
    with pytest.raises(OperatorError, match="input 0, sample 0 is uint8 with 3 dimensions"):
        _run(run_fn=invert, **{**U8, "in_types": [types.INT16], "out_types": [types.INT16]})


def test_check_operator() -> None:
    example = OperatorExample(inputs=[SAMPLES * 2], args={"run_fn": invert, **U8})
    assert "threads" in check_operator("experimental.numba_function", example)


def test_the_gpu_launch_configuration_is_accepted_and_unused_on_the_cpu() -> None:
    plain = _run(run_fn=invert, **U8)
    launched = _run(run_fn=invert, blocks=[4, 4, 1], threads_per_block=[8, 8, 1], **U8)
    for (left, _), (right, _) in zip(plain, launched, strict=True):
        for a, b in zip(left, right, strict=True):
            np.testing.assert_array_equal(a, b)


def _first_row_only(out0, in0):
    out0[0][:] = 1


def test_what_run_fn_leaves_unwritten_is_zero() -> None:
    ((out, _),) = _run(run_fn=_first_row_only, **U8)
    for sample in out:
        assert (sample[0] == 1).all() and not sample[1:].any()
