"""The ``feedline`` command line (entry point :func:`main`).

One module per command: :mod:`~feedline.cli.plugins` (``plugins``, ``ops``),
:mod:`~feedline.cli.demo`, :mod:`~feedline.cli.bench` and :mod:`~feedline.cli.build_kernels`;
:mod:`~feedline.cli.main` parses the arguments and maps failures to exit codes.
"""

from feedline.cli.main import main

__all__ = ["main"]
