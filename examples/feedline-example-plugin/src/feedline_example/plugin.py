"""The plugin module named by the ``feedline.plugins`` entry point: one function per hook.

Kernels and codecs are named by ``"module:attribute"`` strings, so nothing here imports them:
feedline imports a kernel only when a pipeline uses the operator.
"""

from __future__ import annotations

from typing import Any

from feedline.core.hookspecs import hookimpl

from feedline_example.csv_reader import CSV_SCHEMA
from feedline_example.farbfeld import MAGIC
from feedline_example.posterize import POSTERIZE_SCHEMA


@hookimpl
def feedline_register_operators(registry: Any) -> None:
    """Register the operator and the reader with their CPU kernels."""
    registry.add_operator(POSTERIZE_SCHEMA, {"cpu": "feedline_example.posterize:PosterizeKernel"})
    registry.add_operator(CSV_SCHEMA, {"cpu": "feedline_example.csv_reader:CsvReader"})


@hookimpl
def feedline_register_kernels(registry: Any) -> None:
    """Add the GPU kernel (a separate hook: it could as well extend another plugin's operator)."""
    registry.add_kernel("example.posterize", "gpu", "feedline_example.gpu:PosterizeGpuKernel")


@hookimpl
def feedline_register_codecs(registry: Any) -> None:
    """Claim files starting with ``farbfeld``."""
    registry.add_codec("farbfeld", (MAGIC,), "feedline_example.farbfeld:FarbfeldCodec")
