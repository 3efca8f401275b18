"""``feedline.backend_impl``: the path of DALI's compiled ``nvidia.dali.backend_impl`` module,
which DALI code imports the tensor types from; the same classes as :mod:`feedline.backend`."""

from feedline.backend import (
    GetNvjpegVersion,
    TensorCPU,
    TensorGPU,
    TensorListCPU,
    TensorListGPU,
)

__all__ = ["GetNvjpegVersion", "TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]
