"""The hooks a feedline plugin can implement.

A plugin is a module (or object) found through the ``feedline.plugins`` entry-point group, or
registered in code with :func:`feedline.core.plugins.register_plugin`. It implements any of the
hooks below, decorated with :data:`hookimpl`; each receives the :class:`~feedline.core.registry.
Registry` to fill. Built-in operators, readers, codecs and iterators register exactly this way.

Example::

    from feedline.core.hookspecs import hookimpl
    from feedline.core.schema import OpSchema, InputSpec

    @hookimpl
    def feedline_register_operators(registry):
        registry.add_operator(
            OpSchema("my_team.invert", "Invert uint8 images.", inputs=(InputSpec("images"),)),
            kernels={"cpu": "my_team.kernels:InvertKernel"},
        )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "feedline"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def feedline_register_operators(registry: Registry) -> None:
    """Register operator schemas (with their kernels) via ``registry.add_operator``."""


@hookspec
def feedline_register_kernels(registry: Registry) -> None:
    """Add kernels to operators registered by any plugin (``registry.add_kernel``).

    Runs after every plugin's ``feedline_register_operators``, so a GPU plugin can add ``gpu``
    kernels to operators owned by another plugin (or to the core's CPU/GPU transfers). An
    operator runs on exactly the devices that have a kernel.
    """


@hookspec
def feedline_register_codecs(registry: Registry) -> None:
    """Register image codecs chosen by file signature (``registry.add_codec``)."""


@hookspec
def feedline_register_iterators(registry: Registry) -> None:
    """Register framework iterators (``registry.add_iterator``)."""
