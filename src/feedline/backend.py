"""``feedline.backend``: the tensor types of DALI's ``nvidia.dali.backend``.

The same classes as :mod:`feedline.tensors`: ``TensorCPU``, ``TensorListCPU``, ``TensorGPU``
and ``TensorListGPU`` (CuPy is imported on first use of a GPU type, never by this module). DALI's
native library functions (memory pools, CUDA queries) have no counterpart, except
:func:`GetNvjpegVersion`, which DALI's programs query to choose a code path, and
``__cuda_version__``: the CUDA runtime version GPU work would use (CuPy's, as DALI numbers it:
``major * 1000 + minor * 10``), 0 without CuPy or a CUDA runtime; it is looked up when read.
"""

from typing import Any

from feedline.tensors import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["GetNvjpegVersion", "TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]


def GetNvjpegVersion() -> int:
    """The version of nvJPEG linked in: -1, as DALI 2.x answers (DALI no longer links nvJPEG
    and decodes through nvImageCodec; feedline does not link it either).

    Returns:
        -1.
    """
    return -1


def _cuda_runtime_version() -> int:
    try:
        import cupy
    except ImportError:
        return 0
    try:
        return int(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:  # no CUDA runtime here: CuPy raises its own error types
        return 0


def __getattr__(name: str) -> Any:
    if name == "__cuda_version__":
        return _cuda_runtime_version()
    raise AttributeError(f"module 'feedline.backend' has no attribute {name!r}")
