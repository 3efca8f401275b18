"""Writes TFRecord files of ``tf.train.Example`` records for the tests (a protobuf encoder
written from the wire-format specification, independent of the reader's parser)."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from pathlib import Path


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def feature(values: Sequence[object], packed: bool = True) -> bytes:
    """A ``Feature`` message: bytes, float or int values (by the first value's type)."""
    first = values[0] if values else 0
    if isinstance(first, bytes):
        inner = b"".join(field(1, v) for v in values)  # type: ignore[arg-type]
        return field(1, inner)
    if isinstance(first, float):
        if packed:
            inner = field(1, struct.pack(f"<{len(values)}f", *values))
        else:
            inner = b"".join(varint(1 << 3 | 5) + struct.pack("<f", v) for v in values)
        return field(2, inner)
    if packed:
        inner = field(1, b"".join(varint(int(v)) for v in values))  # type: ignore[call-overload]
    else:
        inner = b"".join(varint(1 << 3 | 0) + varint(int(v)) for v in values)  # type: ignore[call-overload]
    return field(3, inner)


def example(features: Mapping[str, bytes]) -> bytes:
    """A serialized ``tf.train.Example`` from encoded ``Feature`` messages."""
    entries = b"".join(field(1, field(1, k.encode()) + field(2, v)) for k, v in features.items())
    return field(1, entries)


def write_tfrecord(path: Path, records: Sequence[bytes]) -> list[tuple[int, int]]:
    """Write the records with TFRecord framing; return ``(offset, size)`` of each."""
    out, index = bytearray(), []
    for record in records:
        index.append((len(out), 16 + len(record)))
        out += struct.pack("<QI", len(record), 0) + record + struct.pack("<I", 0)
    path.write_bytes(bytes(out))
    return index
