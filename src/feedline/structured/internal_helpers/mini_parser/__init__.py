"""The condition language: lexer, parser and syntax tree."""

from feedline.plugins.structured.conditions import (
    AST,
    And,
    Assignment,
    Comparison,
    Lexer,
    Literal,
    Not,
    Or,
    Parser,
    Token,
    TokenType,
    UnaryMinus,
    Variable,
)

__all__ = [
    "AST",
    "And",
    "Assignment",
    "Comparison",
    "Lexer",
    "Literal",
    "Not",
    "Or",
    "Parser",
    "Token",
    "TokenType",
    "UnaryMinus",
    "Variable",
]
