"""Variable batch size: the batch an external source gives sets the iteration's size, which
every other operator of the iteration (constants and generators included) follows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import Pipeline, fn


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_every_operator_follows_the_fed_batch_size(sizes: list[int]) -> None:
    batches = [np.full((size, 3), size, np.float32) for size in sizes]
    pipe = Pipeline(batch_size=6, num_threads=2, device_id=None)
    with pipe:
        ones = fn.full(np.array([1.0], np.float32), shape=(1,))  # defined before the source
        zeros = fn.zeros(shape=(2,))
        data = fn.external_source(source=batches, cycle=False)
        pipe.set_outputs(data * ones, zeros, fn.reductions.sum(data))
    for size in sizes:
        scaled, zero, total = pipe.run()
        assert len(scaled) == len(zero) == len(total) == size
        np.testing.assert_array_equal(scaled.as_array(), np.full((size, 3), size))
        np.testing.assert_array_equal(total.as_array(), np.full(size, 3 * size))
    pipe.close()
