"""Classes that refuse iteration with a clear error and are not ``collections.abc.Iterable``.

A class that defines ``__iter__`` counts as an ``Iterable`` for ``isinstance``, and one that
sets ``__iter__ = None`` is refused by Python with a generic "object is not iterable" (or
"cannot unpack non-iterable") message. DALI's ``DataNode`` has both a raising ``__iter__`` and
``isinstance(node, Iterable)`` False, and DALI programs rely on the latter to tell one node from a
list of nodes. :func:`not_iterable` gives a class the same: it replaces the ``__subclasshook__``
of ``collections.abc.Iterable`` (and of nothing else) by one that answers False for the
registered classes and their subclasses and asks the original hook about everything else. No
metaclass changes, so classes that subclass ``Iterable`` with a metaclass of their own still can.
"""

from __future__ import annotations

import collections.abc
from typing import Any, NoReturn

__all__ = ["not_iterable"]

_hidden: tuple[type, ...] = ()


_original_hook = collections.abc.Iterable.__dict__["__subclasshook__"]


def _iterable_hook(cls: type, subclass: type) -> Any:
    """``Iterable.__subclasshook__`` once :func:`not_iterable` was called."""
    if cls is collections.abc.Iterable and issubclass(subclass, _hidden):
        return False
    return _original_hook.__get__(None, cls)(subclass)


def _refuse_iteration(self: Any) -> NoReturn:
    raise TypeError(f"The objects of type `{type(self).__qualname__}` are not iterable.")


def not_iterable(cls: type, add_iter: bool = True) -> None:
    """Make ``cls`` (and its subclasses) not ``collections.abc.Iterable``.

    Args:
        cls: the class.
        add_iter: also give it an ``__iter__`` that raises TypeError (keep False when the
            class has its own raising ``__iter__`` with a better message).
    """
    global _hidden
    iterable = collections.abc.Iterable
    iterable.__subclasshook__ = classmethod(_iterable_hook)  # type: ignore[assignment]
    if add_iter:
        cls.__iter__ = _refuse_iteration  # type: ignore[attr-defined]
    if cls not in _hidden:
        _hidden = (*_hidden, cls)
    iterable._abc_caches_clear()  # type: ignore[attr-defined]  # earlier answers are stale
