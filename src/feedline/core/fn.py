"""The ``fn`` namespace: one function per registered operator, built lazily from the registry.

Part of the core's top layer (beside the pipeline): it only turns registry entries into functions
that call :func:`~feedline.core.graph.make_operator_call`.

``fn.readers.file`` resolves the dotted operator name ``"readers.file"``. Plugins load on the first
attribute access (not at import); ``dir(fn)`` lists what is registered. Each function carries the
docstring and signature generated from its schema.
"""

from __future__ import annotations

import types as _pytypes
from typing import Any

from feedline.core.graph import make_operator_call, resolve_schema
from feedline.core.names import schema_name, snake_case
from feedline.core.plugins import get_registry
from feedline.core.registry import OperatorEntry

__all__ = ["FnNamespace", "make_function"]


def make_function(entry: OperatorEntry) -> Any:
    """The user-facing function of an operator (validates and adds a graph node when called).

    Its docstring lists the devices that have kernels and the plugin providing each; as in
    DALI, ``_schema_name`` holds the operator's schema name (``readers__File``) and
    ``__module__`` its namespace (``feedline.fn.readers``).
    """
    schema = entry.schema
    op_name = schema.name

    def operator_function(*inputs: Any, **kwargs: Any) -> Any:
        return make_operator_call(op_name, inputs, kwargs)

    *path, short = op_name.split(".")
    operator_function.__name__ = short
    operator_function.__qualname__ = op_name
    operator_function.__module__ = ".".join(["feedline.fn", *path])
    operator_function._schema_name = schema_name(op_name)  # type: ignore[attr-defined]
    operator_function.__doc__ = entry.docstring()
    operator_function.__signature__ = schema.signature()  # type: ignore[attr-defined]
    return operator_function


class FnNamespace(_pytypes.ModuleType):
    """A (sub-)namespace of ``fn``; attributes resolve against the active registry."""

    def __init__(self, prefix: str = "") -> None:
        super().__init__(f"feedline.fn{'.' + prefix if prefix else ''}")
        self._prefix = prefix
        self._subspaces: dict[str, FnNamespace] = {}
        self._functions: dict[str, tuple[OperatorEntry, tuple[str, ...], Any]] = {}
        self.__path__: list[str] = []  # a package, so ``import feedline.fn.transforms`` works
        self.__doc__ = __doc__ if not prefix else f"Operators under ``fn.{prefix}``."

    def _names(self) -> tuple[dict[str, OperatorEntry], set[str]]:
        prefix = f"{self._prefix}." if self._prefix else ""
        ops: dict[str, OperatorEntry] = {}
        subspaces: set[str] = set()
        for name, entry in get_registry().operators.items():
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix) :]
            head, dot, _ = rest.partition(".")
            if dot:
                if not entry.schema.hidden:
                    subspaces.add(head)
            else:
                ops[head] = entry
        return ops, subspaces

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr == "_to_snake_case" and not self._prefix:
            return snake_case
        ops, subspaces = self._names()
        if attr in ops:
            return self._function(attr, ops[attr])
        full = f"{self._prefix}.{attr}" if self._prefix else attr
        if attr in subspaces or any(name.startswith(full + ".") for name in _all_operator_names()):
            # One object per sub-namespace, so ``fn.random is fn.random`` and a replaced
            # ``fn.random.uniform`` stays replaced.
            return self._subspaces.setdefault(attr, FnNamespace(full))
        resolve_schema(full)
        raise AttributeError(full)

    def _function(self, attr: str, entry: OperatorEntry) -> Any:
        """The function of ``entry``, the same object on every access (as DALI's ``fn``
        functions are, so they can be compared or used as dictionary keys) while the operator
        and its devices stay as they are."""
        cached = self._functions.get(attr)
        if cached is not None and cached[0] is entry and cached[1] == entry.devices:
            return cached[2]
        function = make_function(entry)
        self._functions[attr] = (entry, entry.devices, function)
        return function

    def __dir__(self) -> list[str]:
        ops, subspaces = self._names()
        visible = {name for name, entry in ops.items() if not entry.schema.hidden}
        return sorted(visible | subspaces)


def _all_operator_names() -> list[str]:
    return list(get_registry().operators)
