"""An operator without inputs whose result depends on the batch size (DALI's
``batch_permutation``) declares the hidden ``_scope`` argument; inside a branch it then runs
on the branch's number of samples, so ``permute_batch`` there picks among the branch's
samples."""

# ruff: noqa: SIM108

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def
from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Batch, Kernel
from feedline.core.plugins import PluginSystem
from feedline.core.schema import ArgSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from tests.core.conditionals.helpers import columns_source

BATCH_SIZE = OpSchema(
    "test.batch_size",
    "Every sample holds the size of the batch the operator ran on.",
    args=(ArgSpec("_scope", "any", None, "The batch to take the size of.", tensor=True),),
)


class BatchSizeKernel(Kernel):
    def run(self, batch: Batch) -> list[TensorListCPU]:
        return [TensorListCPU.from_dense(np.full(batch.size, batch.size, np.int32))]


class _Plugin:
    @hookimpl
    def feedline_register_operators(self, registry):
        registry.add_operator(BATCH_SIZE, {"cpu": BatchSizeKernel})


@pytest.fixture(autouse=True)
def _batch_size_operator(plugin_system: PluginSystem) -> None:
    plugin_system.register(_Plugin(), "test-batch-size")


def test_an_operator_with_a_scope_argument_runs_on_the_branch_batch():
    mask = [True, False, True, True, False, True, False, True]

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        outside = fn.test.batch_size()
        pred = fn.external_source(source=columns_source(mask), batch=False)
        if pred:
            inside = fn.test.batch_size()
            if pred:
                nested = fn.test.batch_size()
            else:
                nested = fn.test.batch_size()
        else:
            inside = fn.test.batch_size()
            nested = inside * 1
        return outside, inside, nested

    outside, inside, nested = (np.array(o.as_array()).tolist() for o in pipe().run())
    taken = sum(mask)
    assert outside == [8] * 8
    assert inside == [taken if m else 8 - taken for m in mask]
    assert nested == [taken if m else 8 - taken for m in mask]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mask=st.lists(st.booleans(), min_size=1, max_size=12))
def test_batch_permutation_in_a_branch_permutes_the_branch_samples(mask: list[bool]) -> None:
    @pipeline_def(batch_size=len(mask), num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        pred = fn.external_source(source=columns_source(mask), batch=False)
        position = fn.external_source(source=lambda info: np.int32(info.idx_in_batch), batch=False)
        if pred:
            picked = fn.permute_batch(position, indices=fn.batch_permutation())
        else:
            picked = fn.permute_batch(position, indices=fn.batch_permutation())
        return picked

    (picked,) = pipe().run()
    values = [int(np.asarray(s)) for s in picked]
    for side in (True, False):
        positions = [i for i, m in enumerate(mask) if m == side]
        assert sorted(values[i] for i in positions) == positions
