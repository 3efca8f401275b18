"""Family ``constants``: ``zeros``, ``ones``, ``full`` and their ``*_like`` forms."""
