"""Classes that refuse iteration with a clear error and are not ``collections.abc.Iterable``.

A class that defines ``__iter__`` counts as an ``Iterable`` for ``isinstance``, and one that
sets ``__iter__ = None`` is refused by Python with a generic "object is not iterable" (or
"cannot unpack non-iterable") message. DALI's ``DataNode`` has both a raising ``__iter__`` and
``isinstance(node, Iterable)`` False, and DALI programs rely on the latter to tell one node from a
list of nodes. :func:`not_iterable` gives a class the same: it gives ``collections.abc.Iterable``
(and only it) a metaclass that answers False for the registered classes and their subclasses,
then asks the ABC machinery as before for everything else.
"""

from __future__ import annotations

import abc
import collections.abc
from typing import Any, NoReturn

__all__ = ["not_iterable"]

_hidden: tuple[type, ...] = ()


class _IterableCheck(abc.ABCMeta):
    """The metaclass of ``collections.abc.Iterable`` once :func:`not_iterable` was called."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if isinstance(instance, _hidden):
            return False
        return super().__instancecheck__(instance)

    def __subclasscheck__(cls, subclass: type) -> bool:
        if isinstance(subclass, type) and issubclass(subclass, _hidden):
            return False
        return super().__subclasscheck__(subclass)


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
    if not isinstance(iterable, _IterableCheck):
        iterable.__class__ = _IterableCheck
    if add_iter:
        cls.__iter__ = _refuse_iteration  # type: ignore[attr-defined]
    if cls not in _hidden:
        _hidden = (*_hidden, cls)
    iterable._abc_caches_clear()  # type: ignore[attr-defined]  # earlier answers are stale
