"""DALI's internal conditional operators called directly (``fn._conditional.*``), with Python
numbers in the arithmetic of a branch: they fit the branch's batch, as DALI's constants do."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def, types


def run(graph, batch_size: int = 6, seed: int = 3) -> list[np.ndarray]:
    pipe = pipeline_def(graph, batch_size=batch_size, num_threads=1, device_id=None, seed=seed)()
    outputs = [out.as_array() for out in pipe.run()]
    pipe.close()
    return outputs


def test_a_number_added_to_one_branch_fits_its_batch() -> None:
    def graph():
        value = fn.random.uniform(range=[0, 1], shape=(2,))
        predicate = fn.random.coin_flip(dtype=types.BOOL)
        taken, other = fn._conditional.split(value, predicate=predicate)
        merged = fn._conditional.merge(taken * 2 + 10, other - 1.5, predicate=predicate)
        return merged, value, predicate, fn._conditional.not_(predicate)

    merged, value, predicate, negated = run(graph)
    expected = np.where(predicate[:, None], value * 2 + 10, value - 1.5)
    np.testing.assert_allclose(merged, expected, rtol=1e-6)
    np.testing.assert_array_equal(negated, ~predicate)


def test_a_branch_of_constants_fits_too() -> None:
    def graph():
        value = types.Constant(np.array([42]), device="cpu")
        predicate = fn.random.coin_flip(dtype=types.BOOL)
        taken, other = fn._conditional.split(value, predicate=predicate)
        return fn._conditional.merge(taken + 10, other, predicate=predicate), predicate

    merged, predicate = run(graph)
    np.testing.assert_array_equal(merged[:, 0], np.where(predicate, 52, 42))


def test_batches_of_different_sizes_are_still_refused() -> None:
    def graph():
        value = fn.random.uniform(range=[0, 1])
        predicate = fn.random.coin_flip(dtype=types.BOOL, probability=0.5)
        taken, _ = fn._conditional.split(value, predicate=predicate)
        return taken + fn.random.uniform(range=[0, 1])  # a full batch of varying values

    with pytest.raises(RuntimeError, match=r"input 1 has 8 samples but input 0 has"):
        run(graph, batch_size=8, seed=11)
