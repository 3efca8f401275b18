"""Test data for the LMDB readers: a tiny protobuf encoder and Caffe/Caffe2 databases."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path


def varint(value: int) -> bytes:
    """A protobuf varint (negative numbers as 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: int | bytes) -> bytes:
    """One field: a varint (int) or a length-delimited value (bytes)."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def datum(data: bytes, label: int) -> bytes:
    """A Caffe ``Datum`` with encoded image bytes and a label."""
    return field(1, 3) + field(2, 1) + field(3, 1) + field(4, data) + field(5, label) + field(7, 1)


def tensor(dtype: int, dims: Sequence[int] = (), *, ints: Sequence[int] = (),
           floats: Sequence[float] = (), strings: Sequence[bytes] = (),
           raw: bytes | None = None) -> bytes:  # fmt: skip
    """A Caffe2 ``TensorProto`` (packed numeric fields)."""
    body = b"".join(field(1, d) for d in dims) + field(2, dtype)
    if floats:
        body += field(3, struct.pack(f"<{len(floats)}f", *floats))
    if ints:
        body += field(4, b"".join(varint(i) for i in ints))
    if raw is not None:
        body += field(5, raw)
    body += b"".join(field(6, s) for s in strings)
    return body


def tensor_protos(*tensors: bytes) -> bytes:
    """A Caffe2 ``TensorProtos`` message."""
    return b"".join(field(1, t) for t in tensors)


def write_lmdb(path: Path, records: Sequence[bytes]) -> str:
    """An LMDB database of ``records`` under keys 00000000, 00000001, …"""
    import lmdb

    path.mkdir(parents=True, exist_ok=True)
    with lmdb.open(str(path), map_size=1 << 24) as env, env.begin(write=True) as txn:
        for i, record in enumerate(records):
            txn.put(f"{i:08d}".encode(), record)
    return str(path)
