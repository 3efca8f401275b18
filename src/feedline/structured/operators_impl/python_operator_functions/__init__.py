"""Array functions for ``fn.python_function`` under upstream's names (every public name of the
structured plugin's ``array_functions`` module, which is the one implementation)."""

from feedline.plugins.structured import array_functions as _array_functions
from feedline.plugins.structured.array_functions import *  # noqa: F403

__all__ = list(_array_functions.__all__)
