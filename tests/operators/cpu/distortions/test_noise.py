"""``noise.shot`` and ``noise.salt_and_pepper``: their distributions and value rules."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from tests.operators.cpu.image_samples import run_op


def test_shot_noise_is_poisson_counts_of_factor_sized_events() -> None:
    data = np.full((200, 200), 40.0, np.float32)
    (out,), _ = run_op("noise.shot", [data], "HW", factor=4.0)
    counts = out / 4.0
    np.testing.assert_array_equal(counts, np.round(counts))  # whole numbers of events
    assert abs(counts.mean() - 10) < 0.1 and abs(counts.var() - 10) < 0.5  # Poisson(10)
    (same,), _ = run_op("noise.shot", [data], "HW", factor=0.0)
    np.testing.assert_array_equal(same, data)
    (negative,), _ = run_op("noise.shot", [-data], "HW", factor=1.0)
    assert not negative.any()


def test_shot_noise_on_integers_saturates() -> None:
    data = np.full((50, 50), 250, np.uint8)
    (out,), _ = run_op("noise.shot", [data], "HW", factor=30.0)
    assert out.dtype == np.uint8 and out.max() == 255 and (out % 30 == 0).mean() > 0.3


def test_salt_and_pepper_fractions_and_defaults() -> None:
    data = np.full((100, 100, 3), 128, np.uint8)
    (out,), _ = run_op("noise.salt_and_pepper", [data], "HWC", prob=0.2, salt_vs_pepper=0.25)
    assert set(np.unique(out)) <= {0, 128, 255}
    pixels = out[:, :, 0]
    assert abs((pixels != 128).mean() - 0.2) < 0.02
    assert abs((pixels == 255).mean() - 0.05) < 0.01
    np.testing.assert_array_equal(out[:, :, 1], pixels)  # one draw per pixel
    (per_channel,), _ = run_op("noise.salt_and_pepper", [data], "HWC", prob=0.5, per_channel=True)
    assert not np.array_equal(per_channel[:, :, 0], per_channel[:, :, 1])


def test_salt_and_pepper_values_for_floats_and_given_values() -> None:
    data = np.zeros((60, 60), np.float32)
    (out,), _ = run_op("noise.salt_and_pepper", [data], "HW", prob=1.0)
    assert set(np.unique(out)) == {-1.0, 1.0}
    (custom,), _ = run_op("noise.salt_and_pepper", [data], "HW", prob=1.0, salt_vs_pepper=1.0,
                          salt_val=0.25, pepper_val=-7.0)  # fmt: skip
    assert set(np.unique(custom)) == {0.25}
    with pytest.raises(OperatorError, match="prob"):
        run_op("noise.salt_and_pepper", [data], "HW", prob=2.0)
