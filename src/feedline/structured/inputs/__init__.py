"""Where samples come from: input callables/iterables, data providers and samplers."""

from feedline.plugins.structured.inputs import (
    CallableBase,
    DataProvider,
    IterableBase,
    ShuffledShardedInputCallable,
)
from feedline.plugins.structured.samplers import (
    SamplerBase,
    SamplerInputCallable,
    SamplerInputIterable,
    SequenceSampler,
)

__all__ = [
    "CallableBase",
    "DataProvider",
    "IterableBase",
    "SamplerBase",
    "SamplerInputCallable",
    "SamplerInputIterable",
    "SequenceSampler",
    "ShuffledShardedInputCallable",
]
