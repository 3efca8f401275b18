"""``feedline.backend_impl``: the path of DALI's compiled ``nvidia.dali.backend_impl`` module,
which DALI code imports the tensor types from; the same classes as :mod:`feedline.backend`.
Its ``types`` submodule holds the type enums and constants, as DALI's does."""

from feedline.backend import (
    GetNvjpegVersion,
    TensorCPU,
    TensorGPU,
    TensorListCPU,
    TensorListGPU,
)
from feedline.backend_impl import types

__all__ = ["GetNvjpegVersion", "TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU", "types"]
