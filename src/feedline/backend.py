"""``feedline.backend``: the tensor types of DALI's ``nvidia.dali.backend``.

The same classes as :mod:`feedline.tensors`: ``TensorCPU``, ``TensorListCPU``, ``TensorGPU``
and ``TensorListGPU`` (CuPy is imported on first use of a GPU type, never by this module). DALI's
native library functions (memory pools, CUDA queries) have no counterpart.
"""

from feedline.tensors import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]

__cuda_version__ = 0
"""DALI's CUDA toolkit version (``major * 1000 + minor * 10``) its library was built with;
0 here: feedline is not built against CUDA (its GPU path uses CuPy's)."""
