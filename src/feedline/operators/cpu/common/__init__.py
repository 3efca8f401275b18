"""What several CPU operator families share: schema parts and registration
(:mod:`~feedline.operators.cpu.common.schemas`, light) and sample-array helpers for kernels
(:mod:`~feedline.operators.cpu.common.tensors`, NumPy)."""
