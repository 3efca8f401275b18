"""Framework iterators (PyTorch, JAX, NumPy) and other built-in plugins."""
