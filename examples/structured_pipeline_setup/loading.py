"""The part both use cases share: steps over an input callable, built into a loader."""

from __future__ import annotations

from typing import Any

from feedline.structured.pipeline import DALIStructuredOutputIterator, PipelineDefinition


def structured_loader(
    source: Any, steps: list[Any], batch_size: int, seed: int, iterations: int | None = None
) -> DALIStructuredOutputIterator:
    """A CPU loader running ``steps`` (``None`` entries are left out) over ``source``, with
    ``iterations`` batches per epoch (None: until the source ends)."""
    definition = PipelineDefinition(
        source,
        [step for step in steps if step is not None],
        check_data_format=False,
        copy_external_source_passthrough_outputs=False,
    )
    pipe = definition.get_dali_pipeline(
        batch_size=batch_size, num_threads=2, device_id=None, seed=seed, prefetch_queue_depth=1
    )
    return DALIStructuredOutputIterator(
        iterations, pipe, definition.check_and_get_output_data_structure()
    )
