"""``fn.readers.mxnet``: MXNet RecordIO files (``im2rec`` output) with their ``.idx`` index.

This module is the ``mxnet-reader`` plugin (entry point group ``feedline.plugins``). A RecordIO
file is a sequence of records ``uint32 magic (0xced7230a), uint32 flag << 29 | length, data``
padded to 4 bytes; a long payload may be split over several records (flag 1 starts it, 2
continues, 3 ends it). A payload starts with MXNet's image header ``uint32 flag, float label,
uint64 id, uint64 id2``, followed by ``flag`` float labels when ``flag > 0``, then the encoded
image. The index file lists ``key<TAB>offset`` per sample; offsets count from the start of the
first file, the files being read as one stream. Sharding, shuffling, padding, epochs and
checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.readers.base import Reader, reader_schema
from feedline.readers.legacy import legacy_name

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["MAGIC", "MXNET_SCHEMA", "MXNetReader", "parse_payload", "read_idx"]

MAGIC = 0xCED7230A
_RECORD = struct.Struct("<II")
_IMAGE_HEADER = struct.Struct("<IfQQ")

_DOC = """\
Read MXNet RecordIO files (as written by ``im2rec``), one image record per sample.

Outputs the encoded image (uint8, 1-D) and its label (float32: shape (1,) from the header, or
the ``flag`` labels that follow the header). Samples are the records listed by the index file,
in its order."""

MXNET_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("path", "str_vec", REQUIRED, "Paths of the RecordIO files, read as one stream."),
    ArgSpec("index_path", "str_vec", REQUIRED, "A list holding the path of the index (.idx) "
            "file: 'key<TAB>offset' per record."),
)  # fmt: skip

MXNET_SCHEMA = reader_schema("readers.mxnet", _DOC, MXNET_ARGS, outputs=("data", "label"))


def read_idx(path: str) -> list[int]:
    """The record offsets listed by an index file, in its order.

    Raises:
        ValueError: a malformed line (naming the file and the line).
    """
    offsets = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2 or not parts[1].isdigit():
                raise ValueError(
                    f"index file {path!r}, line {number}: expected 'key<TAB>offset', got "
                    f"{line.strip()!r}"
                )
            offsets.append(int(parts[1]))
    return offsets


def parse_payload(payload: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(image bytes, float32 labels)`` of an image record's payload.

    Raises:
        ValueError: the payload is shorter than its header says.
    """
    if len(payload) < _IMAGE_HEADER.size:
        raise ValueError(f"the record holds {len(payload)} bytes, less than an image header")
    flag, label, _, _ = _IMAGE_HEADER.unpack_from(payload)
    start = _IMAGE_HEADER.size + 4 * flag
    if start > len(payload):
        raise ValueError(f"the header announces {flag} labels, more than the record holds")
    if flag == 0:
        return payload[start:], np.array([label], np.float32)
    labels = payload[_IMAGE_HEADER.size : start].view("<f4").astype(np.float32)
    return payload[start:], labels


class MXNetReader(Reader):
    """The ``readers.mxnet`` kernel; items are offsets into the stream of files."""

    def setup(self) -> None:
        """Check the paths, then the common arguments."""
        args = self.args
        if len(args["index_path"]) != 1:
            raise ValueError(
                f"readers.mxnet: index_path must hold exactly one index file, got "
                f"{len(args['index_path'])}"
            )
        sizes = [os.path.getsize(path) for path in args["path"]]
        self._starts = np.cumsum([0, *sizes])
        super().setup()

    def index(self) -> Sequence[int]:
        """The offsets of the index file."""
        offsets = read_idx(self.args["index_path"][0])
        if not offsets:
            raise ValueError("readers.mxnet: the index file lists no record")
        bad = [o for o in offsets if not 0 <= o < self._starts[-1]]
        if bad:
            raise ValueError(
                f"readers.mxnet: index offset {bad[0]} is past the end of the RecordIO data "
                f"({self._starts[-1]} bytes); rebuild the index"
            )
        return offsets

    def _locate(self, offset: int) -> tuple[str, int]:
        number = int(np.searchsorted(self._starts, offset, side="right")) - 1
        return self.args["path"][number], offset - int(self._starts[number])

    def _payload(self, offset: int) -> np.ndarray:
        """The payload of the (possibly split) record at ``offset``."""
        path, position = self._locate(offset)
        data = self.read_bytes(path)
        parts = []
        while True:
            if position + _RECORD.size > len(data):
                raise ValueError(f"record at byte {position} runs past the end of the file")
            magic, packed = _RECORD.unpack_from(data, position)
            if magic != MAGIC:
                raise ValueError(f"no RecordIO record at byte {position} (bad magic number)")
            flag, length = packed >> 29, packed & ((1 << 29) - 1)
            begin = position + _RECORD.size
            if begin + length > len(data):
                raise ValueError(f"record at byte {position} is truncated")
            parts.append(data[begin : begin + length])
            position = begin + (length + 3) // 4 * 4
            if flag in (0, 3):
                break
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def load(self, offset: int) -> tuple[np.ndarray, np.ndarray]:
        """The image bytes and labels of one record."""
        try:
            return parse_payload(self._payload(offset))
        except ValueError as exc:
            path, position = self._locate(offset)
            raise ValueError(f"readers.mxnet: {path!r} at byte {position}: {exc}") from None

    def source_info(self, offset: int) -> str:
        """``<file> at index <offset>``."""
        path, position = self._locate(offset)
        return f"{path} at index {position}"


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.mxnet``."""
    registry.add_operator(MXNET_SCHEMA, kernels={"cpu": MXNetReader})
    registry.add_operator(legacy_name(MXNET_SCHEMA, "mxnet_reader"), kernels={"cpu": MXNetReader})
