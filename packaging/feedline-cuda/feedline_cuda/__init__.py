"""feedline's GPU kernels, prebuilt: the ``feedline.plugins`` entry point of this distribution.

The GPU plugin (``feedline.operators.gpu.build``) looks for modules registered under entry point
names starting with ``gpu-kernels`` and opens :data:`LIBRARY` when :data:`BUILD`'s ``digest``
matches its kernel sources. This module registers no operators or kernels of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["BUILD", "LIBRARY"]

_HERE = Path(__file__).resolve().parent
#: The compiled kernels (nvcc ``-shared``, CUDA runtime linked statically).
LIBRARY = _HERE / "feedline_gpu.so"
#: How it was built: ``digest`` (sha256 of the kernel sources), ``cuda_major``, ``archs``
#: (SASS compute capabilities), ``ptx`` (the PTX's), ``nvcc`` (its version line).
BUILD: dict = json.loads((_HERE / "build.json").read_text(encoding="utf-8"))
