"""TFRecord files without TensorFlow: record framing, index files and ``tf.train.Example``.

A TFRecord file is a sequence of records ``uint64 length, uint32 crc(length), bytes[length],
uint32 crc(data)`` (little-endian; CRCs are not checked, as in DALI). An index file
(``tfrecord2idx``'s format) has one line ``<offset> <size>`` per record. A record holds a
``tf.train.Example`` protocol buffer, decoded here by a small wire-format parser (no protobuf
dependency; ``bytes`` values stay zero-copy views of the record).

The feature descriptions follow ``nvidia.dali.tfrecord``: :func:`FixedLenFeature`,
:func:`VarLenFeature` and the types :data:`int64`, :data:`float32` and :data:`string`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Feature",
    "FixedLenFeature",
    "VarLenFeature",
    "decode_feature",
    "float32",
    "int64",
    "parse_example",
    "read_index",
    "scan_records",
    "string",
]

int64 = "int64"
"""64-bit integer features (``Int64List``), read as INT64."""
float32 = "float32"
"""32-bit float features (``FloatList``), read as FLOAT."""
string = "string"
"""Bytes features (``BytesList``), read as UINT8 bytes."""
_TYPES = {int64: np.dtype(np.int64), float32: np.dtype(np.float32), string: np.dtype(np.uint8)}
_HEADER = struct.Struct("<QI")


@dataclass(frozen=True)
class Feature:
    """How to read one feature of an Example.

    Attributes:
        dtype: ``int64``, ``float32`` or ``string``.
        shape: the fixed shape (FixedLen) or the trailing extents (VarLen), or None.
        default_value: completes a FixedLen feature that holds fewer values than its shape.
        fixed: FixedLen (the number of values must match ``shape``) or VarLen.
    """

    dtype: str
    shape: tuple[int, ...] | None
    default_value: Any
    fixed: bool

    def __post_init__(self) -> None:
        if self.dtype not in _TYPES:
            raise ValueError(
                f"tfrecord feature type {self.dtype!r} is not one of int64, float32, string"
            )


def FixedLenFeature(shape: Sequence[int], dtype: str, default_value: Any) -> Feature:
    """A feature with a fixed shape (``[]`` = one value, read as shape ``(1,)``)."""
    return Feature(dtype, tuple(int(n) for n in shape), default_value, True)


def VarLenFeature(*args: Any) -> Feature:
    """A feature with any number of values: ``VarLenFeature(dtype, default_value)`` (1-D) or
    ``VarLenFeature(partial_shape, dtype, default_value)`` (the trailing extents; the leading
    one is inferred)."""
    if len(args) == 2:
        return Feature(args[0], None, args[1], False)
    if len(args) == 3:
        return Feature(args[1], tuple(int(n) for n in args[0]), args[2], False)
    raise TypeError(
        "VarLenFeature takes (dtype, default_value) or (partial_shape, dtype, default_value)"
    )


def scan_records(data: np.ndarray | bytes, name: str = "") -> Iterator[tuple[int, int]]:
    """``(offset, size)`` of every record of a TFRecord file's bytes (size includes framing).

    Raises:
        ValueError: a truncated record (names ``name`` and the offset).
    """
    view = memoryview(data).cast("B")
    offset, total = 0, len(view)
    while offset < total:
        if offset + 12 > total:
            raise ValueError(f"{name}: truncated record header at byte {offset}")
        (length, _) = _HEADER.unpack_from(view, offset)
        size = 12 + length + 4
        if offset + size > total:
            raise ValueError(
                f"{name}: record at byte {offset} announces {length} bytes past the end"
            )
        yield offset, size
        offset += size


def read_index(path: str) -> list[tuple[int, int]]:
    """The ``(offset, size)`` lines of a ``tfrecord2idx`` index file.

    Raises:
        ValueError: a malformed line (names the file and line).
    """
    entries = []
    with open(path, encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise ValueError(
                    f"index file {path!r}, line {lineno}: expected '<offset> <size>', got "
                    f"{line.rstrip()!r}"
                )
            entries.append((int(parts[0]), int(parts[1])))
    return entries


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("malformed varint")


def _fields(buf: memoryview, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of a message; length-delimited values are
    ``(begin, end)`` positions."""
    pos = start
    while pos < end:
        key = buf[pos]  # one-byte keys and lengths (the usual case) skip _varint
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            length = buf[pos]
            if length < 0x80:
                pos += 1
            else:
                length, pos = _varint(buf, pos)
            value = (pos, pos + length)
            pos += length
        elif wire == 5:
            value, pos = (pos, pos + 4), pos + 4
        elif wire == 1:
            value, pos = (pos, pos + 8), pos + 8
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > end:
            raise ValueError("protobuf field runs past the end of its message")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _values(buf: memoryview, data: np.ndarray, kind: int, begin: int, end: int) -> Any:
    """The values of a BytesList (1), FloatList (2) or Int64List (3) message."""
    if kind == 1:
        return [data[b:e] for number, wire, (b, e) in _fields(buf, begin, end) if number == 1]
    if kind == 2:  # packed (wire 2) or fixed32 (wire 5) chunks of little-endian floats
        chunks = [data[b:e] for number, _, (b, e) in _fields(buf, begin, end) if number == 1]
        joined = chunks[0] if len(chunks) == 1 else np.concatenate(chunks or [data[:0]])
        return joined.view("<f4").astype(np.float32, copy=False)
    ints: list[int] = []
    for number, wire, value in _fields(buf, begin, end):
        if number != 1:
            continue
        if wire == 0:
            ints.append(_signed(value))
            continue
        pos, stop = value
        while pos < stop:
            item, pos = _varint(buf, pos)
            ints.append(_signed(item))
    return np.array(ints, np.int64)


