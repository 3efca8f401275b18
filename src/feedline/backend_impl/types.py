"""``feedline.backend_impl.types``: DALI's ``nvidia.dali.backend_impl.types``.

The enums and constants of :mod:`feedline.types`, with every data type (the vector types
included) at module level, and ``_DALIDataType``: where DALI's native module names the data type
enum that way, it is the same enum here.
"""

from feedline.core import types as _core_types
from feedline.core.types import *  # noqa: F403 (the DALI-style names, enum members included)
from feedline.core.types import DALIDataType

_DALIDataType = DALIDataType
globals().update({member.name: member for member in DALIDataType})

__all__ = [*_core_types.__all__, "_DALIDataType"]
