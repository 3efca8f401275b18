"""The graph functions (module path as upstream)."""

from feedline.plugins.structured import graph_functions as _graph_functions
from feedline.plugins.structured.graph_functions import *  # noqa: F403

__all__ = list(_graph_functions.__all__)
