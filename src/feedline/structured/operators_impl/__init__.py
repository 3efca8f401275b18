"""Operator functions for use inside pipelines (module path as upstream).

``numba_operators`` holds graph functions (data nodes in, data nodes out); feedline builds them
from NumPy kernels, so Numba is not needed. ``python_operator_functions`` holds array functions
for ``fn.python_function``.
"""

from feedline.structured.operators_impl import numba_operators, python_operator_functions

__all__ = ["numba_operators", "python_operator_functions"]
