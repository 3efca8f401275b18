"""``dl_tensor_python_function``: python_function on DLPack capsules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import OperatorError, fn
from feedline.operators.cpu.python.dlpack_function import from_dlpack, to_dlpack
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

SAMPLES = [np.arange(3, dtype=np.int32), np.arange(4, dtype=np.int32) * 10]
CAPSULE = type(np.zeros(1).__dlpack__())


def _array(capsule: Any) -> np.ndarray:
    return from_dlpack(capsule, "test", 0)


def test_batch_mode_is_the_default_and_gets_capsule_lists() -> None:
    seen: list[Any] = []

    def double(tensors: list[Any]) -> list[Any]:
        seen.append(tensors)
        return [(_array(t) * 2).__dlpack__() for t in tensors]

    ((out, _),) = build(lambda: fn.dl_tensor_python_function(feed(SAMPLES), function=double))
    assert isinstance(seen[0], list) and all(isinstance(t, CAPSULE) for t in seen[0])
    for got, sample in zip(out, SAMPLES, strict=True):
        np.testing.assert_array_equal(got, sample * 2)


def test_per_sample_with_several_outputs_and_layouts() -> None:
    def split(capsule: Any) -> tuple[Any, Any]:
        array = _array(capsule)
        return np.array(array[:1]).__dlpack__(), (array + 1).astype(np.float32)

    (first, _), (second, layout) = build(
        lambda: tuple(
            fn.dl_tensor_python_function(
                feed(SAMPLES),
                function=split,
                batch_processing=False,
                num_outputs=2,
                output_layouts=["", "X"],
            )
        )
    )
    assert [f.tolist() for f in first] == [[0], [0]]
    assert layout == "X" and second[1].dtype == np.float32
    np.testing.assert_array_equal(second[1], SAMPLES[1] + 1)


def test_capsules_share_writable_memory_and_copy_read_only_memory() -> None:
    writable = np.arange(4.0)
    assert np.shares_memory(_array(to_dlpack(writable)), writable)
    frozen = np.arange(4.0)
    frozen.flags.writeable = False
    copied = _array(to_dlpack(frozen))
    assert not np.shares_memory(copied, frozen)
    np.testing.assert_array_equal(copied, frozen)


def test_torch_reads_and_returns_capsules() -> None:
    torch_dlpack = pytest.importorskip("torch.utils.dlpack")

    def sine(tensors: list[Any]) -> list[Any]:
        return [torch_dlpack.to_dlpack(torch_dlpack.from_dlpack(t).double().sin()) for t in tensors]

    ((out, _),) = build(lambda: fn.dl_tensor_python_function(feed(SAMPLES), function=sine))
    for got, sample in zip(out, SAMPLES, strict=True):
        np.testing.assert_allclose(got, np.sin(sample.astype(np.float64)))


def _outputs(function: Any, num_outputs: int) -> Any:
    nodes = fn.dl_tensor_python_function(feed(SAMPLES), function=function, num_outputs=num_outputs)
    return tuple(nodes) if isinstance(nodes, list) else nodes


@pytest.mark.parametrize(
    ("function", "num_outputs", "message"),
    [
        (lambda ts: [1.5 for _ in ts], 1, "output 0 is a float; dl_tensor_python_function"),
        (lambda ts: [*ts, ts[0]], 2, "must be a tuple, got: list"),
        (lambda ts: (ts, ts, ts), 2, "got 3, expected 2"),
        (lambda ts: [ts[0]], 1, "output 0 has 1 samples, expected 2"),
    ],
)
def test_errors(function: Any, num_outputs: int, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(lambda: _outputs(function, num_outputs))


def test_too_many_layouts_is_refused() -> None:
    with pytest.raises(RuntimeError, match="dl_tensor_python_function: The length of the"):
        build(
            lambda: fn.dl_tensor_python_function(
                feed(SAMPLES), function=lambda ts: ts, output_layouts=["A", "B"]
            )
        )


def test_check_operator() -> None:
    def negate(tensors: list[Any]) -> list[Any]:
        return [(-_array(t)).__dlpack__() for t in tensors]

    example = OperatorExample(inputs=[SAMPLES * 2], args={"function": negate})
    assert "threads" in check_operator("dl_tensor_python_function", example)
