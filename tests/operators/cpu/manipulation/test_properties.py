"""``shapes``, ``get_property`` and ``experimental.peek_image_shape``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import feedline.readers.file as file_reader
from feedline import fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

SAMPLES = [np.zeros((2, 3), np.uint8), np.zeros((4, 1), np.uint8)]


def test_shapes_and_their_type() -> None:
    (default, layout), (floats, _) = build(
        lambda: (fn.shapes(feed(SAMPLES, "HW")), fn.shapes(feed(SAMPLES), dtype=types.FLOAT))
    )
    assert layout == ""
    assert default[0].dtype == np.int64 and [d.tolist() for d in default] == [[2, 3], [4, 1]]
    assert floats[1].dtype == np.float32 and floats[1].tolist() == [4.0, 1.0]
    ((scalar, _),) = build(lambda: fn.shapes(feed([np.int8(1), np.int8(2)])))
    assert scalar[0].shape == (0,)


def test_shapes_refuses_other_types() -> None:
    with pytest.raises(ValueError, match="'dtype' must be one of"):
        build(lambda: fn.shapes(feed(SAMPLES), dtype=types.UINT8))


def test_get_property_layout_as_bytes() -> None:
    (with_layout, layout), (without, _) = build(
        lambda: (
            fn.get_property(feed(SAMPLES, "HW"), key="layout"),
            fn.get_property(feed(SAMPLES), key="layout"),
        )
    )
    assert layout == ""
    assert with_layout[0].dtype == np.uint8 and bytes(with_layout[1]) == b"HW"
    assert without[0].shape == (0,)


def test_get_property_source_info_names_the_files(
    tmp_path: Path, empty_plugin_system: PluginSystem
) -> None:
    empty_plugin_system.register(file_reader, "file-reader")
    for label in ("a", "b"):
        (tmp_path / label).mkdir()
        (tmp_path / label / f"{label}.png").write_bytes(b"123")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.get_property(data, key="source_info")

    built = pipe()
    built.build()
    (out,) = built.run()
    names = [bytes(np.array(out.at(i))).decode() for i in range(2)]
    assert names == ["a/a.png", "b/b.png"]  # relative to file_root, as DALI reports them


def test_get_property_refuses_other_keys() -> None:
    with pytest.raises(ValueError, match="'key' must be one of 'source_info', 'layout'"):
        build(lambda: fn.get_property(feed(SAMPLES), key="shape"))


def _png(height: int, width: int) -> np.ndarray:
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((height, width, 3), np.uint8)).save(buffer, "PNG")
    return np.frombuffer(buffer.getvalue(), np.uint8)


def test_experimental_peek_image_shape_is_peek_image_shape() -> None:
    files = [_png(5, 7), _png(3, 2)]
    (old, _), (new, _) = build(
        lambda: (
            fn.experimental.peek_image_shape(feed(files), dtype=types.INT32),
            fn.peek_image_shape(feed(files), dtype=types.INT32),
        )
    )
    assert [o.tolist() for o in old] == [n.tolist() for n in new] == [[5, 7, 3], [3, 2, 3]]
    assert old[0].dtype == np.int32


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("shapes", OperatorExample([SAMPLES + SAMPLES[:1]], ["HW"])),
        ("get_property", OperatorExample([SAMPLES + SAMPLES[:1]], ["HW"], {"key": "layout"})),
        ("experimental.peek_image_shape", OperatorExample([[_png(4, 4), _png(2, 3)]])),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)


def test_experimental_resize_runs_as_resize() -> None:
    images = [np.arange(48, dtype=np.uint8).reshape(4, 4, 3)] * 2
    (old, _), (new, _) = build(
        lambda: (
            fn.experimental.resize(feed(images, "HWC"), size=[2, 6]),
            fn.resize(feed(images, "HWC"), size=[2, 6]),
        )
    )
    assert old[0].shape == (2, 6, 3)
    np.testing.assert_array_equal(old[0], new[0])
