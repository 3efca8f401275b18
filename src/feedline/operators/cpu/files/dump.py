"""``dump_image``: each sample written as an ASCII Netpbm image, the batch passed through.

DALI's format: a ``P3`` (3 channels) or ``P2`` (1 channel) header with the width, height and
255, then one text line per image row, every value followed by a space. Sample ``i`` is written
to ``{i}-{suffix}-0.ppm`` in the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["DumpImageKernel", "dump_file_name", "netpbm_text"]

_MAGIC = {1: "P2", 3: "P3"}


def dump_file_name(index: int, suffix: str) -> str:
    """DALI's file name for sample ``index``."""
    return f"{index}-{suffix}-0.ppm"


def netpbm_text(image: np.ndarray) -> str:
    """The ASCII Netpbm text of a uint8 HWC image with 1 or 3 channels."""
    height, width, channels = image.shape
    header = f"{_MAGIC[channels]}\n{width} {height}\n255\n"
    rows = image.reshape(height, width * channels)
    body = "".join(" ".join(map(str, row.tolist())) + " \n" for row in rows)
    return header + body


class DumpImageKernel(SampleKernel):
    """Per-sample ``dump_image``."""

    def setup(self) -> None:
        """Refuse an ``input_layout`` other than HWC, as DALI does when building."""
        layout = self.args["input_layout"]
        if layout != "HWC":
            raise ValueError(f"dump_image: input_layout {layout!r} is not supported; only HWC is")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input's layout."""
        return (input_layouts[0] if input_layouts else "",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Write one image and return it unchanged."""
        (image,) = inputs
        if image.ndim != 3:
            raise ValueError(
                f"dump_image: images must have three dimensions (HWC), got shape {image.shape}"
            )
        if image.shape[2] not in _MAGIC:
            raise ValueError(
                "dump_image: only 3-channel and grey (1-channel) images are supported, got "
                f"{image.shape[2]} channels"
            )
        if image.dtype != np.uint8:
            raise TypeError(f"dump_image: images must be uint8, got {image.dtype}")
        path = os.path.join(os.getcwd(), dump_file_name(sample.index, args["suffix"]))
        try:
            with open(path, "w", encoding="ascii") as handle:
                handle.write(netpbm_text(image))
        except OSError as exc:
            raise OSError(f"dump_image: cannot write {path!r}: {exc.strerror or exc}") from exc
        return image
