"""``feedline.types``: data types, enums and constants (DALI's ``nvidia.dali.types``).

Everything of :mod:`feedline.core.types`, plus ``Constant`` from the graph layer (a constant
that is not a plain scalar becomes a ``constant`` node of the pipeline being defined).
"""

from feedline.core import types as _core_types
from feedline.core.graph import Constant
from feedline.core.types import *  # noqa: F403 (the DALI-style names, enum members included)

__all__ = [*_core_types.__all__, "Constant"]
