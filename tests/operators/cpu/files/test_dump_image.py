"""``dump_image``: writes DALI-named ASCII Netpbm files and passes the batch through."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn
from feedline.operators.cpu.files.dump import netpbm_text
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed


def _parse(text: str) -> tuple[str, np.ndarray]:
    magic, size, maxval, *rows = text.splitlines()
    width, height = map(int, size.split())
    assert maxval == "255"
    values = np.array([int(v) for row in rows for v in row.split()], np.uint8)
    channels = 3 if magic == "P3" else 1
    return magic, values.reshape(height, width, channels)


@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 6), st.integers(1, 6), st.sampled_from([1, 3])),
    )
)
@settings(max_examples=40, deadline=None)
def test_text_round_trips(image: np.ndarray) -> None:
    text = netpbm_text(image)
    magic, back = _parse(text)
    assert magic == ("P3" if image.shape[2] == 3 else "P2")
    np.testing.assert_array_equal(back, image)
    assert all(line.endswith(" ") for line in text.splitlines()[3:])


def test_writes_one_file_per_sample_and_passes_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    images = [np.full((2, 3, 3), i, np.uint8) for i in range(3)]
    ((out, layout),) = build(lambda: fn.dump_image(feed(images, "HWC"), suffix="x"), 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0-x-0.ppm", "1-x-0.ppm", "2-x-0.ppm"]
    assert layout == "HWC"
    for i, image in enumerate(images):
        np.testing.assert_array_equal(out[i], image)
        np.testing.assert_array_equal(_parse((tmp_path / f"{i}-x-0.ppm").read_text())[1], image)


def test_default_suffix_gives_two_dashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    build(lambda: fn.dump_image(feed([np.zeros((1, 1, 1), np.uint8)], "HWC")), 1)
    assert (tmp_path / "0--0.ppm").read_text() == "P2\n1 1\n255\n0 \n"


@pytest.mark.parametrize(
    ("image", "args", "message"),
    [
        (np.zeros((2, 2), np.uint8), {}, "three dimensions"),
        (np.zeros((2, 2, 4), np.uint8), {}, "got 4 channels"),
        (np.zeros((2, 2, 3), np.float32), {}, "must be uint8, got float32"),
    ],
)
def test_errors(
    image: np.ndarray, args: dict, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OperatorError, match=message):
        build(lambda: fn.dump_image(feed([image]), **args), 1)


def test_only_hwc_layout_is_accepted_when_building() -> None:
    with pytest.raises(ValueError, match="input_layout 'CHW' is not supported; only HWC is"):
        build(lambda: fn.dump_image(feed([np.zeros((3, 2, 2), np.uint8)]), input_layout="CHW"), 1)


def test_check_operator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    images = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + i for i in range(4)]
    example = OperatorExample(inputs=[images], layouts=["HWC"])
    assert "threads" in check_operator("dump_image", example)
