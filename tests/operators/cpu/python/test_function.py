"""``python_function`` (parallel per sample, batch mode, outputs, errors) and ``@operator``."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

import numpy as np
import pytest

from feedline import fn, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, get_registry
from feedline.core.schema import REQUIRED
from feedline.operators.cpu.python.function import PythonOperator, operator
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes

DATA = [np.full((2, 3), i, np.int32) for i in range(6)]
run = functools.partial(run_pipeline, batch_size=6, num_threads=3)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def data() -> Any:
    return fn.external_source(source=lambda: DATA, layout="HW")


def test_per_sample_function_runs_in_parallel_on_the_pool() -> None:
    threads: set[int] = set()
    barrier = threading.Barrier(3, timeout=5)

    def slow_double(x: np.ndarray) -> np.ndarray:
        threads.add(threading.get_ident())
        barrier.wait()
        time.sleep(0.01)
        return x * 2

    (out,) = run(lambda: fn.python_function(data(), function=slow_double, output_layouts="HW"))[0]
    assert len(threads) == 3, "three samples must run at the same time on three threads"
    assert out.layout() == "HW"
    for i in range(6):
        np.testing.assert_array_equal(out.at(i), DATA[i] * 2)


def test_multiple_outputs_batch_mode_and_side_effects() -> None:
    seen: list[int] = []

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x.sum(), x[0].astype(np.float32)

    def batch_fn(xs: list[np.ndarray], ys: list[np.ndarray]) -> np.ndarray:
        return np.stack([x + y for x, y in zip(xs, ys, strict=True)])

    def define() -> Any:
        a, b = data(), data()
        total, row = fn.python_function(a, function=split, num_outputs=2)
        both = fn.python_function(a, b, function=batch_fn, batch_processing=True)
        fn.python_function(a, function=lambda x: seen.append(int(x[0, 0])), num_outputs=0)
        return total, row, both

    total, row, both = run(define)[0]
    assert sorted(seen) == list(range(6)), "num_outputs=0 functions are never pruned"
    for i in range(6):
        assert total.at(i).shape == (), "a scalar result stays a 0-D sample, as in DALI"
        assert total.at(i) == 6 * i and row.at(i).dtype == np.float32
        np.testing.assert_array_equal(both.at(i), DATA[i] * 2)


def test_inputs_are_writable_copies_other_consumers_never_see_written() -> None:
    def mutate(x: np.ndarray) -> np.ndarray:
        x += 1
        return x

    def mutate_batch(xs: list[np.ndarray]) -> list[np.ndarray]:
        for x in xs:
            x *= 3
        return xs

    def define():
        a = data()
        return (
            a,
            fn.python_function(a, function=mutate),
            fn.python_function(a, function=mutate_batch, batch_processing=True),
        )

    original, bumped, tripled = run(define)[0]
    for i in range(6):
        np.testing.assert_array_equal(original.at(i), DATA[i])
        np.testing.assert_array_equal(bumped.at(i), DATA[i] + 1)
        np.testing.assert_array_equal(tripled.at(i), DATA[i] * 3)


def test_errors_name_the_function() -> None:
    def wrong_count(x: np.ndarray) -> np.ndarray:
        return x

    cases = [
        (dict(function=wrong_count, num_outputs=2), r"wrong_count.*must be a tuple, got: ndarray"),
        (dict(function=lambda x: [x, x], num_outputs=2), r"must be a tuple, got: list"),
        (dict(function=lambda x: (x, x, x), num_outputs=2), r"got 3, expected 2"),
        (dict(function=lambda x: "text"), r"output 0 has unsupported type"),
        (dict(function=lambda x: x, output_layouts=["HWC"]), r"layout 'HWC' has 3"),
        (
            dict(function=lambda x: [x], batch_processing=True),
            r"output 0 has 1 samples, expected 6",
        ),
    ]
    for kwargs, message in cases:
        with pytest.raises(OperatorError, match=message):
            run(lambda kwargs=kwargs: fn.python_function(data(), **kwargs))


def test_one_layout_string_names_every_output_a_list_names_them_in_turn() -> None:
    def define() -> Any:
        same = fn.python_function(
            data(), function=lambda x: (x, x + 1), num_outputs=2, output_layouts="AB"
        )
        listed = fn.python_function(
            data(), function=lambda x: (x, x + 1), num_outputs=2, output_layouts=["CD"]
        )
        return (*same, *listed)

    outputs = run(define)[0]
    assert [out.layout() for out in outputs] == ["AB", "AB", "CD", ""]


def test_python_function_arguments_are_validated() -> None:
    with pytest.raises(TypeError, match="missing required argument 'function'"):
        run(lambda: fn.python_function(data()))
    with pytest.raises(TypeError, match="argument 'function' expects callable"):
        run(lambda: fn.python_function(data(), function=3))
    with pytest.raises(TypeError, match="output_layouts' expects layout str or list of layout"):
        run(lambda: fn.python_function(data(), function=abs, output_layouts=3))
    with pytest.raises(RuntimeError, match=r"output_layouts`` \(=2\) is greater than the number"):
        run(lambda: fn.python_function(data(), function=abs, output_layouts=["", ""]))
    schema = get_registry().operators["python_function"].schema
    assert schema.no_prune and not schema.serializable


def test_decorated_operator_end_to_end() -> None:

    @operator(name="tests.shift_noise", per_sample=("shift",), output_layouts="HW")
    def shift_noise(
        image: np.ndarray,
        mask: np.ndarray | None = None,
        *,
        shift: float = 1.0,
        scale: tuple[float, ...] = (1.0,),
        dtype: types.DataType = types.FLOAT,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Shift, scale and add a little noise.

        Args:
            image: the input image.
            mask: optional mask multiplied in.
            shift: value added to every pixel.
            scale: multiplier.
            dtype: output type.
        """
        out = (image + shift) * scale[0] + rng.uniform(0, 1e-3, image.shape)
        if mask is not None:
            out = out * mask
        return out.astype(types.to_numpy_dtype(dtype))

    assert isinstance(shift_noise, PythonOperator)
    args = shift_noise.schema.arg_map
    assert [a.name for a in shift_noise.schema.args] == ["shift", "scale", "dtype"]
    assert args["shift"].kind == "float" and args["shift"].tensor
    assert args["scale"].kind == "float_vec" and args["scale"].default == (1.0,)
    assert args["dtype"].kind == "dtype"
    assert "value added to every pixel" in args["shift"].doc
    assert shift_noise.schema.inputs[1].optional
    assert "Shift, scale and add a little noise." in fn.tests.shift_noise.__doc__
    shifts = [np.array(float(i), np.float32) for i in range(6)]

    def define() -> Any:
        shift = fn.external_source(source=lambda: shifts)
        return (
            shift_noise(data(), shift=shift, scale=[2.0]),
            fn.tests.shift_noise(data(), data(), dtype=types.FLOAT64),
        )

    first = run(define, num_threads=1, iterations=2)
    again = run(define, num_threads=4, iterations=2)
    for (out, masked), (out2, masked2) in zip(first, again, strict=True):
        assert out.layout() == "HW" and masked.dtype == types.FLOAT64
        for i in range(6):
            np.testing.assert_allclose(out.at(i), (DATA[i] + i) * 2.0, atol=3e-3)
            np.testing.assert_allclose(masked.at(i), (DATA[i] + 1.0) * DATA[i], atol=1e-2)
            np.testing.assert_array_equal(out.at(i), out2.at(i))
            np.testing.assert_array_equal(masked.at(i), masked2.at(i))


