"""Built-in operator plugins: ``cpu`` (NumPy/Pillow kernels) and ``gpu`` (CUDA kernels)."""
