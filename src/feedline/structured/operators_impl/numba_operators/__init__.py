"""Graph functions under upstream's names (every public name of the structured plugin's
``graph_functions`` module, which is the one implementation; Numba is not needed)."""

from feedline.plugins.structured import graph_functions as _graph_functions
from feedline.plugins.structured.graph_functions import *  # noqa: F403

__all__ = list(_graph_functions.__all__)
