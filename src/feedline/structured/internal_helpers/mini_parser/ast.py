"""The syntax tree of the condition language (module path as upstream)."""

from feedline.plugins.structured.conditions import (
    AST,
    And,
    Assignment,
    Comparison,
    Literal,
    Not,
    Or,
    UnaryMinus,
    Variable,
)

__all__ = [
    "AST",
    "And",
    "Assignment",
    "Comparison",
    "Literal",
    "Not",
    "Or",
    "UnaryMinus",
    "Variable",
]
