"""Operators and readers with one defect each, registered in code: the kit must catch them."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import SampleKernel
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.readers.base import Reader, reader_schema

_DATA = (InputSpec("data", "Any array."),)
GOOD = OpSchema(
    "kit.good",
    "Add the sample's noise.",
    _DATA,
    args=(ArgSpec("scale", "float", 1.0, "Noise scale."),),
)
UNDOCUMENTED = OpSchema(
    "kit.undocumented", "An argument without doc.", _DATA, args=(ArgSpec("scale", "float", 1.0),)
)
WRONG_LAYOUT = OpSchema("kit.wrong_layout", "Flattens but keeps the input's layout.", _DATA)
THREADED = OpSchema("kit.threaded", "Adds the pipeline's thread count to the input.", _DATA)
GLOBAL_RNG = OpSchema("kit.global_rng", "Draws from a process-wide generator.", _DATA)
_COUNTER = itertools.count()


class GoodKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        return inputs[0] + args["scale"] * sample.rng.standard_normal(inputs[0].shape)


class FlattenKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        return inputs[0].reshape(-1)


class ThreadKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        return inputs[0] + self.ctx.num_threads


class CounterKernel(SampleKernel):
    def run_sample(self, inputs, args, sample):
        return inputs[0] + next(_COUNTER)


_COUNT = (ArgSpec("count", "int", 10, "How many rows."),)
ROWS = reader_schema("kit.rows", "Rows 0..count-1 as samples.", _COUNT, outputs=("row",))
UNSTABLE = reader_schema(
    "kit.unstable", "Rows whose content changes at every load.", _COUNT, outputs=("row",)
)


class RowsReader(Reader):
    def index(self) -> Sequence[int]:
        return range(self.args["count"])

    def load(self, item: int) -> tuple[np.ndarray]:
        return (np.array([item], np.int64),)


class UnstableReader(RowsReader):
    def load(self, item: int) -> tuple[np.ndarray]:
        return (np.array([item, next(_COUNTER)], np.int64),)


@hookimpl
def feedline_register_operators(registry) -> None:
    registry.add_operator(GOOD, {"cpu": GoodKernel})
    registry.add_operator(UNDOCUMENTED, {"cpu": GoodKernel})
    registry.add_operator(WRONG_LAYOUT, {"cpu": FlattenKernel})
    registry.add_operator(THREADED, {"cpu": ThreadKernel})
    registry.add_operator(GLOBAL_RNG, {"cpu": CounterKernel})
    registry.add_operator(ROWS, {"cpu": RowsReader})
    registry.add_operator(UNSTABLE, {"cpu": UnstableReader})
