"""Constants as graph nodes and label mapping (module path as upstream)."""

from feedline.plugins.structured.helpers import get_as_data_node, get_mapped

__all__ = ["get_as_data_node", "get_mapped"]
