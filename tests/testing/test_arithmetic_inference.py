"""The arithmetic operators pass check_operator, and the result type ``infer_dtype`` gives
without running anything is the type of the outputs they really produce."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from feedline.core.plugins import get_registry
from feedline.core.types import from_numpy_dtype, to_numpy_dtype
from feedline.operators.cpu.promotion import infer_dtype
from feedline.testing import OperatorExample, check_operator, run_operator

OPERATORS = sorted(name for name in get_registry().operators if name.startswith("arithmetic."))
DTYPES = (np.uint8, np.int32, np.float32)


def _samples(dtype: type, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 6, (3, 2 + i)).astype(dtype) for i in range(3)]


@pytest.mark.parametrize("name", OPERATORS)
def test_inferred_type_is_the_real_type(name: str) -> None:
    arity = get_registry().operators[name].schema.min_inputs
    checked = 0
    for dtypes in itertools.product(DTYPES, repeat=arity):
        try:
            expected = infer_dtype(name, [from_numpy_dtype(np.dtype(d)) for d in dtypes])
        except TypeError:
            continue  # a combination the operator refuses at build time
        inputs = [_samples(dtype, seed) for seed, dtype in enumerate(dtypes)]
        if checked == 0:
            check_operator(name, OperatorExample(inputs))
        ((samples, _),) = run_operator(name, inputs, iterations=1)[0]
        assert all(s.dtype == to_numpy_dtype(expected) for s in samples), (name, dtypes)
        checked += 1
    assert checked
