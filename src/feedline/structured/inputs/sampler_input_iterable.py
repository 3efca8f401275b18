"""The sampler-driven per-batch input (module path as upstream)."""

from feedline.plugins.structured.samplers import SamplerInputIterable

__all__ = [
    "SamplerInputIterable",
]
