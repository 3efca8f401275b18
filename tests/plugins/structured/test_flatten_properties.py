"""Property tests: flatten → unflatten round trips and flat-view invariants on random trees."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import SampleDataGroup

LEAF_TYPES = [types.UINT8, types.INT32, types.INT64, types.FLOAT, types.FLOAT64, types.BOOL]
NAMES = st.one_of(
    st.text(alphabet="abcxyz_", min_size=1, max_size=4), st.integers(min_value=0, max_value=5)
)


def _node() -> st.SearchStrategy[Any]:
    leaf = st.sampled_from([*LEAF_TYPES, types.STRING])
    return st.recursive(
        leaf,
        lambda children: st.dictionaries(NAMES, children, max_size=4),
        max_leaves=25,
    )


def build(spec: dict) -> SampleDataGroup:
    group = SampleDataGroup()
    for name, child in spec.items():
        if isinstance(child, dict):
            group.add_data_group_field(name, build(child))
        else:
            group.add_data_field(name, child)
    return group


def fill(group: SampleDataGroup, rng: np.random.Generator) -> None:
    for name in group:
        if group.is_data_group_field(name):
            fill(group[name], rng)
        elif group.get_type_of_field(name) is types.STRING:
            group[name] = "".join(rng.choice(list("abc é"), size=int(rng.integers(0, 5))))
        else:
            group[name] = rng.integers(0, 2, size=int(rng.integers(0, 4))).tolist()


def leaf_paths(spec: dict, prefix: tuple = ()) -> list[tuple]:
    out = []
    for name, child in spec.items():
        path = (*prefix, name)
        out += leaf_paths(child, path) if isinstance(child, dict) else [path]
    return out


@settings(max_examples=60)
@given(st.dictionaries(NAMES, _node(), max_size=5), st.integers(0, 2**32 - 1))
def test_flatten_unflatten_round_trip(spec: dict, seed: int) -> None:
    tree = build(spec)
    fill(tree, np.random.default_rng(seed))
    flat = tree.get_data()
    names = tree.field_names_flat
    assert len(flat) == len(names) == len(tree.field_types_flat) == len(leaf_paths(spec))
    assert len(set(names)) == len(names)
    target = tree.get_empty_like_self()
    assert target.type_matches(tree)
    target.set_data(flat)
    assert all(a is b for a, b in zip(target.get_data(), flat, strict=True))
    assert target.to_dictionary().keys() == tree.to_dictionary().keys()
    for path in leaf_paths(spec):
        a, b = tree.get_item_in_path(path), target.get_item_in_path(path)
        assert a == b if isinstance(a, str) else np.array_equal(a, b)


@settings(max_examples=60)
@given(st.dictionaries(NAMES, _node(), max_size=5))
def test_flat_names_follow_the_paths(spec: dict) -> None:
    tree = build(spec)
    expected = [
        ".".join(f"[{n}]" if isinstance(n, int) else n for n in path) for path in leaf_paths(spec)
    ]
    assert list(tree.field_names_flat) == expected
    for path in leaf_paths(spec):
        assert tree.path_exists(path)
        assert tree.find_all_occurrences(path[-1]).count(path) == 1
    assert tree.get_flat_index_first_discrepancy_to_other(tree.get_copy()) == -1
    batch = dict(zip(tree.field_names_flat, range(len(expected)), strict=True))
    tree.set_data_from_dali_generic_iterator_output([batch], 0)
    assert tree.get_data() == tuple(range(len(expected)))
