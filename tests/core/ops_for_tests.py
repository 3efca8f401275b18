"""Small operators registered in code by the core tests (a plugin object, as a team would write)."""

from __future__ import annotations

import threading
import time

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import SampleKernel
from feedline.core.schema import ArgSpec, InputSpec, OpSchema

NOISE = OpSchema(
    "test.noise",
    "Add per-sample random noise drawn from the sample's generator.",
    inputs=(InputSpec("data"),),
    args=(ArgSpec("scale", "float", 1.0, "Noise scale.", tensor=True),),
)
FAIL_ON = OpSchema(
    "test.fail_on",
    "Raise for samples whose first element equals ``value``.",
    inputs=(InputSpec("data"),),
    args=(ArgSpec("value", "int", doc="The poisoned value."),),
)
DOUBLE_INTO = OpSchema(
    "test.double_into",
    "Double the input, writing into the executor's batch buffer.",
    inputs=(InputSpec("data"),),
)
SLOW = OpSchema("test.slow", "Sleep a little per sample.", inputs=(InputSpec("data"),))
RECORD = OpSchema(
    "test.record",
    "Pass the input through, noting (label, sample, thread) in EVENTS.",
    inputs=(InputSpec("data"),),
    args=(
        ArgSpec("label", "str", "", "The label noted."),
        ArgSpec("extra", "int", 0, "A per-sample argument that is only read.", tensor=True),
    ),
)
SERIAL_DRAW = OpSchema(
    "test.serial_draw",
    "A scalar per-sample draw, run serially unless told otherwise.",
    args=(ArgSpec("serial", "bool", True, "Set the kernel's serial flag."),),
)
#: (label, sample index, thread) of every test.record and test.serial_draw sample, in order.
EVENTS: list[tuple[str, int, int]] = []


class NoiseKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        data = inputs[0].astype(np.float64)
        return data + args["scale"] * sample.rng.standard_normal(data.shape)


class FailOnKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        if inputs[0].reshape(-1)[0] == args["value"]:
            raise ValueError(f"poisoned sample with value {args['value']}")
        return inputs[0]


class SlowKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        time.sleep(0.002)
        return inputs[0]


class DoubleIntoKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        out = sample.output(inputs[0].shape, np.float32)
        np.multiply(inputs[0], 2, out=out)
        return out


class RecordKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        EVENTS.append((self.args["label"], sample.index, threading.get_ident()))
        time.sleep(0.001)
        return inputs[0]


class SerialDrawKernel(SampleKernel):
    def setup(self):
        self.serial = self.args["serial"]

    def run_sample(self, inputs, args, sample):
        EVENTS.append(("draw", sample.index, threading.get_ident()))
        return np.int32(sample.rng.integers(100))


class TestOps:
    """The plugin object."""

    @hookimpl
    def feedline_register_operators(self, registry):
        registry.add_operator(NOISE, {"cpu": NoiseKernel})
        registry.add_operator(FAIL_ON, {"cpu": FailOnKernel})
        registry.add_operator(SLOW, {"cpu": SlowKernel})
        registry.add_operator(DOUBLE_INTO, {"cpu": DoubleIntoKernel})
        registry.add_operator(RECORD, {"cpu": RecordKernel})
        registry.add_operator(SERIAL_DRAW, {"cpu": SerialDrawKernel})
