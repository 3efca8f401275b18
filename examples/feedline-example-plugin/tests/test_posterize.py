"""``example.posterize`` passes feedline's operator checks and computes what it says."""

from __future__ import annotations

import numpy as np
import pytest
from feedline.testing import OperatorExample, check_operator, run_operator

from feedline_example.posterize import posterize

RNG = np.random.default_rng(0)
IMAGES = [RNG.integers(0, 256, (8 + i, 10, 3), dtype=np.uint8) for i in range(4)]


def test_passes_check_operator() -> None:
    done = check_operator("example.posterize", OperatorExample([IMAGES], ["HWC"], {"bits": 3}))
    assert {"schema", "docs", "outputs", "threads", "seed"} <= set(done)


@pytest.mark.parametrize("bits", range(1, 9))
def test_keeps_the_top_bits(bits: int) -> None:
    values = np.arange(256, dtype=np.uint8)
    out = posterize(values, bits)
    assert len(np.unique(out)) == 2**bits
    assert np.all(out <= values) and np.all(values - out < 2 ** (8 - bits))


def test_per_sample_bits() -> None:
    bits = [np.array([b], np.int32) for b in (1, 2, 7, 8)]
    ((samples, layout),) = run_operator(
        "example.posterize", [IMAGES], ["HWC"], arg_inputs={"bits": bits}, iterations=1
    )[0]
    assert layout == "HWC"
    for image, b, out in zip(IMAGES, (1, 2, 7, 8), samples, strict=True):
        np.testing.assert_array_equal(out, posterize(image, b))


def test_bad_input_is_named() -> None:
    with pytest.raises(TypeError, match="expected uint8 data, got float32"):
        posterize(np.zeros(3, np.float32), 4)
    with pytest.raises(ValueError, match=r"bits must be in 1\.\.8, got 9"):
        posterize(np.zeros(3, np.uint8), 9)
