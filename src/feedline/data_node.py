"""``feedline.data_node``: DALI's ``nvidia.dali.data_node`` (``DataNode`` and ``newaxis``)."""

from feedline.core.graph import DataNode
from feedline.core.graph.subscript import newaxis

__all__ = ["DataNode", "newaxis"]
