"""Test helper: run steps on one fixed sample and name the outputs by their flat field names."""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.plugins.structured import PipelineDefinition, SampleDataGroup
from tests.plugins.structured.helpers import FixedCallable


def run_named(blueprint: SampleDataGroup, sample: SampleDataGroup, steps: list) -> dict[str, Any]:
    """Every output leaf of the processed sample (batch of one), by flat name (``"a.b"``)."""
    definition = PipelineDefinition(
        FixedCallable(blueprint, sample.get_data(), 1),
        steps,
        use_parallel_external_source=False,
        copy_external_source_passthrough_outputs=False,
    )
    names = definition.check_and_get_output_data_structure().field_names_flat
    pipe = definition.get_dali_pipeline(batch_size=1, num_threads=1, device_id=None, seed=5)
    pipe.build()
    outputs = pipe.run()
    pipe.close()
    return {name: np.array(out.at(0)) for name, out in zip(names, outputs, strict=True)}
