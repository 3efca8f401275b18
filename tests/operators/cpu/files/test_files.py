"""``io.file.read`` and ``decoders.numpy``."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, types
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
    ],
)
def test_decoders_numpy_errors(data: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_npy(data)


def test_check_operator(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"abc")
    read = OperatorExample([[_path(tmp_path / "x")] * 3])
    assert "threads" in check_operator("io.file.read", read)
    arrays = OperatorExample([[_npy(np.arange(4, dtype=np.float32) + i) for i in range(3)]])
    assert "threads" in check_operator("decoders.numpy", arrays)
