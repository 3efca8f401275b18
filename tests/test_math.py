"""``feedline.math``: DALI's math functions on pipeline batches."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import feedline
from feedline import OperatorError, fn, pipeline_def, types
from feedline import math as fmath
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.math.promotion import OPS
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def math_plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    """Only the python (external_source), tensor (constant) and math families."""
    use_families(empty_plugin_system, "python", "tensor", "math")
    yield empty_plugin_system


def run_graph(graph: Callable[..., Any], *batches: list[np.ndarray]) -> list[Any]:
    """Run ``graph(*external_sources)`` once on ``batches``; return the output TensorLists."""

    @pipeline_def(batch_size=len(batches[0]), num_threads=1, device_id=None)
    def pipe() -> Any:
        return graph(*(fn.external_source(source=[list(b)], cycle=True) for b in batches))

    p = pipe()
    try:
        p.build()
        outputs = p.run()
    finally:
        p.close()
    return list(outputs)


UNARY_NUMPY = {
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "cbrt": np.cbrt,
    "exp": np.exp,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "abs": np.abs,
    "fabs": np.fabs,
    "floor": np.floor,
    "ceil": np.ceil,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
}


def test_module_is_reachable_and_complete() -> None:
    assert feedline.math is fmath
    assert set(fmath.__all__) == set(UNARY_NUMPY) | {"min", "max", "pow", "fpow", "atan2", "clamp"}
    assert set(fmath.__all__) <= set(OPS)


def test_signatures_use_dali_parameter_names() -> None:
    def params(function: Callable[..., Any]) -> list[str]:
        return list(inspect.signature(function).parameters)

    assert params(fmath.sqrt) == ["input"]
    assert params(fmath.min) == params(fmath.max) == ["left", "right"]
    assert params(fmath.pow) == params(fmath.fpow) == ["base", "exponent"]
    assert params(fmath.atan2) == ["x", "y"]
    assert params(fmath.clamp) == ["value", "lo", "hi"]


INT_DOMAIN = {"asin": [0, 1], "acos": [0, 1], "atanh": [0]}


@pytest.mark.parametrize("name", sorted(UNARY_NUMPY))
def test_unary_functions_on_floats_and_ints(name: str) -> None:
    function = getattr(fmath, name)
    shift = np.float32(1 if name == "acosh" else 0)
    floats = [np.array([0.1, 0.5, 0.9], np.float32) + shift, np.array([0.25], np.float32) + shift]
    ints = [np.array(INT_DOMAIN.get(name, [1, 2, 3]), np.int16)] * 2
    out_f, out_i = run_graph(lambda x, y: (function(x), function(y)), floats, ints)
    assert out_f.dtype == types.FLOAT
    for i, sample in enumerate(floats):
        np.testing.assert_allclose(out_f.at(i), UNARY_NUMPY[name](sample), rtol=1e-6)
    assert out_i.dtype == (types.INT16 if name == "abs" else types.FLOAT)
    reference = UNARY_NUMPY[name](ints[0].astype(np.float64))
    np.testing.assert_allclose(out_i.at(0), reference, rtol=1e-6)


def test_binary_functions_and_clamp_types() -> None:
    u8 = [np.array([0, 1, 5, 200], np.uint8)]
    i8 = [np.array([-3, 4, 5, -100], np.int8)]
    outs = run_graph(
        lambda x, y: (
            fmath.min(x, y),
            fmath.max(x, y),
            fmath.pow(y, -1),
            fmath.fpow(y, -1),
            fmath.atan2(x, y),
            fmath.clamp(x, 0, 2),
            fmath.clamp(x, 0, 2.5),
            fmath.clamp(x, y, 3),
        ),
        u8,
        i8,
    )
    a, b = u8[0].astype(np.int64), i8[0].astype(np.int64)
    assert [o.dtype for o in outs] == [
        types.INT16,
        types.INT16,
        types.INT32,
        types.FLOAT,
        types.FLOAT,
        types.INT32,
        types.FLOAT,
        types.INT32,
    ]
    assert outs[0].at(0).tolist() == np.minimum(a, b).tolist()
    assert outs[1].at(0).tolist() == np.maximum(a, b).tolist()
    assert outs[2].at(0).tolist() == [0, 0, 0, 0]
    np.testing.assert_allclose(outs[3].at(0), 1 / b, rtol=1e-6)
    np.testing.assert_allclose(outs[4].at(0), np.arctan2(a, b), rtol=1e-6)
    assert outs[5].at(0).tolist() == [0, 1, 2, 2]
    assert outs[6].at(0).tolist() == [0, 1, 2.5, 2.5]
    assert outs[7].at(0).tolist() == [0, 3, 3, 3]


def test_clamp_of_wide_unsigned_gives_int64() -> None:
    (out,) = run_graph(lambda x: (fmath.clamp(x, 0, 2),), [np.array([0, 1, 5], np.uint32)])
    assert out.dtype == types.INT64
    assert out.at(0).tolist() == [0, 1, 2]


def test_a_data_node_is_required() -> None:
    with pytest.raises(TypeError, match=r"feedline.math.sqrt: at least one argument.*\(int\)"):
        fmath.sqrt(4)
    with pytest.raises(TypeError, match=r"feedline.math.clamp.*\(float, int, int\)"):
        fmath.clamp(1.5, 0, 2)


def test_errors_surface_with_the_operator_name() -> None:
    with pytest.raises(
        (TypeError, OperatorError), match=r"'math.sqrt' \(sqrt\) with input types \(BOOL\)"
    ):
        run_graph(lambda x: fmath.sqrt(x > 1), [np.array([1, 2], np.int32)])
