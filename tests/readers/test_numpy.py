"""fn.readers.numpy: modes, dtypes and orders, ROI arguments and policies, sharding, errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import feedline.readers.numpy as numpy_plugin
from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.readers.numpy_roi import extract_roi, roi_bounds


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(numpy_plugin, "numpy-reader")
    with use_plugin_system(system):
        yield


def read_all(batch_size: int = 2, iterations: int = 1, **kwargs: Any) -> list[np.ndarray]:
    """The samples of ``iterations`` batches of ``readers.numpy(**kwargs)``."""

    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe() -> Any:
        return fn.readers.numpy(name="Reader", **kwargs)

    p = pipe()
    try:
        p.build()
        out = []
        for _ in range(iterations):
            (data,) = p.run()
            out += [data.at(i) for i in range(len(data))]
        return out
    finally:
        p.close()


@pytest.fixture
def arrays(tmp_path: Path) -> dict[str, np.ndarray]:
    """Files in the root and in nested sub-directories, plus one that the filter skips."""
    made = {
        "a.npy": np.arange(12, dtype=np.float32).reshape(3, 4),
        "sub/b.npy": np.array([[1, 2], [3, 4]], dtype=np.int64, order="F"),
        "sub/deep/c.npy": np.arange(5, dtype=">i4"),
        "z.npy": np.array([True, False]),
    }
    for name, array in made.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        np.save(tmp_path / name, array)
    (tmp_path / "notes.txt").write_text("not an array")
    return made


def test_directory_walk_reads_the_root_then_one_level_of_sub_directories(
    tmp_path: Path, arrays: dict[str, np.ndarray]
) -> None:
    # one file per batch: the files differ in type and dimensions, which one batch refuses
    got = read_all(batch_size=1, iterations=3, file_root=str(tmp_path))
    names = ["a.npy", "z.npy", "sub/b.npy"]  # root files first; sub/deep is not walked (DALI)
    for array, name in zip(got, names, strict=True):
        np.testing.assert_array_equal(array, arrays[name])
        assert array.flags.c_contiguous
    only_sub = read_all(batch_size=1, file_root=str(tmp_path), file_filter="[bc].npy")
    assert only_sub[0].tolist() == [[1, 2], [3, 4]]
    deep = read_all(batch_size=1, file_root=str(tmp_path / "sub"), file_filter="c.npy")
    np.testing.assert_array_equal(deep[0], arrays["sub/deep/c.npy"])  # big-endian, converted
    assert deep[0].dtype == np.dtype("=i4")


def test_file_list_and_files_modes(tmp_path: Path, arrays: dict[str, np.ndarray]) -> None:
    listing = tmp_path / "list.txt"
    listing.write_text("z.npy\n\nsub/b.npy\n")
    got = read_all(batch_size=1, iterations=2, file_list=str(listing))
    assert got[0].tolist() == [True, False] and got[1].tolist() == [[1, 2], [3, 4]]
    got = read_all(batch_size=1, file_root=str(tmp_path), files=["sub/deep/c.npy"])
    assert got[0].tolist() == [0, 1, 2, 3, 4]


def test_source_info_sharding_and_epoch_size(tmp_path: Path) -> None:
    for i in range(5):
        np.save(tmp_path / f"{i}.npy", np.full(2, i, np.int16))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        return fn.readers.numpy(
            file_root=str(tmp_path), num_shards=2, shard_id=1, name="Reader", pad_last_batch=True
        )

    p = pipe()
    p.build()
    assert p.reader_meta("Reader")["epoch_size"] == 5
    assert p.epoch_size("Reader") == 6  # padded: ceil(5 / 2) * 2
    (data,) = p.run()
    assert [data.at(i)[0] for i in range(2)] == [2, 3]
    assert data.source_info(0) == "2.npy"
    (data,) = p.run()
    assert [data.at(i)[0] for i in range(2)] == [4, 4]  # padded with the shard's last sample
    p.close()


def test_roi_absolute_relative_axes_and_policies(tmp_path: Path) -> None:
    image = np.arange(60, dtype=np.uint8).reshape(6, 10)
    np.save(tmp_path / "x.npy", image)
    root = str(tmp_path)
    (got,) = read_all(1, file_root=root, roi_start=[1, 2], roi_end=[3, 5])
    np.testing.assert_array_equal(got, image[1:3, 2:5])
    (got,) = read_all(1, file_root=root, rel_roi_start=[0.5], rel_roi_shape=[0.25], roi_axes=[1])
    np.testing.assert_array_equal(got, image[:, 5:8])  # 2.5 rounds to 3 elements
    (got,) = read_all(1, file_root=root, roi_start=[4], roi_shape=[4], roi_axes=[0],
                      out_of_bounds_policy="trim_to_shape")  # fmt: skip
    np.testing.assert_array_equal(got, image[4:6])
    (got,) = read_all(1, file_root=root, roi_start=[-1, 8], roi_end=[1, 12],
                      out_of_bounds_policy="pad", fill_value=7)  # fmt: skip
    expected = np.full((2, 4), 7, np.uint8)
    expected[1, :2] = image[0, 8:10]
    np.testing.assert_array_equal(got, expected)
    (got,) = read_all(1, file_root=root, roi_start=[5, 0], roi_end=[7, 1],
                      out_of_bounds_policy="pad", fill_value=300.0)  # fmt: skip
    assert got.tolist() == [[50], [255]]  # the fill saturates to uint8 (DALI's ConvertSat)
    with pytest.raises(OperatorError, match=r"out of bounds.*x.npy|x.npy.*out of bounds"):
        read_all(1, file_root=root, roi_start=[0, 0], roi_end=[7, 1])


@settings(max_examples=60)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_pad_policy_equals_padding_then_slicing(shape: list[int], data: st.DataObject) -> None:
    array = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    starts = [data.draw(st.integers(-3, n + 2)) for n in shape]
    ends = [s + data.draw(st.integers(0, 6)) for s in starts]
    bounds = list(zip(starts, ends, strict=True))
    padded = np.pad(array, [(6, 9)] * len(shape), constant_values=-5)
    expected = padded[tuple(slice(s + 6, e + 6) for s, e in bounds)]
    np.testing.assert_array_equal(extract_roi(array, bounds, "pad", -5), expected)
    trimmed = extract_roi(array, bounds, "trim_to_shape", 0)
    clipped = tuple(slice(max(s, 0), max(max(s, 0), min(e, n))) for (s, e), n in
                    zip(bounds, shape, strict=True))  # fmt: skip
    np.testing.assert_array_equal(trimmed, array[clipped])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"roi_start": [0], "rel_roi_start": [0.0]}, "mutually exclusive"),
        ({"roi_end": [1], "roi_shape": [1]}, "mutually exclusive"),
        ({"roi_start": [0, 0, 0]}, "3 values, expected 2"),
        ({"roi_start": [0], "roi_axes": [5]}, "roi_axes"),
        ({"roi_start": [3], "roi_end": [1], "roi_axes": [0]}, "ends"),
    ],
)
def test_roi_argument_errors(args: dict[str, Any], message: str) -> None:
    full = {k: args.get(k) for k in ("roi_start", "rel_roi_start", "roi_end", "rel_roi_end",
                                      "roi_shape", "rel_roi_shape")}  # fmt: skip
    full["roi_axes"] = args.get("roi_axes", ())
    with pytest.raises(ValueError, match=message):
        roi_bounds(full, (4, 4))


def test_mode_and_file_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "ok.npy", np.zeros(2))
    (tmp_path / "bad.npy").write_bytes(b"not numpy at all")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    root = str(tmp_path)
    with pytest.raises(ValueError, match="mutually exclusive"):
        read_all(1, file_list="x", files=["ok.npy"])
    with pytest.raises(ValueError, match="matches file_filter"):
        read_all(1, file_root=root, file_filter="*.bin")
    with pytest.raises(OperatorError, match=r"bad.npy.*not a valid .npy"):
        read_all(1, file_root=root, files=["bad.npy"])
    with pytest.raises(OperatorError, match=r"obj.npy.*not supported"):
        read_all(1, file_root=root, files=["obj.npy"])
    with pytest.raises(ValueError, match="use_o_direct=True needs dont_use_mmap=True"):
        read_all(1, file_root=root, use_o_direct=True)
    with pytest.raises(TypeError, match="per sample"):

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe() -> Any:
            axes = fn.readers.numpy(file_root=root, files=["ok.npy"])
            return fn.readers.numpy(file_root=root, roi_start=[0], roi_axes=axes)

        pipe().build()


def test_header_cache_and_plain_reads(tmp_path: Path) -> None:
    np.save(tmp_path / "v.npy", np.arange(6, dtype=np.uint16).reshape(2, 3))
    got = read_all(1, iterations=3, file_root=str(tmp_path), cache_header_information=True,
                   dont_use_mmap=True)  # fmt: skip
    assert all(g.tolist() == [[0, 1, 2], [3, 4, 5]] for g in got)


def test_o_direct_reads_where_the_file_system_allows(tmp_path: Path) -> None:
    expected = np.arange(3000, dtype=np.float64)
    np.save(tmp_path / "d.npy", expected)
    try:
        fd = os.open(tmp_path / "d.npy", os.O_RDONLY | getattr(os, "O_DIRECT", 0))
        os.close(fd)
    except OSError:
        pytest.skip("this file system does not support O_DIRECT")
    try:
        (got,) = read_all(1, file_root=str(tmp_path), use_o_direct=True, dont_use_mmap=True)
    except OperatorError as exc:
        if "O_DIRECT" in str(exc) and "Invalid argument" in str(exc):
            pytest.skip("O_DIRECT reads are refused by this file system")
        raise
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.longdouble])
def test_element_types_without_a_sample_type_are_refused(tmp_path: Path, dtype: Any) -> None:
    np.save(tmp_path / "x.npy", np.ones(3, dtype=dtype))
    with pytest.raises(RuntimeError, match=r"x.npy.*Unknown Numpy type string"):
        read_all(1, file_root=str(tmp_path))


@pytest.mark.parametrize(
    ("second", "words"),
    [
        (np.zeros((2, 3, 4), np.float32), "same number of dimensions"),
        (np.zeros((2, 3), np.int32), r"same data type.*float32.*int32"),
    ],
)
def test_one_batch_must_agree_in_type_and_dimensions(
    tmp_path: Path, second: np.ndarray, words: str
) -> None:
    np.save(tmp_path / "a.npy", np.zeros((3, 4), np.float32))
    np.save(tmp_path / "b.npy", second)
    with pytest.raises(RuntimeError, match=f"Inconsistent data: All samples.*{words}"):
        read_all(2, file_root=str(tmp_path))
    assert len(read_all(1, iterations=2, file_root=str(tmp_path))) == 2


def test_empty_roi_arguments_read_whole_arrays(tmp_path: Path) -> None:
    array = np.arange(12, dtype=np.int16).reshape(3, 4)
    np.save(tmp_path / "a.npy", array)
    for empty in (
        {"roi_start": [], "roi_end": [], "roi_axes": []},
        {"rel_roi_start": [], "rel_roi_shape": []},
    ):
        (out,) = read_all(1, file_root=str(tmp_path), **empty)
        np.testing.assert_array_equal(out, array)
    assert roi_bounds({"roi_start": [], "roi_end": [2, 3]}, (3, 4)) == [(0, 2), (0, 3)]


def test_roi_arguments_given_per_sample(tmp_path: Path) -> None:
    """The per-sample values come from readers of small arrays (one file per sample)."""
    arrays = [np.arange(30, dtype=np.int32).reshape(5, 6) + 100 * i for i in range(4)]
    folders = {name: tmp_path / name for name in ("data", "start", "shape", "rel_end")}
    for folder in folders.values():
        folder.mkdir()
    for i, array in enumerate(arrays):
        np.save(folders["data"] / f"{i}.npy", array)
        np.save(folders["start"] / f"{i}.npy", np.int32([i, 0]))
        np.save(folders["shape"] / f"{i}.npy", np.int32([2, 3 + i % 2]))
        np.save(folders["rel_end"] / f"{i}.npy", np.float32([0.5]))

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def pipe() -> Any:
        start, shape, rel_end = (
            fn.readers.numpy(file_root=str(folders[name])) for name in ("start", "shape", "rel_end")
        )
        data = str(folders["data"])
        by_shape = fn.readers.numpy(file_root=data, roi_start=start, roi_shape=shape)
        by_rel = fn.readers.numpy(file_root=data, rel_roi_end=rel_end, roi_axes=[1])
        return by_shape, by_rel

    p = pipe()
    try:
        p.build()
        by_shape, by_rel = p.run()
    finally:
        p.close()
    for i, array in enumerate(arrays):
        np.testing.assert_array_equal(np.asarray(by_shape[i]), array[i : i + 2, : 3 + i % 2])
        np.testing.assert_array_equal(np.asarray(by_rel[i]), array[:, :3])


def test_per_sample_roi_refuses_skipping_failed_samples(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros((2, 2)))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        start = fn.readers.numpy(file_root=str(tmp_path))
        return fn.readers.numpy(file_root=str(tmp_path), roi_start=start, on_error="skip")

    with pytest.raises(ValueError, match="on_error"):
        pipe().build()
