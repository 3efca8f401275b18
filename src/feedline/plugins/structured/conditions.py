"""A small condition language: ``name = <boolean expression over variables and numbers>``.

Used by the condition-evaluation step. Grammar (``or`` binds weakest, operators associate left)::

    statement  := VARIABLE "=" or_expr END
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := unary [("==" | "!=" | "<" | "<=" | ">" | ">=") unary]
    unary      := "-" unary | VARIABLE | LITERAL | "(" or_expr ")"

:class:`Lexer` turns text into :class:`Token` objects, :class:`Parser` builds the tree of
:class:`AST` nodes; ``str(tree)`` shows the structure with explicit grouping, and
``tree.evaluate(values)`` computes it with comparisons, unary ``-`` and logical
``and``/``or``/``not`` (non-zero is true), so it works on numpy arrays and graph nodes alike.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

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


class TokenType:
    """The kinds of token (string constants)."""

    LITERAL = "literal"
    VARIABLE = "variable"
    ASSIGNMENT = "assignment"
    COMPARISON = "comparison"
    LOGICAL_OR = "logical_or"
    LOGICAL_AND = "logical_and"
    LOGICAL_NOT = "logical_not"
    MINUS = "minus"
    PARENTHESIS_OPEN = "parenthesis_open"
    PARENTHESIS_CLOSE = "parenthesis_close"
    EOL = "end_of_line"


class Token:
    """One token: its kind (a :class:`TokenType` constant) and its text."""

    def __init__(self, type: str, value: str) -> None:
        self.type = type
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and (self.type, self.value) == (other.type, other.value)

    def __hash__(self) -> int:
        return hash((self.type, self.value))

    def __repr__(self) -> str:
        return f"Token({self.type}, {self.value!r})"


_KEYWORDS = {"and": TokenType.LOGICAL_AND, "or": TokenType.LOGICAL_OR, "not": TokenType.LOGICAL_NOT}
_COMPARISONS = ("==", "!=", "<=", ">=", "<", ">")


class Lexer:
    """Splits a statement into tokens; ``next_token()`` ends with an ``EOL`` token (text ``""``)."""

    def __init__(self, input: str) -> None:
        self._text = input
        self._pos = 0

    def next_token(self) -> Token:
        """The next token.

        Raises:
            ValueError: a character that starts no token.
        """
        text = self._text
        while self._pos < len(text) and text[self._pos].isspace():
            self._pos += 1
        if self._pos >= len(text):
            return Token(TokenType.EOL, "")
        start = self._pos
        char = text[start]
        if char.isalpha() or char == "_":
            while self._pos < len(text) and (text[self._pos].isalnum() or text[self._pos] == "_"):
                self._pos += 1
            word = text[start : self._pos]
            return Token(_KEYWORDS.get(word, TokenType.VARIABLE), word)
        if char.isdigit() or char == ".":
            while self._pos < len(text) and (text[self._pos].isdigit() or text[self._pos] == "."):
                self._pos += 1
            return Token(TokenType.LITERAL, text[start : self._pos])
        for symbol in _COMPARISONS:
            if text.startswith(symbol, start):
                self._pos += len(symbol)
                return Token(TokenType.COMPARISON, symbol)
        self._pos += 1
        single = {
            "=": TokenType.ASSIGNMENT,
            "-": TokenType.MINUS,
            "(": TokenType.PARENTHESIS_OPEN,
            ")": TokenType.PARENTHESIS_CLOSE,
        }
        if char in single:
            return Token(single[char], char)
        raise ValueError(f"condition {text!r}: unexpected character {char!r} at position {start}")


def _truth(value: Any) -> Any:
    """A value as a truth value (non-zero), so ``and``/``or`` are logical, never bitwise."""
    return value if isinstance(value, bool) else value != 0


class AST:
    """A node of the syntax tree."""

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        """The node's value, variables looked up in ``values``."""
        raise NotImplementedError


class Literal(AST):
    """A number, kept as written."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __str__(self) -> str:
        return self.value

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        return float(self.value) if any(c in self.value for c in ".eE") else int(self.value)


class Variable(AST):
    """A named value."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"'{self.name}'"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        if self.name not in values:
            raise KeyError(f"condition variable {self.name!r} has no value")
        return values[self.name]


