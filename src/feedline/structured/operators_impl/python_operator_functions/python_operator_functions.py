"""The array functions for ``fn.python_function`` (module path as upstream)."""

from feedline.plugins.structured import array_functions as _array_functions
from feedline.plugins.structured.array_functions import *  # noqa: F403

__all__ = list(_array_functions.__all__)
