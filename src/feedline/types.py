"""``feedline.types``: data types, enums and constants (DALI's ``nvidia.dali.types``).

Everything of :mod:`feedline.core.types`, plus ``Constant`` from the graph layer (a constant
that is not a plain scalar becomes a ``constant`` node of the pipeline being defined).
"""

from feedline.core import types as _core_types
from feedline.core.graph import Constant
from feedline.core.types import *  # noqa: F403 (the DALI-style names, enum members included)

__all__ = [*_core_types.__all__, "Constant"]

# DALI's groupings of the numeric types, in its order (programs and tests iterate over them).
_bool_types = [_core_types.DataType.BOOL]
_int_types = [
    _core_types.DataType.INT8,
    _core_types.DataType.INT16,
    _core_types.DataType.INT32,
    _core_types.DataType.INT64,
    _core_types.DataType.UINT8,
    _core_types.DataType.UINT16,
    _core_types.DataType.UINT32,
    _core_types.DataType.UINT64,
]
_float_types = [
    _core_types.DataType.FLOAT16,
    _core_types.DataType.FLOAT,
    _core_types.DataType.FLOAT64,
]
_int_like_types = _bool_types + _int_types
_all_types = _bool_types + _int_types + _float_types
