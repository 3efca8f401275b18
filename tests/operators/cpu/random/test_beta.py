"""``random.beta``: range, moments, types, per-sample parameters and reproducibility."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def _samples(tl: Any) -> list[np.ndarray]:
    return [np.array(tl.at(i)) for i in range(len(tl))]


def test_default_is_one_float32_per_sample() -> None:
    ((out,),) = run_pipeline(lambda: fn.random.beta())
    values = _samples(out)
    assert all(v.shape == () and v.dtype == np.float32 for v in values)
    assert all(0.0 <= v <= 1.0 for v in values)


def test_moments_follow_alpha_and_beta() -> None:
    ((out,),) = run_pipeline(
        lambda: fn.random.beta(alpha=2.0, beta=5.0, shape=[20000], dtype=types.FLOAT64),
        batch_size=1,
    )
    values = _samples(out)[0]
    assert values.dtype == np.float64
    assert values.mean() == pytest.approx(2 / 7, abs=0.01)
    assert values.var() == pytest.approx(10 / (49 * 8), abs=0.003)


@settings(max_examples=10, deadline=None)
@given(st.floats(0.1, 10.0), st.floats(0.1, 10.0))
def test_values_stay_in_the_unit_interval(alpha: float, beta: float) -> None:
    ((out,),) = run_pipeline(lambda: fn.random.beta(alpha=alpha, beta=beta, shape=[50]))
    values = np.concatenate(_samples(out))
    assert np.all((values >= 0.0) & (values <= 1.0))


def test_per_sample_parameters_and_shape_like() -> None:
    def graph() -> Any:
        alpha = fn.external_source(source=lambda: [np.float32(a) for a in (0.2, 50.0)], batch=True)
        like = fn.external_source(source=lambda: [np.zeros((3, 400))] * 2, batch=True)
        return fn.random.beta(like, alpha=alpha, beta=0.2)

    ((out,),) = run_pipeline(graph, batch_size=2)
    low, high = _samples(out)
    assert low.shape == high.shape == (3, 400)
    assert low.mean() < 0.7 < high.mean()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dtype": types.INT32}, "Data type int32 is not supported"),
        ({"alpha": 0.0}, "The `alpha` must be a positive float32"),
        ({"alpha": 1e100}, "The `alpha` must be a positive float32"),
        ({"beta": -1.0}, "The `beta` must be a positive float32"),
    ],
)
def test_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_pipeline(lambda: fn.random.beta(**kwargs))


def test_check_operator() -> None:
    assert "threads" in check_operator("random.beta", OperatorExample(args={"shape": [4]}))
