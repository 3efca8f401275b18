"""``feedline._utils.external_source_impl``: sources described as DALI's worker pool sees them."""

from __future__ import annotations

import numpy as np
import pytest

from feedline._utils.external_source_impl import SourceKind, get_callback_from_source


def _per_sample(info):
    return np.int32(info)


def _batches():
    yield from ([np.full(2, i)] for i in range(3))


def test_a_callable_is_its_own_callback() -> None:
    callback, desc = get_callback_from_source(_per_sample, cycle=None)
    assert callback is _per_sample
    assert desc.kind is SourceKind.CALLABLE and desc.has_inputs and desc.cycle is None


@pytest.mark.parametrize(
    ("source", "kind"),
    [(_batches, SourceKind.GENERATOR_FUNC), ([[np.zeros(1)], [np.ones(1)]], SourceKind.ITERABLE)],
)
def test_iterables_give_their_batches_in_order_lazily(source, kind) -> None:
    callback, desc = get_callback_from_source(source, cycle="quiet")
    assert desc.kind is kind and desc.cycle == "quiet" and desc.source is source
    first, second = callback(), callback()
    assert float(first[0][0]) == 0.0 and float(second[0][0]) == 1.0


def test_an_iterable_is_not_iterated_before_the_first_batch() -> None:
    started = []

    class Tracked:
        def __iter__(self):
            started.append(True)
            return iter([[np.zeros(1)]])

    callback, _ = get_callback_from_source(Tracked(), cycle=None)
    assert not started
    callback()
    assert started == [True]


def test_no_source_is_fed_input_and_bad_ones_are_refused() -> None:
    assert get_callback_from_source(None, cycle=None) == (None, None)
    with pytest.raises(ValueError, match="cycle"):
        get_callback_from_source(_per_sample, cycle="quiet")
    with pytest.raises(TypeError, match="callable, iterable"):
        get_callback_from_source(42, cycle=None)
