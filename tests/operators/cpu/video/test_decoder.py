"""``decoders.video``: frame selection and padding against DALI's definitions (needs PyAV)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.video.decoder import padded_index, select_frames
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import PerSample, run_op
from tests.operators.cpu.video.grey_videos import encode, levels

av = pytest.importorskip("av")


@pytest.fixture(autouse=True)
def _video_plugins(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_families(empty_plugin_system, "python", "tensor", "video")
    yield


VIDEO = encode()


def decode(**kwargs: object) -> np.ndarray:
    (out,), layout = run_op("decoders.video", [VIDEO], None, **kwargs)
    assert layout == "FHWC"
    return out


def test_all_frames_by_default() -> None:
    out = decode()
    assert out.shape == (10, 48, 64, 3) and out.dtype == np.uint8
    assert levels(out) == list(range(10))


def test_frames_start_stride_end_and_length() -> None:
    assert levels(decode(frames=[7, 2, 2, 9])) == [7, 2, 2, 9]
    assert levels(decode(start_frame=3, stride=2)) == [3, 5, 7, 9]
    assert levels(decode(start_frame=1, end_frame=4)) == [1, 2, 3]
    assert levels(decode(start_frame=2, sequence_length=3, stride=3)) == [2, 5, 8]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("none", [6, 8]),
        ("edge", [6, 8, 9, 9, 9]),
        ("repeat", [6, 8, 9, 9, 9]),
        ("symmetric", [6, 8, 9, 7, 5]),
        ("reflect_1001", [6, 8, 9, 7, 5]),
        ("reflect", [6, 8, 8, 6, 4]),
        ("reflect_101", [6, 8, 8, 6, 4]),
    ],
)
def test_pad_modes_mirror_the_whole_video(mode: str, expected: list[int]) -> None:
    # indices 10, 12 and 14 of a 10-frame video are mapped onto the video's frames, as in DALI
    assert levels(decode(start_frame=6, stride=2, sequence_length=5, pad_mode=mode)) == expected


@given(index=st.integers(0, 200), count=st.integers(1, 12))
def test_padded_index_stays_inside_the_video(index: int, count: int) -> None:
    for mode in ("edge", "symmetric", "reflect"):
        frame = padded_index(index, count, mode)
        assert frame is not None and 0 <= frame < count
        if index < count:
            assert frame == index
    assert padded_index(index, count, "constant") == (index if index < count else None)


def test_frames_past_the_end_are_padded_unless_pad_mode_is_none() -> None:
    out = decode(frames=[1, 12, 9], fill_value=[5])
    assert levels(out[[0, 2]]) == [1, 9] and (out[1] == 5).all()
    assert levels(decode(frames=[1, 12], pad_mode="edge")) == [1, 9]
    with pytest.raises(OperatorError, match="frame 12 does not exist"):
        decode(frames=[12], pad_mode="none")


def test_constant_padding_uses_fill_value() -> None:
    out = decode(start_frame=8, sequence_length=4, fill_value=[1, 2, 3])
    assert levels(out[:2]) == [8, 9]
    assert (out[2:] == [1, 2, 3]).all()


def test_per_sample_selection() -> None:
    out, _ = run_op(
        "decoders.video", [VIDEO, VIDEO], None, start_frame=PerSample([0, 5]), sequence_length=2
    )
    assert [levels(o) for o in out] == [[0, 1], [5, 6]]


def test_selection_argument_rules() -> None:
    with pytest.raises(RuntimeError, match="Cannot specify both `frames` and any of"):
        select_frames({"frames": [1], "stride": 2})
    with pytest.raises(ValueError, match="Cannot specify both `sequence_length` and `end_frame`"):
        select_frames({"end_frame": 3, "sequence_length": 2})
    with pytest.raises(ValueError, match="stride"):
        select_frames({"stride": 0})
    assert select_frames({}) == (None, 0, 1, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"frames": [3, -1]}, "must be non-negative, got -1"),
        ({"frames": [1], "start_frame": 0}, "Cannot specify both `frames`"),
        ({"end_frame": 4, "sequence_length": PerSample([2])}, "`sequence_length` and `end_frame`"),
        ({"start_frame": 20}, "past the end"),
        ({"fill_value": [1, 2]}, "1 or 3 values"),
        ({"pad_mode": "wrap"}, "must be one of"),
    ],
)
def test_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        decode(**kwargs)
    with pytest.raises((OperatorError, ValueError), match="cannot decode"):
        run_op("decoders.video", [np.frombuffer(b"not a video" * 20, np.uint8)], None)
