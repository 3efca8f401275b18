"""``multi_paste``: regions from ``in_ids`` or several inputs, relative forms, bounds, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn, types
from feedline.operators.cpu.crops.pastes import paste_regions, source_names
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

_A = (np.arange(16).reshape(4, 4, 1) + 1).astype(np.uint8)
_B = (np.arange(16).reshape(4, 4, 1) + 100).astype(np.uint8)


def _ints(value: Any) -> Any:
    return feed([np.array(value, np.int32)] * 2)


def _first(graph: Any) -> np.ndarray:
    ((samples, layout),) = build(graph)
    assert layout == "HWC"
    return samples[0]


def test_in_ids_paste_regions_of_other_samples_in_order() -> None:
    out = _first(
        lambda: fn.multi_paste(
            feed([_A, _A + 50], "HWC"),
            in_ids=_ints([1, 0]),
            in_anchors=_ints([[0, 0], [2, 2]]),
            shapes=_ints([[2, 2], [2, 2]]),
            out_anchors=_ints([[0, 0], [1, 1]]),
        )
    )
    expected = [[51, 52, 0, 0], [55, 11, 12, 0], [0, 15, 16, 0], [0, 0, 0, 0]]
    assert out[..., 0].tolist() == expected


def test_output_size_reads_height_and_width_and_ignores_a_channel_count() -> None:
    def pasted(size: list[int]) -> np.ndarray:
        return _first(lambda: fn.multi_paste(feed([_A, _A], "HWC"), output_size=size))

    np.testing.assert_array_equal(pasted([5, 6, 3]), pasted([5, 6]))
    assert pasted([5, 6, 7, 8]).shape == (5, 6, 1)


def test_several_inputs_with_output_size_and_default_shapes() -> None:
    out = _first(
        lambda: fn.multi_paste(
            feed([_A, _A], "HWC"),
            feed([_B, _B], "HWC"),
            in_anchors=_ints([[0, 0], [2, 2]]),
            out_anchors=_ints([[0, 0], [1, 1]]),
            output_size=[5, 6],
            shapes=_ints([[2, 2], [2, 2]]),
        )
    )
    assert out.shape == (5, 6, 1)
    assert out[..., 0].tolist()[:3] == [
        [1, 2, 0, 0, 0, 0],
        [5, 110, 111, 0, 0, 0],
        [0, 114, 115, 0, 0, 0],
    ]
    full = _first(
        lambda: fn.multi_paste(
            feed([_A, _A], "HWC"),
            feed([_B, _B], "HWC"),
            in_anchors=_ints([[0, 0], [2, 2]]),
            out_anchors=_ints([[0, 0], [1, 1]]),
        )
    )
    assert full[..., 0].tolist() == [
        [1, 2, 3, 4],
        [5, 110, 111, 8],
        [9, 114, 115, 12],
        [13, 14, 15, 16],
    ]


def test_relative_forms_and_dtype() -> None:
    def floats(value: Any) -> Any:
        return feed([np.array(value, np.float32)] * 2)

    out = _first(
        lambda: fn.multi_paste(
            feed([_A, _A], "HWC"),
            in_ids=[0],
            in_anchors_rel=floats([[0.5, 0.5]]),
            shapes_rel=floats([[0.5, 0.5]]),
            out_anchors_rel=floats([[0.25, 0.25]]),
            dtype=types.FLOAT,
        )
    )
    assert out.dtype == np.float32
    assert out[..., 0].tolist() == [[0, 0, 0, 0], [0, 11, 12, 0], [0, 15, 16, 0], [0, 0, 0, 0]]


def test_relative_anchors_round_down_and_relative_shapes_round_up() -> None:
    image = (np.arange(400, dtype=np.int32).reshape(20, 20, 1) % 250 + 1).astype(np.uint8)

    def rel(y: float, x: float) -> Any:
        return feed([np.array([[y, x]], np.float32)])

    ((out, _),) = build(
        lambda: fn.multi_paste(
            feed([image], "HWC"),
            in_ids=[0],
            in_anchors_rel=rel(0.37, 0.33),  # 7.4, 6.6 -> 7, 6
            shapes_rel=rel(0.31, 0.26),  # 6.2, 5.2 -> 7, 6
            out_anchors_rel=rel(0.37, 0.46),  # 7.4, 9.2 -> 7, 9
        ),
        batch_size=1,
    )
    expected = np.zeros_like(image)
    expected[7:14, 9:15] = image[7:14, 6:12]
    np.testing.assert_array_equal(out[0], expected)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))
def test_paste_regions_copies_exactly_the_region(y: int, x: int, h: int, w: int) -> None:
    source = np.arange(100, dtype=np.int32).reshape(10, 10, 1)
    canvas = np.full((6, 6, 1), -1, np.int32)
    region = np.array([[h, w]])
    paste_regions(canvas, [source], np.array([[y, x]]), region, np.array([[1, 2]]), 0)
    np.testing.assert_array_equal(canvas[1 : 1 + h, 2 : 2 + w], source[y : y + h, x : x + w])
    assert (canvas == -1).sum() == 36 - h * w


def test_output_size_reads_only_h_and_w() -> None:
    # DALI's CPU-only tests give the whole sample shape, channels included: they are not read.
    with_channels = _first(
        lambda: fn.multi_paste(feed([_A, _A], "HWC"), in_ids=_ints([0]), output_size=[5, 6, 9])
    )
    plain = _first(
        lambda: fn.multi_paste(feed([_A, _A], "HWC"), in_ids=_ints([0]), output_size=[5, 6])
    )
    assert with_channels.shape == plain.shape == (5, 6, 1)
    np.testing.assert_array_equal(with_channels, plain)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"in_ids": [0], "output_size": [4]}, r"output_size must hold \(H, W\)"),
        ({"in_ids": [0], "out_anchors": [3, 3]}, "must be within output bounds"),
        (
            {"in_ids": [0], "in_anchors": [3, 3], "shapes": [2, 2]},
            "must be within the input sample",
        ),
        ({"in_ids": [5]}, r"in_idx` must be in range \[0, 1\]. Got in_idx: 5. Input batch size"),
        ({"in_ids": [0, 1], "in_anchors": [0, 0]}, "must be a 2 x 2 tensor"),
        ({"in_ids": [0], "in_anchors": [0, 0], "in_anchors_rel": [0.0, 0.0]}, "cannot be given"),
    ],
)
def test_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((OperatorError, ValueError, IndexError), match=message):
        build(lambda: fn.multi_paste(feed([_A, _A], "HWC"), **kwargs))


def test_input_checks() -> None:
    with pytest.raises((OperatorError, ValueError), match="exactly one input batch"):
        build(lambda: fn.multi_paste(feed([_A, _A], "HWC"), feed([_B, _B], "HWC"), in_ids=[0]))
    with pytest.raises((OperatorError, ValueError), match="HWC or FHWC"):
        build(lambda: fn.multi_paste(feed([_A[..., 0]] * 2, "HW"), in_ids=[0]))
    with pytest.raises((OperatorError, ValueError), match="same shape"):
        build(lambda: fn.multi_paste(feed([_A, _A[:3]], "HWC"), in_ids=[0]))
    wide = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises((OperatorError, ValueError), match="same number of channels"):
        build(lambda: fn.multi_paste(feed([_A, _A], "HWC"), feed([wide, wide], "HWC")))


def test_check_operator() -> None:
    example = OperatorExample([[_A, _A + 1, _A + 2]], ["HWC"], {"in_ids": [2, 0]})
    assert "threads" in check_operator("multi_paste", example)


def test_source_info_names_the_pasted_samples() -> None:
    infos = [["a.png", "b.png"], ["c.png", "d.png"]]
    assert source_names([1, 1, 0], 0, infos) == ["b.png", "b.png", "a.png"]
    assert source_names(None, 1, infos) == ["b.png", "d.png"]


def test_relative_values_must_lie_in_the_unit_range() -> None:
    with pytest.raises(OperatorError, match=r"values must be floats in \[0, 1\] range"):
        build(lambda: fn.multi_paste(feed([_A, _A], "HWC"), in_ids=[0], shapes_rel=[1.5, 0.5]))


@st.composite
def _pasting(draw: Any) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], Any]:
    """A batch of HWC or FHWC samples and, per output, ``in_ids`` with regions that fit."""
    size = draw(st.integers(1, 5))
    frames = draw(st.sampled_from([(), (2,)]))
    dtype = draw(st.sampled_from([np.uint8, np.int16, np.float32]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    samples = [rng.integers(1, 100, (*frames, 6, 7, 2)).astype(dtype) for _ in range(size)]
    ids, regions = [], []
    for _ in range(size):
        count = draw(st.integers(0, 4))
        shape = rng.integers(0, 6, (count, 2))
        start = (rng.uniform(0, 1, (count, 2)) * ([6, 7] - shape)).astype(np.int32)
        out = (rng.uniform(0, 1, (count, 2)) * ([5, 8] - shape)).astype(np.int32)
        ids.append(rng.integers(0, size, count).astype(np.int32))
        regions.append(np.stack([start, shape.astype(np.int32), out]))
    out_type = draw(st.sampled_from([None, types.FLOAT]))
    return samples, ids, regions, out_type


def _pasted_by_hand(
    samples: list[np.ndarray], ids: np.ndarray, regions: np.ndarray, dtype: Any
) -> np.ndarray:
    canvas = np.zeros((*samples[0].shape[:-3], 5, 8, samples[0].shape[-1]), dtype)
    for j, (y0, x0), (h, w), (y1, x1) in zip(ids, *regions, strict=True):
        canvas[..., y1 : y1 + h, x1 : x1 + w, :] = samples[j][..., y0 : y0 + h, x0 : x0 + w, :]
    return canvas


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@settings(max_examples=40, deadline=None)
@given(_pasting())
def test_batch_paste_equals_pasting_by_hand(compiled: bool, pasting: Any) -> None:
    samples, ids, regions, out_type = pasting
    with pytest.MonkeyPatch.context() as patch:
        if not compiled:
            patch.setattr("feedline.operators.cpu.crops.pastes.crop_kernels", lambda: None)
        ((out, _),) = build(
            lambda: fn.multi_paste(
                feed(samples, "FHWC" if samples[0].ndim == 4 else "HWC"),
                in_ids=feed(ids),
                in_anchors=feed([r[0] for r in regions]),
                shapes=feed([r[1] for r in regions]),
                out_anchors=feed([r[2] for r in regions]),
                output_size=[5, 8],
                dtype=out_type,
            ),
            batch_size=len(samples),
        )
    dtype = samples[0].dtype if out_type is None else np.float32
    for i, pasted in enumerate(out):
        expected = _pasted_by_hand(samples, ids[i], regions[i], dtype)
        assert pasted.dtype == expected.dtype
        np.testing.assert_array_equal(pasted, expected)
