"""``readers.video_resize`` resizes each frame exactly as ``resize`` does on the sequence read by
``readers.video``: sizes, regions of interest (absolute, relative, flipped), filters and
``antialias`` (needs PyAV)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import feedline.readers.video as video_plugin
from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.operators.cpu.image import schemas as image_plugin
from feedline.operators.cpu.python import schemas as python_plugin

av = pytest.importorskip("av", reason="the video readers need PyAV (feedline[video])")


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    for module, name in ((video_plugin, "video-reader"), (image_plugin, "image"),
                         (python_plugin, "python")):  # fmt: skip
        system.register(module, name)
    with use_plugin_system(system):
        yield


def write_textured_video(path: Path, count: int = 4, size: tuple[int, int] = (36, 52)) -> str:
    """An MPEG-4 video of diagonal colour ramps that move from frame to frame."""
    rows, cols = np.mgrid[: size[0], : size[1]]
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.height, stream.width = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"qscale": "1"}
        for k in range(count):
            image = np.stack([(rows * 7 + cols * 3 + 20 * k) % 256, (cols * 5) % 256,
                              (rows * 11 + 40 * k) % 256], axis=-1).astype(np.uint8)  # fmt: skip
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return str(path)


@pytest.fixture(scope="module")
def textured(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_textured_video(tmp_path_factory.mktemp("resize") / "ramps.mp4")


def _run(graph: Any) -> np.ndarray:
    pipe = graph()
    pipe.build()
    try:
        (out,) = pipe.run()
        return np.array(out.at(0))
    finally:
        pipe.close()


def read_resized(path: str, dtype: Any = types.UINT8, **resize: Any) -> np.ndarray:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph() -> Any:
        return fn.readers.video_resize(filenames=[path], sequence_length=3, dtype=dtype, **resize)

    return _run(graph)


def resized_by_resize(path: str, dtype: Any = types.UINT8, **resize: Any) -> np.ndarray:
    """The same clip from ``readers.video``, then ``resize`` (``FHWC``)."""

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def frames() -> Any:
        return fn.readers.video(filenames=[path], sequence_length=3, dtype=dtype)

    clip = _run(frames)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph() -> Any:
        data = fn.external_source(source=lambda: [clip], batch=True, layout="FHWC")
        return fn.resize(data, **resize)

    return _run(graph)


@pytest.mark.parametrize(
    "resize",
    [
        {"resize_x": 30, "roi_start": [4, 6], "roi_end": [30, 40]},
        {"size": [20, 26], "roi_start": [0.1, 0.9], "roi_end": [0.8, 0.2], "roi_relative": True},
        {"resize_shorter": 12, "antialias": False},
        {"resize_x": 70, "resize_y": 40, "interp_type": types.INTERP_CUBIC},
        {"resize_x": 20, "resize_y": 14, "min_filter": types.INTERP_NN,
         "mag_filter": types.INTERP_LANCZOS3},
        {"resize_x": 25, "resize_y": 17, "resize_z": 9},
        {"resize_x": 25.5, "resize_y": 17.25, "subpixel_scale": False},
    ],
)  # fmt: skip
def test_frames_equal_resize_of_the_read_clip(textured: str, resize: dict) -> None:
    mine = read_resized(textured, **resize)
    expected = resized_by_resize(textured, **resize)
    assert mine.shape == expected.shape and mine.dtype == np.uint8
    np.testing.assert_array_equal(mine, expected)


def test_float_frames_are_resized_as_float(textured: str) -> None:
    args = {"resize_x": 20, "resize_y": 12, "roi_start": [2, 2], "roi_end": [30, 40]}
    mine = read_resized(textured, dtype=types.FLOAT, **args)
    assert mine.dtype == np.float32
    np.testing.assert_array_equal(mine, resized_by_resize(textured, dtype=types.FLOAT, **args))


def test_a_flipped_region_mirrors_the_frame(textured: str) -> None:
    straight = read_resized(textured, resize_x=52, resize_y=36, antialias=False)
    flipped = read_resized(textured, resize_x=52, resize_y=36, roi_start=[0, 52],
                           roi_end=[36, 0], antialias=False)  # fmt: skip
    np.testing.assert_array_equal(flipped, straight[:, :, ::-1])


def test_antialias_changes_a_downscale(textured: str) -> None:
    smooth = read_resized(textured, resize_x=13, resize_y=9)
    sharp = read_resized(textured, resize_x=13, resize_y=9, antialias=False)
    assert smooth.shape == sharp.shape == (3, 9, 13, 3)
    assert not np.array_equal(smooth, sharp)


@settings(max_examples=8, deadline=None)
@given(
    start=st.tuples(st.floats(0, 0.45), st.floats(0, 0.45)),
    end=st.tuples(st.floats(0.55, 1), st.floats(0.55, 1)),
    width=st.integers(4, 80),
    antialias=st.booleans(),
)
def test_any_relative_region_resizes_as_resize(
    textured: str, start: tuple, end: tuple, width: int, antialias: bool
) -> None:
    args = {"resize_x": width, "roi_start": list(start), "roi_end": list(end),
            "roi_relative": True, "antialias": antialias}  # fmt: skip
    np.testing.assert_array_equal(
        read_resized(textured, **args), resized_by_resize(textured, **args)
    )


@pytest.mark.parametrize(
    ("resize", "message"),
    [
        ({"resize_x": 20, "roi_start": [1, 2, 3]}, "roi_start needs 2 values"),
        ({"resize_x": 20, "roi_end": [1]}, "roi_end needs 2 values"),
        ({"resize_z": 5}, "give resize_x/resize_y"),
        ({"resize_shorter": 10, "resize_x": 20}, "resize_shorter"),
    ],
)
def test_argument_errors(textured: str, resize: dict, message: str) -> None:
    with pytest.raises((ValueError, OperatorError), match=message):
        read_resized(textured, **resize)
