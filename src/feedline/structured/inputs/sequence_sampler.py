"""The sequence sampler (module path as upstream)."""

from feedline.plugins.structured.samplers import SequenceSampler

__all__ = [
    "SequenceSampler",
]
