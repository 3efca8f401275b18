"""The split and merge kernels: a batch split by a mask and merged back by the same mask is the
batch itself, in order, without copies; the predicate and logical checks give DALI's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.core.kernel import Batch, KernelContext
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.conditional import schemas
from feedline.operators.cpu.conditional.kernels import (
    MergeKernel,
    NotKernel,
    SplitKernel,
    ValidateLogicalKernel,
)


def _kernel(cls, schema, **args):
    full = {a.name: a.default for a in schema.args}
    full.update(args)
    ctx = KernelContext("k", schema, full, frozenset({"predicate"}), "cpu", 8, 1, 0, None)
    return cls(ctx)


def _batch(inputs, predicate=None):
    args = {} if predicate is None else {"predicate": predicate}
    size = len(inputs[0])
    return Batch(inputs, args, 0, size, 0, lambda f, n: [f(i) for i in range(n)])


def _scalars(values, dtype=np.bool_):
    return TensorListCPU.from_dense(np.array(values, dtype=dtype))


@given(
    mask=st.lists(st.booleans(), min_size=1, max_size=12),
    ragged=st.booleans(),
)
def test_merge_undoes_split(mask, ragged):
    samples = [np.full((2, 1 + (i if ragged else 0)), i, np.int16) for i in range(len(mask))]
    data = TensorListCPU.from_samples(samples, "HW", [f"file{i}" for i in range(len(mask))])
    predicate = _scalars(mask)
    on_true, on_false = _kernel(SplitKernel, schemas.SPLIT).run(_batch([data], predicate))
    assert len(on_true) == sum(mask) and len(on_false) == len(mask) - sum(mask)
    expected_true = [i for i, m in enumerate(mask) if m]
    assert [int(s[0, 0]) for s in on_true.samples()] == expected_true
    assert on_true.source_infos() == [f"file{i}" for i in expected_true]
    (merged,) = _kernel(MergeKernel, schemas.MERGE).run(_batch([on_true, on_false], predicate))
    assert merged.layout() == "HW"
    assert merged.source_infos() == [f"file{i}" for i in range(len(mask))]
    for original, back in zip(samples, merged.samples(), strict=True):
        np.testing.assert_array_equal(original, back)


def test_split_shares_memory_with_its_input():
    data = TensorListCPU.from_dense(np.arange(12, dtype=np.float32).reshape(4, 3))
    on_true, _ = _kernel(SplitKernel, schemas.SPLIT).run(_batch([data], _scalars([1, 0, 1, 0])))
    assert all(np.shares_memory(s, data.as_array()) for s in on_true.samples())


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32, np.float16, np.float64])
def test_any_numeric_predicate_selects_by_truth(dtype):
    data = TensorListCPU.from_dense(np.arange(4, dtype=np.int32))
    predicate = _scalars([0, 3, 0, 1], dtype)
    on_true, on_false = _kernel(SplitKernel, schemas.SPLIT).run(_batch([data], predicate))
    assert [int(s) for s in on_true.samples()] == [1, 3]
    assert [int(s) for s in on_false.samples()] == [0, 2]


def test_a_predicate_that_is_not_scalar_is_refused_as_an_if_condition():
    data = TensorListCPU.from_dense(np.arange(2, dtype=np.int32))
    predicate = TensorListCPU.from_dense(np.ones((2, 1), np.bool_))
    kernel = _kernel(SplitKernel, schemas.SPLIT, _if_stmt=True)
    with pytest.raises(RuntimeError, match=r"Conditions inside `if` statements .* Got a 1-d input"):
        kernel.run(_batch([data], predicate))


def test_merge_refuses_branches_of_different_types():
    on_true = TensorListCPU.from_dense(np.zeros(1, np.float32))
    on_false = TensorListCPU.from_dense(np.zeros(1, np.int32))
    with pytest.raises(RuntimeError, match="Found distinct types: float32 and int32"):
        _kernel(MergeKernel, schemas.MERGE).run(_batch([on_true, on_false], _scalars([1, 0])))


@pytest.mark.parametrize(("true_layout", "false_layout"), [("HWC", ""), ("", "HW"), ("HW", "WH")])
def test_merge_refuses_branches_of_different_layouts(true_layout, false_layout):
    """An empty layout is a layout of its own: DALI refuses it beside a named one."""
    shape = (1, 1, 1) if "C" in true_layout else (1, 1)
    on_true = TensorListCPU.from_samples([np.zeros(shape, np.uint8)], true_layout, None)
    on_false = TensorListCPU.from_samples([np.zeros(shape, np.uint8)], false_layout, None)
    with pytest.raises(RuntimeError, match="Found distinct layouts"):
        _kernel(MergeKernel, schemas.MERGE).run(_batch([on_true, on_false], _scalars([1, 0])))


def test_merge_with_an_empty_branch_is_the_other_branch():
    full = TensorListCPU.from_dense(np.arange(3, dtype=np.int8))
    empty = TensorListCPU.from_samples([], "", None, stack=False)
    (merged,) = _kernel(MergeKernel, schemas.MERGE).run(_batch([empty, full], _scalars([0, 0, 0])))
    assert merged is full


def test_not_and_the_logical_operand_check():
    values = _scalars([0, 2, 0], np.int32)
    (negated,) = _kernel(NotKernel, schemas.NOT).run(_batch([values]))
    assert negated.as_array().tolist() == [True, False, True]
    check = _kernel(
        ValidateLogicalKernel,
        schemas.VALIDATE_LOGICAL,
        expression_name="or",
        expression_side="right",
    )
    with pytest.raises(RuntimeError, match="Got an input of type `int32` as the right argument"):
        check.run(_batch([values]))
    matrix = TensorListCPU.from_dense(np.ones((3, 2), np.bool_))
    with pytest.raises(RuntimeError, match="Got a 1-d input as the right argument"):
        check.run(_batch([matrix]))
