"""``io.file.read`` and ``decoders.numpy``."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, pipeline_def, types
from feedline.operators.cpu.files.kernels import decode_npy
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed


def _path(path: Path) -> np.ndarray:
    return np.frombuffer(str(path).encode("utf-8"), np.uint8)


def _npy(array: np.ndarray) -> np.ndarray:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return np.frombuffer(buffer.getvalue(), np.uint8)


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_file_read_returns_the_bytes(tmp_path: Path, dont_use_mmap: bool) -> None:
    (tmp_path / "a.bin").write_bytes(b"hello")
    (tmp_path / "empty.bin").write_bytes(b"")
    paths = [_path(tmp_path / "a.bin"), _path(tmp_path / "empty.bin")]
    ((out, layout),) = build(lambda: fn.io.file.read(feed(paths), dont_use_mmap=dont_use_mmap))
    assert layout == "" and out[0].dtype == np.uint8
    assert out[0].tobytes() == b"hello" and out[1].size == 0


def test_file_read_errors(tmp_path: Path) -> None:
    with pytest.raises(OperatorError, match="cannot read file .*nope.bin"):
        build(lambda: fn.io.file.read(feed([_path(tmp_path / "nope.bin")] * 2)))
    with pytest.raises(OperatorError, match="Unexpected input data type"):
        build(lambda: fn.io.file.read(feed([np.array([1, 2], np.int32)] * 2)))
    with pytest.raises(ValueError, match="use_o_direct=True is not supported"):
        build(lambda: fn.io.file.read(feed([_path(tmp_path)] * 2), use_o_direct=True))


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        hnp.scalar_dtypes().filter(lambda d: d.kind in "biuf"),
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
    )
)
def test_npy_round_trip(array: np.ndarray) -> None:
    np.testing.assert_array_equal(decode_npy(_npy(array)), array)
    fortran = np.asfortranarray(array)
    decoded = decode_npy(_npy(fortran))
    assert decoded.flags.c_contiguous
    np.testing.assert_array_equal(decoded, array)


def test_decoders_numpy_keeps_shape_and_type_or_converts() -> None:
    data = np.arange(6, dtype=np.int16).reshape(2, 3)
    (same, _), (converted, _) = build(
        lambda: (
            fn.decoders.numpy(feed([_npy(data)] * 2)),
            fn.decoders.numpy(feed([_npy(data)] * 2), dtype=types.FLOAT),
        )
    )
    assert same[0].dtype == np.int16 and same[0].tolist() == data.tolist()
    assert converted[0].dtype == np.float32 and converted[0].tolist() == data.tolist()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (np.frombuffer(b"garbage!", np.uint8), "bad magic string"),
        (_npy(np.array([1 + 2j])), "not supported"),
        (_npy(np.zeros(5, np.int32))[:-4], "Expected data numpy size 148 bytes .* actual size 144"),
        (np.concatenate([_npy(np.zeros(5, np.int32)), np.zeros(3, np.uint8)]), "actual size 151"),
    ],
)
def test_decoders_numpy_errors(data: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_npy(data)


@pytest.mark.parametrize(
    ("second", "cast", "message"),
    [
        (np.zeros((2, 3, 1), np.float32), None, "same number of dimensions, .* 2 and 3"),
        (np.zeros((2, 3), np.int32), None, "same data type, .* float32 and int32"),
        (np.zeros((2, 3, 1), np.float32), types.FLOAT, "same number of dimensions"),
    ],
)
def test_decoders_numpy_samples_must_match_the_first_one(second, cast, message) -> None:
    first = _npy(np.zeros((2, 3), np.float32))
    batches = iter([[first], [_npy(second)]])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.numpy(fn.external_source(source=lambda: next(batches)), dtype=cast)

    built = pipe()
    built.build()
    built.run()  # the first iteration sets the reference
    with pytest.raises(OperatorError, match=message):
        built.run()


def test_decoders_numpy_takes_other_types_when_converting() -> None:
    data = [_npy(np.ones((2, 3), np.float32)), _npy(np.ones((2, 3), np.int32))]
    ((decoded, _),) = build(lambda: fn.decoders.numpy(feed(data), dtype=types.FLOAT))
    assert all(d.dtype == np.float32 and d.tolist() == [[1.0] * 3] * 2 for d in decoded)


def test_check_operator(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"abc")
    read = OperatorExample([[_path(tmp_path / "x")] * 3])
    assert "threads" in check_operator("io.file.read", read)
    arrays = OperatorExample([[_npy(np.arange(4, dtype=np.float32) + i) for i in range(3)]])
    assert "threads" in check_operator("decoders.numpy", arrays)
