"""The structured output iterator (module path as upstream)."""

from feedline.plugins.structured.iterator import DALIStructuredOutputIterator

__all__ = ["DALIStructuredOutputIterator"]
