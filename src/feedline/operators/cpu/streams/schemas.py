"""Family ``streams``: ``optical_flow`` (NVIDIA optical-flow hardware only) and DALI's
``experimental.decoders.video`` name for ``decoders.video``.

``optical_flow`` runs on the optical-flow engine of NVIDIA GPUs in DALI; feedline has no
implementation of it. It is registered so that its documentation is visible and a pipeline
using it fails at build with an error saying so, instead of with an unknown name.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import ImageType

if TYPE_CHECKING:
    from feedline.core.registry import Registry

OPTICAL_FLOW = OpSchema(
    "optical_flow",
    """Optical flow between consecutive frames — needs NVIDIA's optical-flow hardware.

    DALI computes it with the NVIDIA Optical Flow SDK on Turing or newer GPUs; feedline has no
    such implementation, so building a pipeline that uses it raises a RuntimeError. The
    arguments are DALI's, listed for reference.""",
    inputs=(
        InputSpec("input", "Sequences of frames (FHWC)."),
        InputSpec("hints", "External hints (with enable_external_hints).", optional=True),
    ),
    args=(
        ArgSpec("enable_external_hints", "bool", False, "Use the second input as hints."),
        ArgSpec("enable_temporal_hints", "bool", False, "Use the previous flow as hints."),
        ArgSpec("hint_grid", "int", 4, "Grid size of the hint vector field."),
        ArgSpec("image_type", "image_type", ImageType.RGB, "Input colour space."),
        ArgSpec("output_format", "int", -1, "Deprecated in DALI: use output_grid."),
        ArgSpec("output_grid", "int", 4, "Grid size of the output vector field."),
        ArgSpec("preset", "float", 0.0, "Speed/quality level of the hardware."),
    ),
)

SCHEMAS = (OPTICAL_FLOW,)
KERNELS = {"optical_flow": "feedline.operators.cpu.streams.unavailable:OpticalFlowKernel"}

#: DALI's experimental names of operators other families own: alias → operator.
ALIASES = {"experimental.decoders.video": "decoders.video"}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``optical_flow``."""
    for schema in SCHEMAS:
        registry.add_operator(schema, kernels={"cpu": KERNELS[schema.name]})


@hookimpl
def feedline_register_kernels(registry: Registry) -> None:
    """Register the experimental names of operators that are installed (after every schema
    exists), with the same schema and kernels."""
    for alias, target in ALIASES.items():
        entry = registry.operators.get(target)
        if entry is None or alias in registry.operators:
            continue
        doc = f"DALI's experimental name of ``{target}``.\n\n{entry.schema.doc}"
        schema = dataclasses.replace(entry.schema, name=alias, doc=doc)
        registry.add_operator(schema, kernels=dict(entry.kernels))


__all__ = ["ALIASES", "KERNELS", "OPTICAL_FLOW", "SCHEMAS"]
