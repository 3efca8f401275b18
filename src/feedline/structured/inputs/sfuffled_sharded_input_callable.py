"""The shuffled, sharded input callable (module path as upstream, spelling included)."""

from feedline.plugins.structured.inputs import ShuffledShardedInputCallable

__all__ = [
    "ShuffledShardedInputCallable",
]
