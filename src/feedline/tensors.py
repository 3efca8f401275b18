"""``feedline.tensors``: DALI's ``nvidia.dali.tensors`` (the tensor and batch types).

``TensorCPU`` and ``TensorListCPU`` are NumPy-backed; ``TensorGPU`` and ``TensorListGPU`` wrap
CuPy arrays, which they import on first use (importing this module never imports CuPy).
"""

from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.core.tensor_gpu import TensorGPU, TensorListGPU

__all__ = ["TensorCPU", "TensorGPU", "TensorListCPU", "TensorListGPU"]
