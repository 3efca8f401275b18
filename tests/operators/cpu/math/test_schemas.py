"""DataNode arithmetic inside pipelines: registration, literals, promotion, errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from feedline import OperatorError, fn, pipeline_def, types
from feedline.core.graph import DataNode
from feedline.core.plugins import PluginSystem
from feedline.core.registry import Registry
from feedline.operators.cpu.math import schemas as math_plugin
from feedline.operators.cpu.math.promotion import OPS
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def math_plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    """Only the python (external_source), tensor (constant) and math families."""
    use_families(empty_plugin_system, "python", "tensor", "math")
    yield empty_plugin_system


def run_graph(
    graph: Callable[..., Any], *batches: Sequence[np.ndarray], layout: str | None = None
) -> list[Any]:
    """Run ``graph(*external_sources)`` once on ``batches``; return the outputs as TensorLists."""

    @pipeline_def(batch_size=len(batches[0]), num_threads=2, device_id=None)
    def pipe() -> Any:
        sources = [fn.external_source(source=[list(b)], cycle=True, layout=layout) for b in batches]
        return graph(*sources)

    p = pipe()
    try:
        p.build()
        outputs = p.run()
    finally:
        p.close()
    return list(outputs)


def uint8_batch(*values: int) -> list[np.ndarray]:
    return [np.array(values, np.uint8)] * 2


def test_plugin_registers_every_operator_hidden_with_a_cpu_kernel() -> None:
    registry = Registry()
    math_plugin.feedline_register_operators(registry)
    names = {name.removeprefix("arithmetic.") for name in registry.operators}
    assert names == set(OPS)
    for entry in registry.operators.values():
        assert entry.schema.hidden
        assert entry.kernels == {"cpu": math_plugin.KERNEL}
        assert entry.kernel_class("cpu").__name__ == "ArithmeticKernel"
    assert not any(name.startswith("arithmetic") for name in dir(fn))


def test_python_literals_follow_dali_types() -> None:
    outs = run_graph(
        lambda x: (
            x + 1,
            x + 1.0,
            x - 5,
            x + True,
            x + np.uint8(1),
            x + types.Constant(1, dtype=types.INT64),
            -x,
        ),
        uint8_batch(3, 200),
    )
    dtypes = [o.dtype for o in outs]
    assert dtypes == [
        types.INT32,
        types.FLOAT,
        types.INT32,
        types.UINT8,
        types.UINT8,
        types.INT64,
        types.UINT8,
    ]
    assert outs[2].at(0).tolist() == [-2, 195]
    assert outs[4].at(1).tolist() == [4, 201]
    assert outs[6].at(0).tolist() == [253, 56]


def test_reflected_operators_and_every_python_operator() -> None:
    x_batch = [np.array([-7, 7, 9], np.int32), np.array([5, -3, 2], np.int32)]
    graphs: dict[str, Callable[[DataNode], DataNode]] = {
        "10 - x": lambda x: 10 - x,
        "2 ** x": lambda x: 2**x,
        "x // 2": lambda x: x // 2,
        "-20 // x": lambda x: -20 // x,
        "x % 2": lambda x: x % 2,
        "x / 2": lambda x: x / 2,
        "x * 3": lambda x: x * 3,
        "x & 6": lambda x: x & 6,
        "x | 1": lambda x: x | 1,
        "x ^ 5": lambda x: x ^ 5,
        "1 << (x & 7)": lambda x: 1 << (x & 7),
        "x >> 1": lambda x: x >> 1,
        "~x": lambda x: ~x,
        "abs(x)": abs,
        "+x": lambda x: +x,
        "x == 7": lambda x: x == 7,
        "x != 7": lambda x: x != 7,
        "x < 2": lambda x: x < 2,
        "x <= 2": lambda x: x <= 2,
        "x > 2": lambda x: x > 2,
        "x >= 2": lambda x: x >= 2,
    }
    outs = run_graph(lambda x: tuple(g(x) for g in graphs.values()), x_batch)
    references: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "10 - x": lambda a: np.int32(10) - a,
        "2 ** x": lambda a: np.where(a < 0, 0, np.int32(2) ** np.maximum(a, 0)).astype(np.int32),
        "x // 2": lambda a: np.fix(a / 2).astype(np.int32),
        "-20 // x": lambda a: np.fix(-20 / a).astype(np.int32),
        "x % 2": lambda a: np.fmod(a, np.int32(2)),
        "x / 2": lambda a: (a / 2).astype(np.float32),
        "x * 3": lambda a: a * 3,
        "x & 6": lambda a: a & 6,
        "x | 1": lambda a: a | 1,
        "x ^ 5": lambda a: a ^ 5,
        "1 << (x & 7)": lambda a: np.int32(1) << (a & 7),
        "x >> 1": lambda a: a >> 1,
        "~x": lambda a: ~a,
        "abs(x)": np.abs,
        "+x": lambda a: a,
        "x == 7": lambda a: a == 7,
        "x != 7": lambda a: a != 7,
        "x < 2": lambda a: a < 2,
        "x <= 2": lambda a: a <= 2,
        "x > 2": lambda a: a > 2,
        "x >= 2": lambda a: a >= 2,
    }
    for (label, reference), out in zip(references.items(), outs, strict=True):
        for i, sample in enumerate(x_batch):
            expected = reference(sample)
            assert out.at(i).dtype == expected.dtype, label
            assert out.at(i).tolist() == expected.tolist(), label


def test_c_style_division_in_a_pipeline() -> None:
    x = [np.array([-7, 7, -7, 7], np.int32)]
    y = [np.array([2, -2, -2, 2], np.int32)]
    quotient, remainder = run_graph(lambda a, b: (a // b, a % b), x, y)
    assert quotient.at(0).tolist() == [-3, -3, 3, 3]
    assert remainder.at(0).tolist() == [-1, 1, -1, 1]


def test_two_inputs_promote_and_broadcast_per_sample() -> None:
    images = [np.ones((2, 3, 3), np.uint8), np.full((4, 1, 3), 2, np.uint8)]
    scales = [np.array([1, 2, 3], np.int8), np.array([-1, 0, 1], np.int8)]
    (out,) = run_graph(lambda a, b: (a * b,), images, scales)
    assert out.dtype == types.INT16
    assert out.shape() == [(2, 3, 3), (4, 1, 3)]
    assert out.at(1)[3, 0].tolist() == [-2, 0, 2]


def test_layout_comes_from_the_input_with_most_dimensions() -> None:
    (out,) = run_graph(lambda x: (x + types.Constant(np.ones((2, 1), np.uint8)),), uint8_batch(1))
    assert out.layout() == ""
    (out,) = run_graph(lambda x: (x * 2,), uint8_batch(1, 2), layout="W")
    assert out.layout() == "W"


def test_int_literal_outside_int32_overflows_at_definition() -> None:
    with pytest.raises(OverflowError, match="int32"):
        run_graph(lambda x: x + 2**31, uint8_batch(1))
    (out,) = run_graph(lambda x: (x + -(2**31),), uint8_batch(3))
    assert out.at(0).tolist() == [-(2**31) + 3]


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (lambda x: (x > 1) + (x > 2), r"'\+' \(add\) with input types \(BOOL, BOOL\)"),
        (lambda x: -(x > 1), r"'unary -' \(neg\) with input types \(BOOL\)"),
        (lambda x: ~(x / 2), r"'~' \(bitnot\) with input types \(FLOAT\)"),
        (lambda x: x // 0, "integer division by zero in arithmetic operator '//'"),
        (lambda x: x % (x - x), "integer division by zero in arithmetic operator '%'"),
        (
            lambda x: x + types.Constant(np.ones(2, np.uint8)),
            r"shapes \(3,\) and \(2,\) cannot be broadcast",
        ),
    ],
)
def test_errors_name_the_operator(graph: Callable[[DataNode], DataNode], message: str) -> None:
    with pytest.raises((TypeError, ValueError, ZeroDivisionError, OperatorError), match=message):
        run_graph(graph, uint8_batch(1, 2, 3))


def test_bool_of_a_data_node_is_refused() -> None:
    with pytest.raises(TypeError, match="truth value"):
        run_graph(lambda x: x + 1 if x > 1 else x - 1, uint8_batch(1))
