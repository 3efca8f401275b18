"""``feedline.types``: data types, enums and constants (DALI's ``nvidia.dali.types``).

This module is :mod:`feedline.core.types` itself, published under the short DALI-like name.
"""

import sys

from feedline.core import types as _core_types

sys.modules[__name__] = _core_types
