"""``feedline.backend``: the tensor types of DALI's ``nvidia.dali.backend``.

The same classes as :mod:`feedline.tensors`: ``TensorCPU``, ``TensorListCPU``, ``TensorGPU``
and ``TensorListGPU`` (CuPy is imported on first use of a GPU type, never by this module). DALI's
native library functions (memory pools, CUDA queries) have no counterpart, except
:func:`GetNvjpegVersion`, which DALI's programs query to choose a code path.
"""

from feedline.tensors import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["GetNvjpegVersion", "TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]

__cuda_version__ = 0
"""DALI's CUDA toolkit version (``major * 1000 + minor * 10``) its library was built with;
0 here: feedline is not built against CUDA (its GPU path uses CuPy's)."""


def GetNvjpegVersion() -> int:
    """The version of nvJPEG linked in: -1, as DALI 2.x answers (DALI no longer links nvJPEG
    and decodes through nvImageCodec; feedline does not link it either).

    Returns:
        -1.
    """
    return -1
