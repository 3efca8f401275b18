"""The ``fn`` namespace keeps one object per sub-namespace."""

from __future__ import annotations

import pytest

from feedline import fn


def test_sub_namespace_is_the_same_object_on_every_access() -> None:
    assert fn.random is fn.random
    assert fn.readers is fn.readers


def test_replacing_an_operator_in_a_sub_namespace_is_seen_by_later_lookups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def scripted(*args: object, **kwargs: object) -> str:
        return "scripted"

    monkeypatch.setattr(fn.random, "uniform", scripted)
    assert fn.random.uniform() == "scripted"


def test_an_operator_function_is_the_same_object_on_every_access() -> None:
    # DALI code compares them: ``op(42, ...) if op == fn.full else op(...)``
    assert fn.full is fn.full
    assert fn.random.uniform is fn.random.uniform
    assert fn.full is not fn.full_like
