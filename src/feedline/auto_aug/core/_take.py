"""Per-sample indexing of a batch along its outermost axis, built from ``fn.slice``."""

from __future__ import annotations

from feedline import fn, types
from feedline.core.graph.nodes import DataNode


def take(table: DataNode, index: int | DataNode) -> DataNode:
    """Return ``table[index]`` for every sample: the outermost axis is indexed and dropped.

    Args:
        table: A batch whose samples have at least one dimension.
        index: A Python int (the same row for all samples) or a batch of integer scalars.
    """
    if isinstance(index, DataNode):
        start = fn.cast(fn.expand_dims(index, axes=[0]), dtype=types.INT64)
    else:
        start = [int(index)]
    return fn.squeeze(fn.slice(table, start=start, shape=[1], axes=[0]), axes=[0])