def test_decorated_batch_operator() -> None:

    @operator(name="tests.batch_sum", batch=True, num_outputs=2, per_sample=("offset",))
    def batch_sum(
        images: list[np.ndarray], *, offset: int = 0, rng: list[np.random.Generator]
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Sum of each image plus a per-sample offset, and a random draw per sample."""
        sums = [np.asarray(x.sum() + o) for x, o in zip(images, offset, strict=True)]
        return sums, np.array([g.integers(100) for g in rng])

    offsets = [np.array(10 * i, np.int32) for i in range(6)]
    sums, draws = run(lambda: batch_sum(data(), offset=fn.external_source(source=lambda: offsets)))[
        0
    ]
    for i in range(6):
        assert sums.at(i) == 6 * i + 10 * i
        assert 0 <= draws.at(i) < 100


def test_decorator_rejects_unusable_signatures() -> None:
    with pytest.raises(TypeError, match=r"\*\*extra is not supported"):
        operator(name="tests.bad1")(lambda image, **extra: image)
    with pytest.raises(TypeError, match="input 'image' may only default to None"):
        operator(name="tests.bad2")(lambda image=3: image)

    def bad_default(image: np.ndarray, *, size: int = "big") -> np.ndarray:  # type: ignore[assignment]
        return image

    with pytest.raises(TypeError, match="default of 'size' does not fit"):
        operator(name="tests.bad3")(bad_default)
    with pytest.raises(TypeError, match="per_sample names unknown keyword arguments"):
        operator(name="tests.bad4", per_sample=("nope",))(lambda image: image)

    def uses_sample(images: list[np.ndarray], *, sample: Any) -> list[np.ndarray]:
        return images

    with pytest.raises(TypeError, match="'sample' is only available per sample"):
        operator(name="tests.bad5", batch=True)(uses_sample)

    def required(image: np.ndarray, *, level: int) -> np.ndarray:
        return image

    op = operator(name="tests.required")(required)
    assert op.schema.arg_map["level"].default is REQUIRED
    with pytest.raises(ValueError, match="'tests.required' is registered by '@operator"):
        operator(name="tests.required")(required)
    assert operator(name="tests.required", override=True)(required).schema.name
