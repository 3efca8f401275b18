"""A third-party plugin as installed by pip: registers ``fake.invert``."""

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import SampleKernel
from feedline.core.schema import ArgSpec, InputSpec, OpSchema

SCHEMA = OpSchema(
    "fake.invert",
    "Invert uint8 data (255 - x), then add ``offset``.",
    inputs=(InputSpec("data", "uint8 samples."),),
    args=(ArgSpec("offset", "int", 0, "Added after inverting.", tensor=True),),
)


class InvertKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        return (255 - inputs[0] + args["offset"]).astype(np.uint8)


@hookimpl
def feedline_register_operators(registry):
    registry.add_operator(SCHEMA, kernels={"cpu": InvertKernel})
