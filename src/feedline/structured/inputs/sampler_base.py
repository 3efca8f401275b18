"""The sampler contract (module path as upstream)."""

from feedline.plugins.structured.samplers import SamplerBase

__all__ = [
    "SamplerBase",
]
