"""The tokenizer of the condition language (module path as upstream)."""

from feedline.plugins.structured.conditions import Lexer, Token, TokenType

__all__ = ["Lexer", "Token", "TokenType"]
