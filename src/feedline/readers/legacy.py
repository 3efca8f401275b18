"""DALI's older operator names for readers (``fn.video_reader`` for ``fn.readers.video``, …)."""

from __future__ import annotations

import dataclasses

from feedline.core.schema import OpSchema

__all__ = ["legacy_name"]


def legacy_name(schema: OpSchema, name: str) -> OpSchema:
    """The schema of ``schema``'s operator under DALI's older ``name`` (same arguments)."""
    doc = f"DALI's older name of ``{schema.name}``.\n\n{schema.doc}"
    return dataclasses.replace(schema, name=name, doc=doc)
