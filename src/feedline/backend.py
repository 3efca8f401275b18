"""``feedline.backend``: the tensor types of DALI's ``nvidia.dali.backend``.

The same classes as :mod:`feedline.tensors`: ``TensorCPU``, ``TensorListCPU``, ``TensorGPU``
and ``TensorListGPU`` (CuPy is imported on first use of a GPU type, never by this module). DALI's
native library functions (memory pools, CUDA queries) have no counterpart, except
``__cuda_version__``: the CUDA runtime version GPU work would use (CuPy's, as DALI numbers it:
``major * 1000 + minor * 10``), 0 without CuPy or a CUDA runtime; it is looked up when read.
"""

from typing import Any

from feedline.tensors import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]


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
