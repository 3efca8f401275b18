"""``feedline.ops``: DALI's object API (``ops.readers.File``, ``ops.decoders.Image``,
``ops.random.CoinFlip``…), one class per registered operator.

This module is replaced by a lazy :class:`~feedline.core.ops.OpsNamespace` built from the same
registry as ``feedline.fn``; plugins load on first attribute access.
"""

import sys

from feedline._namespace_import import install_namespace_finder
from feedline.core.ops import OpsNamespace

sys.modules[__name__] = OpsNamespace()
install_namespace_finder(OpsNamespace)
