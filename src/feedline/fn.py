"""``feedline.fn``: the operator functions (``fn.readers.file``, ``fn.decoders.image``…).

This module is replaced by a lazy :class:`~feedline.core.fn.FnNamespace` built from the registry;
plugins load on first attribute access.
"""

import sys

from feedline._namespace_import import install_namespace_finder
from feedline.core.fn import FnNamespace

sys.modules[__name__] = FnNamespace()
install_namespace_finder(FnNamespace)
