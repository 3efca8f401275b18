"""The demo's contact sheet: labels placed inside their tile, never over one another."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from feedline.cli.demo_sheet import Sample, _tile, place_label

TILE = (160, 120)

boxes = st.lists(
    st.tuples(
        st.integers(0, TILE[0]), st.integers(0, TILE[1]), st.integers(1, 80), st.integers(1, 60)
    ),
    max_size=12,
)
sizes = st.tuples(st.integers(10, 70), st.integers(8, 20))


@given(boxes, st.lists(sizes, min_size=12, max_size=12))
def test_labels_stay_in_the_tile_and_never_overlap(
    boxes: list[tuple[int, int, int, int]], label_sizes: list[tuple[int, int]]
) -> None:
    taken: list[tuple[int, int, int, int]] = []
    for (left, top, width, height), size in zip(boxes, label_sizes, strict=False):
        box = (left, top, min(left + width, TILE[0]), min(top + height, TILE[1]))
        spot = place_label(box, size, TILE, taken)
        if spot is None:
            continue
        x0, y0, x1, y1 = spot
        assert (x1 - x0, y1 - y0) == size
        assert min(x0, y0) >= 0 and x1 <= TILE[0] and y1 <= TILE[1]
        assert all(x1 <= a or a1 <= x0 or y1 <= b or b1 <= y0 for a, b, a1, b1 in taken)
        taken.append(spot)


def test_a_label_goes_above_its_box_when_there_is_room() -> None:
    assert place_label((40, 50, 100, 90), (30, 12), TILE, []) == (40, 38, 70, 50)
    # Two boxes sharing a corner: the second label moves instead of covering the first.
    first = place_label((40, 50, 100, 90), (30, 12), TILE, [])
    second = place_label((40, 50, 70, 70), (30, 12), TILE, [first])
    assert second is not None and second != first


def test_labels_are_legible_at_the_tile_size() -> None:
    image = np.zeros((320, 320, 3), np.uint8)
    sample = Sample(image, np.array([[0.1, 0.1, 0.6, 0.6]]), np.array([1]))
    tile = np.asarray(_tile(sample, {1: "Table"}))
    # The label sits on a band of its box's colour just above the box (top edge at row 32);
    # Pillow's 10-pixel bitmap font made it 10 rows tall, unreadable on a 320-pixel tile.
    band = np.flatnonzero((tile[:32, 40:60] != 0).any(axis=(1, 2)))
    assert band.size >= 15 and band.max() == 31
