"""``example.posterize``: keep the top ``bits`` bits of every 8-bit value (NumPy CPU kernel;
the GPU kernel is in :mod:`feedline_example.gpu`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.schema import ArgSpec, InputSpec, OpSchema

POSTERIZE_SCHEMA = OpSchema(
    "example.posterize",
    "Reduces 8-bit images to 2**bits levels per channel.\n\n"
    "Each value keeps its top ``bits`` bits; the others become zero. Any layout; the output "
    "has the input's shape, type and layout.",
    inputs=(InputSpec("input", "Images (or any data) of type uint8."),),
    args=(ArgSpec("bits", "int", 4, "Bits kept per value, 1 to 8.", tensor=True),),
)


def check_input(dtype: Any) -> None:
    """Raise TypeError unless ``dtype`` is ``uint8``."""
    if np.dtype(dtype) != np.uint8:
        raise TypeError(f"example.posterize: expected uint8 data, got {np.dtype(dtype)}")


def check_bits(bits: int) -> int:
    """The mask keeping the top ``bits`` bits.

    Raises:
        ValueError: ``bits`` is outside 1..8.
    """
    if not 1 <= bits <= 8:
        raise ValueError(f"example.posterize: bits must be in 1..8, got {bits}")
    return (0xFF << (8 - bits)) & 0xFF


def posterize(image: np.ndarray, bits: int) -> np.ndarray:
    """The top ``bits`` bits of every value of a ``uint8`` array.

    Raises:
        TypeError: the array is not ``uint8``.
        ValueError: ``bits`` is outside 1..8.
    """
    check_input(image.dtype)
    return image & np.uint8(check_bits(bits))


class PosterizeKernel(SampleKernel):
    """The CPU kernel: one sample at a time, on the pipeline's thread pool."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Posterize one sample (``bits`` may differ per sample)."""
        return posterize(inputs[0], int(np.asarray(args["bits"]).reshape(-1)[0]))
