"""Operator calls: DALI's DeprecationWarning for a seed given to an operator that draws nothing."""

from __future__ import annotations

import warnings

import pytest

from feedline import Pipeline, fn, types
from feedline.core.plugins import get_registry
from feedline.data_node import DataNode


def test_a_seed_for_an_operator_without_randomness_is_deprecated_and_ignored() -> None:
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        data = fn.constant(idata=[1, 2], layout="W")
        with pytest.warns(DeprecationWarning, match='"seed" should not be used') as caught:
            flipped = fn.flip(data, seed=3)
    assert flipped.source.seed is None
    assert caught[0].filename == __file__  # the warning points at the call


def test_random_operators_take_their_seed_silently() -> None:
    with Pipeline(batch_size=1, num_threads=1, device_id=None), warnings.catch_warnings():
        warnings.simplefilter("error")
        draw = fn.random.uniform(seed=3)
        files = fn.readers.file(files=["a"], seed=4)[0]
    assert (draw.source.seed, files.source.seed) == (3, 4)


def test_only_the_operators_that_draw_are_marked_random() -> None:
    random = {name for name, e in get_registry().operators.items() if e.schema.random}
    assert {"random.uniform", "random.coin_flip", "readers.file", "jitter"} <= random
    assert not {"flip", "resize", "constant", "external_source"} & random


def test_multiple_input_sets_make_one_operator_per_position() -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        a = fn.constant(idata=[1, 2], shape=[1, 2], layout="HW")
        b = fn.constant(idata=[3, 4], shape=[1, 2], layout="HW")
        flipped = fn.flip([a, b], horizontal=1)
        pairs = fn.cat([a, b], a, axis=1)  # the lone input is repeated for each set
        with pytest.raises(ValueError, match="same length"):
            fn.cat([a, b], [a])
        pipe.set_outputs(*flipped, *pairs)
    assert len(flipped) == 2 and flipped[0].source is not flipped[1].source
    outs = [o.as_array()[0].tolist() for o in pipe.run()]
    assert outs == [[[2, 1]], [[4, 3]], [[1, 2, 1, 2]], [[3, 4, 1, 2]]]
    pipe.close()


def test_a_single_input_set_is_an_ordinary_call() -> None:
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        a = fn.constant(idata=[1, 2], shape=[1, 2], layout="HW")
        flipped = fn.flip([a], horizontal=1)
        split = fn.external_source(source=lambda: [[1, 2]], num_outputs=1)
        cast = fn.cast(split, dtype=types.FLOAT)
    assert isinstance(flipped, DataNode) and isinstance(cast, DataNode)


def test_one_input_set_gives_the_outputs_unwrapped() -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        a = fn.constant(idata=[1, 2], shape=[1, 2], layout="HW")
        flipped = fn.flip([a], horizontal=1)
        assert isinstance(flipped, DataNode)
        pipe.set_outputs(flipped)
    assert pipe.run()[0].as_array()[0].tolist() == [[2, 1]]
    pipe.close()


@pytest.mark.parametrize("op", [fn.python_function, fn.dl_tensor_python_function])
def test_python_operators_refuse_input_sets_when_called(op) -> None:
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        a = fn.constant(idata=[1, 2], layout="W")
        with pytest.raises(TypeError, match="Python Operators do not support Multiple Input Sets"):
            op([a, a], function=lambda x: x)


def test_enum_constants_are_constant_nodes_and_cast_to_integers_only() -> None:
    assert isinstance(types.Constant(3), types.ScalarConstant)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        member = types.Constant(types.INTERP_CUBIC)
        by_dtype = types.Constant(int(types.RGB), dtype=types.IMAGE_TYPE)
        promoted = fn.copy(types.UINT16)
        assert isinstance(member, DataNode) and isinstance(by_dtype, DataNode)
        pipe.set_outputs(member, by_dtype, promoted, fn.cast(promoted, dtype=types.INT32))
    member, by_dtype, promoted, as_int = pipe.run()
    assert (member.dtype, by_dtype.dtype, promoted.dtype) == (
        types.INTERP_TYPE,
        types.IMAGE_TYPE,
        types.DATA_TYPE,
    )
    assert member.shape() == [()] * 2
    assert as_int.as_array().tolist() == [int(types.UINT16)] * 2
    pipe.close()

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.cast(types.Constant(types.INTERP_NN), dtype=types.FLOAT))
    with pytest.raises(RuntimeError, match="Cannot cast from DALIInterpType to float"):
        pipe.run()
    pipe.close()
