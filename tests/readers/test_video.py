"""The video readers on the CPU: sequences, outputs, padding, file lists, resizing, errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import feedline.readers.video as video_plugin
from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.operators.cpu.image import schemas as image_plugin
from feedline.readers.video_index import sequence_starts
from feedline.testing import check_reader
from tests.readers.video_data import frame_levels, write_variable_rate_video, write_video

av = pytest.importorskip("av", reason="the video readers need PyAV (feedline[video])")


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(video_plugin, "video-reader")
    system.register(image_plugin, "image")  # readers.video_resize resizes with resize
    with use_plugin_system(system):
        yield


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("videos")
    return {
        "twelve": write_video(root / "twelve.mp4", 12),
        "seven": write_video(root / "seven.mp4", 7),
    }


def read(op: str, batch: int, num_threads: int = 1, **args: Any) -> list[list[np.ndarray]]:
    @pipeline_def(batch_size=batch, num_threads=num_threads, device_id=None, seed=3)
    def pipe():  # type: ignore[no-untyped-def]
        target = fn
        for part in op.split("."):
            target = getattr(target, part)
        outputs = target(**args)
        return tuple(outputs) if isinstance(outputs, list) else outputs

    p = pipe()
    p.build()
    try:
        return [[np.array(tl.at(i)) for i in range(batch)] for tl in p.run()]
    finally:
        p.close()


def test_sequence_starts_rule() -> None:
    assert sequence_starts(0, 12, 3, 1, 3, False) == [0, 3, 6, 9]
    assert sequence_starts(0, 12, 3, 2, 5, False) == [0, 5]  # a sequence spans 5 frames
    assert sequence_starts(0, 7, 5, 1, 5, True) == [0, 5]
    assert sequence_starts(2, 4, 5, 1, 5, False) == []


@pytest.mark.parametrize("op", ["readers.video", "experimental.readers.video"])
def test_sequences_step_and_stride(op: str, videos: dict[str, str]) -> None:
    (frames,) = read(op, 4, filenames=[videos["twelve"]], sequence_length=3)
    assert frames[0].shape == (3, 32, 48, 3) and frames[0].dtype == np.uint8
    assert [frame_levels(f) for f in frames] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    (frames,) = read(op, 3, filenames=[videos["twelve"]], sequence_length=3, stride=2, step=5)
    assert [frame_levels(f) for f in frames] == [[0, 2, 4], [5, 7, 9], [0, 2, 4]]


def test_labels_frame_numbers_and_timestamps(videos: dict[str, str]) -> None:
    files = [videos["seven"], videos["twelve"]]
    _, labels, numbers, times = read(
        "experimental.readers.video", 3, filenames=files, labels=[4, 9], sequence_length=2,
        stride=3, step=4, enable_frame_num="sequence", enable_timestamps=True,
    )  # fmt: skip
    assert [int(x[0]) for x in labels] == [4, 9, 9] and labels[0].dtype == np.int32
    assert [n.tolist() for n in numbers] == [[0, 3], [0, 3], [4, 7]]
    np.testing.assert_allclose(times[2], [0.4, 0.7])  # 10 frames per second
    assert times[2].dtype == np.float64
    outputs = read("readers.video", 2, filenames=files, labels=[], sequence_length=2, step=3,
                   enable_frame_num=True)  # fmt: skip
    assert [int(x[0]) for x in outputs[1]] == [0, 0] and [int(x[0]) for x in outputs[2]] == [0, 3]


def test_no_label_output_without_labels(videos: dict[str, str]) -> None:
    outputs = read("readers.video", 1, filenames=[videos["seven"]], sequence_length=2)
    assert len(outputs) == 1


def test_legacy_padding_zeroes_frames(videos: dict[str, str]) -> None:
    frames, _, numbers, times = read(
        "readers.video", 2, filenames=[videos["seven"]], labels=[1], sequence_length=5,
        pad_sequences=True, enable_frame_num="sequence", enable_timestamps=True,
    )  # fmt: skip
    assert frame_levels(frames[1]) == [5, 6, -1, -1, -1]
    assert (frames[1][2:] == 0).all()
    assert numbers[1].tolist() == [5, 6, -1, -1, -1]
    np.testing.assert_allclose(times[1], [0.5, 0.6, -1, -1, -1], atol=1e-6)


PADDED = {"none": [[0, 1, 2, 3, 4]] * 2, "edge": [[0, 1, 2, 3, 4], [5, 6, 6, 6, 6]]}


@pytest.mark.parametrize(("mode", "expected"), list(PADDED.items()))
def test_experimental_pad_modes(mode: str, expected: list, videos: dict[str, str]) -> None:
    (frames,) = read("experimental.readers.video", 2, filenames=[videos["seven"]],
                     sequence_length=5, pad_mode=mode)  # fmt: skip
    assert [frame_levels(f) for f in frames] == expected


def test_constant_padding_uses_fill_value(videos: dict[str, str]) -> None:
    (frames,) = read("experimental.readers.video", 2, filenames=[videos["seven"]],
                     sequence_length=5, pad_mode="constant", fill_value=[200, 100, 50])  # fmt: skip
    assert (frames[1][3] == [200, 100, 50]).all()


def test_uniform_sample_spreads_frames(videos: dict[str, str]) -> None:
    files = [videos["twelve"], videos["seven"]]
    _, numbers = read("experimental.readers.video", 2, filenames=files, sequence_length=5,
                      uniform_sample=True, enable_frame_num="sequence")  # fmt: skip
    assert [n.tolist() for n in numbers] == [[0, 3, 6, 8, 11], [0, 2, 3, 5, 6]]


def test_file_list_bounds(tmp_path: Path, videos: dict[str, str]) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text(f"{videos['twelve']} 3 0.3 0.8\n{videos['seven']} 5\n"
                       f"{videos['twelve']} 1 2 6\n")  # fmt: skip
    _, labels, numbers = read("experimental.readers.video", 5, file_list=str(listing),
                              sequence_length=2, enable_frame_num="sequence")  # fmt: skip
    assert [n.tolist() for n in numbers] == [[3, 4], [5, 6], [0, 1], [2, 3], [4, 5]]
    assert [int(x[0]) for x in labels] == [3, 3, 5, 5, 5]
    _, labels, numbers = read("experimental.readers.video", 5, file_list=str(listing),
                              sequence_length=2, enable_frame_num="sequence",
                              file_list_format="frames")  # fmt: skip
    assert [n.tolist() for n in numbers] == [[0, 1], [2, 3], [4, 5], [2, 3], [4, 5]]
    _, _, numbers = read("readers.video", 3, file_list=str(listing), sequence_length=2,
                         enable_frame_num="sequence", file_list_frame_num=True)  # fmt: skip
    assert numbers[0].tolist() == [0, 1]


def test_file_root_classes(tmp_path: Path) -> None:
    for name, count in (("cats", 4), ("dogs", 6)):
        (tmp_path / name).mkdir()
        write_video(tmp_path / name / "clip.mp4", count)
    _, labels = read("readers.video", 5, file_root=str(tmp_path), sequence_length=2)
    assert [int(x[0]) for x in labels] == [0, 0, 1, 1, 1]


def test_float_and_ycbcr_frames(videos: dict[str, str]) -> None:
    (raw,) = read("readers.video", 1, filenames=[videos["seven"]], sequence_length=2)
    (scaled,) = read("readers.video", 1, filenames=[videos["seven"]], sequence_length=2,
                     dtype=types.FLOAT, normalized=True)  # fmt: skip
    assert scaled[0].dtype == np.float32
    np.testing.assert_allclose(scaled[0], raw[0] / 255.0, atol=1e-6)
    (ycc,) = read("readers.video", 1, filenames=[videos["seven"]], sequence_length=2,
                  image_type=types.YCbCr)  # fmt: skip
    grey = raw[0][0, 0, 0, 0]
    assert abs(int(ycc[0][0, 0, 0, 1]) - 128) <= 2 and abs(int(ycc[0][0, 0, 0, 0]) - grey) <= 20


def test_video_resize(videos: dict[str, str]) -> None:
    (frames,) = read("readers.video_resize", 1, filenames=[videos["seven"]], sequence_length=2,
                     resize_x=24)  # fmt: skip
    assert frames[0].shape == (2, 16, 24, 3)
    (frames,) = read("readers.video_resize", 1, filenames=[videos["seven"]], sequence_length=2,
                     resize_shorter=64)  # fmt: skip
    assert frames[0].shape == (2, 64, 96, 3)
    assert frame_levels(frames[0]) == [0, 1]


def test_same_samples_for_any_thread_count(videos: dict[str, str]) -> None:
    args = {"filenames": [videos["twelve"], videos["seven"]], "sequence_length": 3,
            "random_shuffle": True, "labels": []}  # fmt: skip
    one, three = read("readers.video", 4, 1, **args), read("readers.video", 4, 3, **args)
    for a, b in zip(one, three, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_sharding_and_checkpoints(videos: dict[str, str]) -> None:
    args = {"filenames": [videos["twelve"], videos["seven"]], "sequence_length": 2,
            "labels": [], "enable_frame_num": True}  # fmt: skip
    assert check_reader("readers.video", args)


def test_corrupt_and_truncated_videos_are_named(tmp_path: Path, videos: dict[str, str]) -> None:
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(200))
    with pytest.raises((ValueError, OperatorError), match=r"broken\.mp4"):
        read("readers.video", 1, filenames=[str(broken)], sequence_length=2)
    whole = Path(videos["twelve"]).read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises((ValueError, OperatorError), match=r"cut\.mp4"):
        read("readers.video", 1, filenames=[str(cut)], sequence_length=2)


def test_variable_frame_rate(tmp_path: Path) -> None:
    path = write_variable_rate_video(tmp_path / "uneven.mp4", [0, 100, 200, 250, 300, 450])
    with pytest.raises((ValueError, OperatorError), match=r"uneven\.mp4.*skip_vfr_check"):
        read("readers.video", 1, filenames=[path], sequence_length=6)
    (legacy,) = read("readers.video", 1, filenames=[path], sequence_length=6, skip_vfr_check=True)
    # experimental.readers.video has no such check (nor the argument), as in DALI
    (frames,) = read("experimental.readers.video", 1, filenames=[path], sequence_length=6)
    assert frame_levels(legacy[0]) == frame_levels(frames[0]) == list(range(6))
    with pytest.raises((TypeError, OperatorError), match="skip_vfr_check"):
        read("experimental.readers.video", 1, filenames=[path], sequence_length=6,
             skip_vfr_check=True)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [({"sequence_length": 0}, "sequence_length"),
     ({"sequence_length": 2, "dtype": types.INT16}, "dtype"),
     ({"sequence_length": 2, "enable_frame_num": "every"}, "enable_frame_num"),
     ({"sequence_length": 50}, "no complete sequence")],
)  # fmt: skip
def test_argument_errors(args: dict, message: str, videos: dict[str, str]) -> None:
    with pytest.raises((ValueError, OperatorError), match=message):
        read("readers.video", 1, filenames=[videos["seven"]], **args)
    with pytest.raises((ValueError, OperatorError), match="exactly one of"):
        read("readers.video", 1, filenames=[videos["seven"]], file_list="x.txt", sequence_length=2)


def test_legacy_names_read_the_same(videos: dict[str, str]) -> None:
    args = {"filenames": [videos["seven"]], "sequence_length": 2}
    (legacy,) = read("video_reader", 2, **args)
    (current,) = read("readers.video", 2, **args)
    np.testing.assert_array_equal(legacy[1], current[1])
    (resized,) = read("video_reader_resize", 1, resize_x=24, **args)
    assert resized[0].shape == (2, 16, 24, 3)
