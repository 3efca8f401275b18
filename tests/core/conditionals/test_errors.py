"""What conditionals refuse, with DALI's exception types and wording."""

# The functions below are written with if-statements on purpose: they are what the conditional
# transformation rewrites.
# ruff: noqa: SIM108

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.pipeline.conditionals import do_not_convert, is_converted
from tests.core.conditionals.helpers import columns_source

KW = {"batch_size": 4, "num_threads": 1, "device_id": None, "enable_conditionals": True}
INCONSISTENT = "Encountered inconsistent outputs out of the `if/else` control flow statement"


def _parity():
    return fn.external_source(source=columns_source([0, 1, 0, 1]), batch=False)


def test_a_variable_of_one_branch_read_after_the_if():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        if pred:
            only_here = pred + 1
        return only_here

    with pytest.raises(RuntimeError, match=rf"{INCONSISTENT}.*'only_here' must also be .* `else`"):
        pipe()


def test_a_variable_of_one_branch_that_is_never_read_is_fine():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        out = pred * 1
        if pred:
            scratch = pred + 1
            out = scratch * 2
        return out

    (out,) = pipe().run()
    assert [int(np.array(s)) for s in out] == [0, 4, 0, 4]


def test_return_in_one_branch_only():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        if pred:
            return pred + 1

    with pytest.raises(RuntimeError, match=rf"{INCONSISTENT}.*The `else` branch must also have"):
        pipe()


def test_different_structures_in_the_two_branches():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        if pred:
            out = (pred, pred)
        else:
            out = pred
        return out

    with pytest.raises(ValueError, match="Divergent data found in different branches"):
        pipe()


def test_dicts_with_different_keys_name_them():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        if pred:
            out = {"a": pred, "b": pred}
        else:
            out = {"a": pred}
        return out["a"]

    with pytest.raises(ValueError, match=r"don't have the same set of keys.*\['a', 'b'\]"):
        pipe()


def test_branches_of_different_types_fail_at_the_merge():
    @pipeline_def(**KW)
    def pipe():
        pred = _parity()
        if pred:
            out = types.Constant(np.float32(1), device="cpu")
        else:
            out = types.Constant(np.int32(1), device="cpu")
        return out

    with pytest.raises(RuntimeError, match="Found distinct types: float32 and int32"):
        pipe().run()


def test_a_condition_that_is_not_a_scalar():
    @pipeline_def(**KW)
    def pipe():
        pred = fn.external_source(source=lambda info: np.ones(2, np.bool_), batch=False)
        if pred:
            out = types.Constant(np.int32(1), device="cpu")
        else:
            out = types.Constant(np.int32(0), device="cpu")
        return out

    with pytest.raises(
        RuntimeError, match="restricted to scalar .* Got a 1-d input as a condition"
    ):
        pipe().run()


@pytest.mark.parametrize("expression", ["and", "or"])
def test_and_or_need_booleans(expression):
    @pipeline_def(**KW)
    def pipe():
        value = _parity()
        return (value and value) if expression == "and" else (value or value)

    with pytest.raises(RuntimeError, match=f"`{expression}` .* Got an input of type `int64`"):
        pipe().run()


def test_without_enable_conditionals_an_if_on_a_datanode_says_how_to_enable_them():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        pred = fn.random.coin_flip()
        if pred:
            return pred
        return pred * 0

    with pytest.raises(TypeError, match=r"enable_conditionals=True"):
        pipe()


def test_errors_name_the_users_frames():
    def helper():
        raise ValueError("helper failed")

    @pipeline_def(**KW)
    def pipe():
        if _parity():
            out = np.int32(1)
        else:
            out = helper()
        return out

    with pytest.raises(ValueError, match=r"(?s)in user code:.*in pipe.*in helper.*helper failed"):
        pipe()


def test_do_not_convert_keeps_functions_as_they_are():
    @do_not_convert
    def factory():
        def source(info):
            return np.int32(info.idx_in_batch)

        return source

    def converted_factory():
        def source(info):
            return np.int32(info.idx_in_batch)

        return source

    seen = {}

    @pipeline_def(**KW)
    def pipe():
        plain, transformed = factory(), converted_factory()
        seen["plain"], seen["transformed"] = is_converted(plain), is_converted(transformed)
        return fn.external_source(source=plain, batch=False)

    pipe()
    assert seen == {"plain": False, "transformed": True}

    @do_not_convert
    def marked():
        return _parity()

    with pytest.raises(ValueError, match="cannot be marked with @do_not_convert"):
        pipeline_def(**KW)(marked)


def test_a_pipeline_factory_cannot_be_marked_do_not_convert():
    """Either order of the two decorators is refused when decorating, as DALI does."""
    with pytest.raises(ValueError, match="cannot be marked with @do_not_convert"):
        do_not_convert(pipeline_def(_parity))
    with pytest.raises(ValueError, match="cannot be marked with @do_not_convert"):
        pipeline_def(do_not_convert(_parity))


def test_a_parallel_source_made_in_the_transformed_function_is_refused():
    def factory():
        def source(info):
            return np.int32(info.idx_in_epoch)

        return source

    @pipeline_def(**KW, py_num_workers=1, py_start_method="spawn")
    def pipe():
        return fn.external_source(source=factory(), batch=False, parallel=True)

    with pytest.raises(ValueError, match=r"`source`.*converted.*must remain unconverted"):
        pipe()


def test_a_parallel_source_from_an_unconverted_factory_runs_in_spawned_workers():
    @do_not_convert
    def factory(offset):
        def source(info):
            return np.int32(info.idx_in_epoch + offset)

        return source

    @pipeline_def(**KW, py_num_workers=1, py_start_method="spawn")
    def pipe():
        return fn.external_source(source=factory(10), batch=False, parallel=True)

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [int(np.asarray(s)) for s in out] == [10, 11, 12, 13]
