"""Test data for readers.mxnet: RecordIO files and their index, written as im2rec does."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

MAGIC = 0xCED7230A


def image_record(image: bytes, labels: Sequence[float], key: int = 0) -> bytes:
    """An image payload: the header (one label in it, or ``flag`` labels after it), then the
    image bytes."""
    if len(labels) == 1:
        return struct.pack("<IfQQ", 0, labels[0], key, 0) + image
    return (
        struct.pack("<IfQQ", len(labels), 0.0, key, 0)
        + struct.pack(f"<{len(labels)}f", *labels)
        + image
    )


def framed(payload: bytes, parts: int = 1) -> bytes:
    """The payload as RecordIO records (split into ``parts`` pieces, flags 1, 2…, 3)."""
    size = -(-len(payload) // parts)
    pieces = [payload[i : i + size] for i in range(0, len(payload), size)] or [b""]
    out = b""
    for number, piece in enumerate(pieces):
        flag = (
            0 if len(pieces) == 1 else 1 if number == 0 else 3 if number == len(pieces) - 1 else 2
        )
        out += struct.pack("<II", MAGIC, flag << 29 | len(piece)) + piece
        out += b"\0" * (-len(piece) % 4)
    return out


def write_recordio(folder: Path, payloads: Sequence[bytes], split: int = 1) -> tuple[str, str]:
    """``train.rec`` and ``train.idx`` holding ``payloads`` (every third one split)."""
    data, index = b"", ""
    for key, payload in enumerate(payloads):
        index += f"{key}\t{len(data)}\n"
        data += framed(payload, split if key % 3 == 2 else 1)
    rec, idx = folder / "train.rec", folder / "train.idx"
    rec.write_bytes(data)
    idx.write_text(index)
    return str(rec), str(idx)
