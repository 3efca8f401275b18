"""The condition language: lexer, parser and syntax tree (every public name of the structured
plugin's ``conditions`` module, which is the one implementation)."""

from feedline.plugins.structured import conditions as _conditions
from feedline.plugins.structured.conditions import *  # noqa: F403

__all__ = list(_conditions.__all__)