def parse_example(record: np.ndarray) -> dict[str, tuple[int, Any]]:
    """The features of a serialized ``tf.train.Example``: name → (kind, values), where kind is
    1 (bytes: a list of uint8 views), 2 (float32 array) or 3 (int64 array).

    Raises:
        ValueError: malformed protobuf data.
    """
    buf = memoryview(record)
    features: dict[str, tuple[int, Any]] = {}
    for number, _, (fb, fe) in _fields(buf, 0, len(buf)):
        if number != 1:
            continue
        for entry_number, _, (eb, ee) in _fields(buf, fb, fe):
            if entry_number != 1:
                continue
            key, kind, values = "", 0, None
            for field, _, (b, e) in _fields(buf, eb, ee):
                if field == 1:
                    key = bytes(buf[b:e]).decode("utf-8")
                elif field == 2:
                    for list_kind, _, (lb, le) in _fields(buf, b, e):
                        if list_kind in (1, 2, 3):
                            kind, values = list_kind, _values(buf, record, list_kind, lb, le)
            features[key] = (kind, values)
    return features


_KIND = {string: 1, float32: 2, int64: 3}


def decode_feature(name: str, feature: Feature, parsed: dict[str, tuple[int, Any]]) -> np.ndarray:
    """The output array of feature ``name`` of a parsed Example, as DALI's parser makes it.

    A missing feature gives an empty array of the feature's type. A fixed shape with fewer
    values than its volume is completed with ``default_value`` (DALI leaves that memory
    uninitialised); more values are an error. A VarLen partial shape gets the leading extent
    inferred. A string feature reads its first string.

    Raises:
        ValueError: wrong value type or count, or a string feature that is not a single string.
    """
    dtype = _TYPES[feature.dtype]
    if name not in parsed or parsed[name][0] == 0:
        return np.empty(0, dtype)
    kind, values = parsed[name]
    if kind != _KIND[feature.dtype]:
        found = {1: "bytes", 2: "float", 3: "int64"}[kind]
        raise ValueError(f"feature {name!r} holds {found} values, not {feature.dtype}")
    if feature.dtype == string:
        if not feature.fixed or int(np.prod(feature.shape or ())) > 1:
            raise ValueError(
                f"feature {name!r}: tensors of strings are not supported; describe it as "
                "FixedLenFeature([], string, default)"
            )
        if not values:
            raise ValueError(f"feature {name!r} holds no string")
        return values[0]
    shape = feature.shape
    if feature.fixed:
        target = shape or (1,)
        count = int(np.prod(target))
        if values.size > count:
            raise ValueError(
                f"feature {name!r} holds {values.size} values, more than its FixedLenFeature "
                f"shape {list(shape or [])} takes ({count})"
            )
        if values.size < count:
            tail = np.full(count - values.size, feature.default_value, dtype)
            values = np.concatenate([values, tail])
        return values.reshape(target)
    if not shape:
        return values
    inner = int(np.prod(shape))
    if inner <= 0 or values.size % inner:
        raise ValueError(
            f"feature {name!r} holds {values.size} values, which does not fit the partial shape "
            f"{list(shape)} (each extent must be positive)"
        )
    return values.reshape((values.size // inner, *shape))
