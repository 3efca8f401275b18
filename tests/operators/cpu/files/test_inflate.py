"""``decoders.inflate``: LZ4 blocks, chunked samples, layouts, errors (needs the lz4 extra)."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError, fn, types
from feedline.operators.cpu.files.inflate import chunk_bounds
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

lz4_block = pytest.importorskip("lz4.block", reason="decoders.inflate needs the 'lz4' extra")


def _deflate(array: np.ndarray) -> np.ndarray:
    return np.frombuffer(lz4_block.compress(array.tobytes(), store_size=False), np.uint8)


def test_single_chunk_round_trip() -> None:
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ((out, layout),) = build(
        lambda: fn.decoders.inflate(
            feed([_deflate(data)] * 2), shape=[2, 3, 4], dtype=types.FLOAT, layout="HWC"
        )
    )
    assert layout == "HWC" and out[0].dtype == np.float32
    np.testing.assert_array_equal(out[1], data)


@pytest.mark.parametrize("given", ["offsets", "sizes", "both"])
def test_chunks_stack_along_the_sequence_axis(given: str) -> None:
    frames = [np.full((2, 2), i, np.uint8) for i in range(3)]
    pieces = [_deflate(f) for f in frames]
    sizes = [p.size for p in pieces]
    offsets = [sum(sizes[:i]) for i in range(3)]
    kwargs = {
        "offsets": {"chunk_offsets": offsets},
        "sizes": {"chunk_sizes": sizes},
        "both": {"chunk_offsets": offsets, "chunk_sizes": sizes},
    }[given]
    ((out, layout),) = build(
        lambda: fn.decoders.inflate(
            feed([np.concatenate(pieces)] * 2), shape=[2, 2], layout="HW", **kwargs
        )
    )
    assert layout == "FHW"
    np.testing.assert_array_equal(out[0], np.stack(frames))


def test_chunk_bounds() -> None:
    assert chunk_bounds(10, None, None) == [(0, 10)]
    assert chunk_bounds(10, [0, 4], None) == [(0, 4), (4, 10)]
    assert chunk_bounds(10, None, [3, 5]) == [(0, 3), (3, 8)]
    with pytest.raises(ValueError, match="outside the sample"):
        chunk_bounds(10, [0, 8], [4, 4])


def test_errors() -> None:
    data = _deflate(np.zeros(8, np.uint8))
    with pytest.raises(OperatorError, match="not valid LZ4 data|inflates to"):
        build(lambda: fn.decoders.inflate(feed([data] * 2), shape=[100]))
    with pytest.raises(ValueError, match="'shape' is required"):
        build(lambda: fn.decoders.inflate(feed([data] * 2)))


def test_check_operator() -> None:
    data = _deflate(np.arange(12, dtype=np.int16))
    example = OperatorExample([[data] * 3], args={"shape": [3, 4], "dtype": types.INT16})
    assert "threads" in check_operator("decoders.inflate", example)
