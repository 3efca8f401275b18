"""The parser of the condition language (module path as upstream)."""

from feedline.plugins.structured.conditions import Parser

__all__ = ["Parser"]
