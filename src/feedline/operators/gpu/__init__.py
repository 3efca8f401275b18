"""GPU operators (CUDA kernels compiled with nvcc and called through cffi)."""
