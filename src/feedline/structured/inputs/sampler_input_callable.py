"""The sampler-driven per-sample input (module path as upstream)."""

from feedline.plugins.structured.samplers import SamplerInputCallable

__all__ = [
    "SamplerInputCallable",
]
