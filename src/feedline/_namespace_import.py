"""``import feedline.fn.transforms`` and ``import feedline.ops.transforms``, as DALI allows.

``feedline.fn`` and ``feedline.ops`` are lazy namespace objects, not packages on disk; DALI's
``fn`` and ``ops`` are packages whose sub-namespaces (``transforms``, ``readers``,
``experimental``…) can be imported by name. The finder installed here resolves such a dotted name
to the sub-namespace that attribute access returns, so both spellings give the same object.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

__all__ = ["install_namespace_finder"]


class _NamespaceLoader(importlib.abc.Loader):
    """Hands the import system an existing sub-namespace instead of executing a file."""

    def __init__(self, namespace: ModuleType) -> None:
        self._namespace = namespace

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self._namespace

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the namespace resolves its attributes lazily."""


class _NamespaceFinder(importlib.abc.MetaPathFinder):
    """Finds ``<namespace>.<child>`` for the namespace types it was given."""

    def __init__(self) -> None:
        self.namespace_types: tuple[type[ModuleType], ...] = ()

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        parent_name, _, child = fullname.rpartition(".")
        parent = sys.modules.get(parent_name)
        if not isinstance(parent, self.namespace_types):
            return None
        try:
            namespace = getattr(parent, child)
        except AttributeError:
            return None
        if not isinstance(namespace, self.namespace_types):
            return None  # an operator function or class, not a module
        return importlib.machinery.ModuleSpec(
            fullname, _NamespaceLoader(namespace), is_package=True
        )


_FINDER = _NamespaceFinder()


def install_namespace_finder(namespace_type: type[ModuleType]) -> None:
    """Let ``import`` reach the sub-namespaces of ``namespace_type`` objects in ``sys.modules``.

    The namespace type must give each instance a ``__path__`` (so Python treats it as a package).
    """
    if namespace_type not in _FINDER.namespace_types:
        _FINDER.namespace_types += (namespace_type,)
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
