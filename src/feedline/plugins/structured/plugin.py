"""Entry point of the structured-sample plugin: registers its iterator (imported on first use)."""

from __future__ import annotations

from typing import Any

from feedline.core.hookspecs import hookimpl

__all__ = ["feedline_register_iterators"]


@hookimpl
def feedline_register_iterators(registry: Any) -> None:
    """Register ``StructuredOutputIterator`` as the ``structured`` iterator."""
    registry.add_iterator(
        "structured", "feedline.plugins.structured.iterator:StructuredOutputIterator"
    )