class UnaryMinus(AST):
    """The negation of a value."""

    def __init__(self, value: AST) -> None:
        self.value = value

    def __str__(self) -> str:
        return f"-({self.value})"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        return -self.value.evaluate(values)


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Comparison(AST):
    """Two values compared."""

    def __init__(self, val1: AST, comparison_type: str, val2: AST) -> None:
        self.val1 = val1
        self.comparison_type = comparison_type
        self.val2 = val2

    def __str__(self) -> str:
        return f"({self.val1} {self.comparison_type} {self.val2})"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        compare = _COMPARE[self.comparison_type]
        return compare(self.val1.evaluate(values), self.val2.evaluate(values))


class Or(AST):
    """True where any part is."""

    def __init__(self, *conditions: AST) -> None:
        self.conditions = conditions

    def __str__(self) -> str:
        return "{" + " or ".join(str(c) for c in self.conditions) + "}"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        result = _truth(self.conditions[0].evaluate(values))
        for condition in self.conditions[1:]:
            result = result | _truth(condition.evaluate(values))
        return result


class And(AST):
    """True where every part is."""

    def __init__(self, *conditions: AST) -> None:
        self.conditions = conditions

    def __str__(self) -> str:
        return "{" + " and ".join(str(c) for c in self.conditions) + "}"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        result = _truth(self.conditions[0].evaluate(values))
        for condition in self.conditions[1:]:
            result = result & _truth(condition.evaluate(values))
        return result


class Not(AST):
    """The logical negation of a condition."""

    def __init__(self, condition: AST) -> None:
        self.condition = condition

    def __str__(self) -> str:
        return f"not [{self.condition}]"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        return _truth(self.condition.evaluate(values)) == 0


class Assignment(AST):
    """``variable = expression``."""

    def __init__(self, variable: Variable, expression: AST) -> None:
        self.variable = variable
        self.expression = expression

    def __str__(self) -> str:
        return f"{self.variable} = <{self.expression}>"

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        return self.expression.evaluate(values)


class Parser:
    """Parses one statement of the condition language into an :class:`Assignment`."""

    def __init__(self, input: str) -> None:
        self._text = input
        self._lexer = Lexer(input)
        self._token = self._lexer.next_token()

    def parse(self) -> Assignment:
        """The syntax tree of the statement.

        Raises:
            ValueError: the text is not a statement of the language (names the token).
        """
        target = self._expect(TokenType.VARIABLE)
        self._expect(TokenType.ASSIGNMENT)
        expression = self._or()
        self._expect(TokenType.EOL)
        return Assignment(Variable(target.value), expression)

    def _expect(self, kind: str) -> Token:
        token = self._token
        if token.type != kind:
            raise ValueError(
                f"condition {self._text!r}: expected {kind}, found {token.type} {token.value!r}"
            )
        self._token = self._lexer.next_token()
        return token

    def _or(self) -> AST:
        node = self._and()
        while self._token.type == TokenType.LOGICAL_OR:
            self._expect(TokenType.LOGICAL_OR)
            node = Or(node, self._and())
        return node

    def _and(self) -> AST:
        node = self._not()
        while self._token.type == TokenType.LOGICAL_AND:
            self._expect(TokenType.LOGICAL_AND)
            node = And(node, self._not())
        return node

    def _not(self) -> AST:
        if self._token.type == TokenType.LOGICAL_NOT:
            self._expect(TokenType.LOGICAL_NOT)
            return Not(self._not())
        return self._comparison()

    def _comparison(self) -> AST:
        left = self._unary()
        if self._token.type == TokenType.COMPARISON:
            symbol = self._expect(TokenType.COMPARISON).value
            return Comparison(left, symbol, self._unary())
        return left

    def _unary(self) -> AST:
        kind = self._token.type
        if kind == TokenType.MINUS:
            self._expect(TokenType.MINUS)
            return UnaryMinus(self._unary())
        if kind == TokenType.VARIABLE:
            return Variable(self._expect(TokenType.VARIABLE).value)
        if kind == TokenType.LITERAL:
            return Literal(self._expect(TokenType.LITERAL).value)
        self._expect(TokenType.PARENTHESIS_OPEN)
        node = self._or()
        self._expect(TokenType.PARENTHESIS_CLOSE)
        return node
