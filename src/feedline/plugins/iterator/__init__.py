"""The shared base of the framework iterators (DALI's epoch, length and last-batch rules).

:mod:`~feedline.plugins.iterator.base` holds :class:`BaseIterator`,
:mod:`~feedline.plugins.iterator.options` the policies and argument checks,
:mod:`~feedline.plugins.iterator.state` the resumable state. Framework plugins subclass
:class:`BaseIterator` (see ``docs/iterators.md``).
"""

from feedline.plugins.iterator.base import BaseIterator, TaggedOutputs
from feedline.plugins.iterator.options import (
    EpochNotFinishedWarning,
    IteratorError,
    LastBatchPolicy,
    check_output_types,
)

__all__ = [
    "BaseIterator",
    "EpochNotFinishedWarning",
    "IteratorError",
    "LastBatchPolicy",
    "TaggedOutputs",
    "check_output_types",
]
