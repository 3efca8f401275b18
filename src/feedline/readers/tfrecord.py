"""``fn.readers.tfrecord``: ``tf.train.Example`` records from TFRecord files, without TensorFlow.

This module is the ``tfrecord-reader`` plugin (entry point group ``feedline.plugins``). Samples
are the records listed by the index files (``python -m feedline.readers.tfrecord_index`` writes
them, like DALI's ``tfrecord2idx``); sharding, shuffling, padding, epochs and checkpoints come
from :class:`~feedline.readers.base.Reader`. The call returns a dict of outputs by feature name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.readers.base import Reader, reader_schema
from feedline.readers.direct_io import read_direct
from feedline.readers.tfrecord_format import Feature, decode_feature, parse_example, read_index

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["TFRECORD_SCHEMA", "TFRecordReader", "feedline_register_operators"]

_DOC = """\
Read ``tf.train.Example`` records from TFRecord files.

Returns a dict with one output per entry of ``features``, in its order: ``int64`` features are
INT64, ``float32`` features FLOAT and ``string`` features the bytes of the string (UINT8, 1-D).
A ``FixedLenFeature`` has its shape (``[]`` gives shape ``(1,)``); more values than that are an
error, fewer are completed with ``default_value``. A ``VarLenFeature`` is 1-D, or its partial
(trailing) shape with the leading extent inferred. A feature missing from a record gives an
empty array, as in DALI. A string feature must be ``FixedLenFeature([], string, …)`` and reads
the first string. Record CRCs are not checked (as in DALI). Feature
descriptions come from ``feedline.tfrecord`` (``FixedLenFeature``, ``VarLenFeature``,
``int64``, ``float32``, ``string``), like ``nvidia.dali.tfrecord``."""

TFRECORD_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("path", "str_vec", REQUIRED, "Paths of the TFRecord files, read in this order."),
    ArgSpec("index_path", "str_vec", REQUIRED, "Paths of their index files (one per path; "
            "'<offset> <size>' per record, as written by tfrecord2idx)."),
    ArgSpec("features", "dict", REQUIRED, "Feature name → feedline.tfrecord.Feature: the "
            "features to extract."),
    ArgSpec("use_o_direct", "bool", False, "Read records with O_DIRECT, bypassing the page "
            "cache (needs dont_use_mmap=True and a file system that supports it)."),
)  # fmt: skip


def _check_features(features: Mapping[str, Any]) -> dict[str, Feature]:
    if not features:
        raise ValueError("readers.tfrecord: features is empty; name at least one feature")
    for name, feature in features.items():
        if not isinstance(name, str) or not isinstance(feature, Feature):
            raise TypeError(
                f"readers.tfrecord: features[{name!r}] must be a feedline.tfrecord.Feature "
                f"(FixedLenFeature or VarLenFeature), got {type(feature).__name__}"
            )
    return dict(features)


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(_check_features(args.get("features") or {}))


TFRECORD_SCHEMA = reader_schema(
    "readers.tfrecord",
    _DOC,
    TFRECORD_ARGS,
    outputs=_outputs,
    output_dict=True,
    serializable=False,
)


class TFRecordReader(Reader):
    """The ``readers.tfrecord`` kernel; its items are ``(file index, offset, size)``."""

    def setup(self) -> None:
        """Check the reader's own arguments, then the common ones."""
        args = self.args
        self._features = _check_features(args["features"])
        if len(args["path"]) != len(args["index_path"]):
            raise ValueError(
                f"readers.tfrecord: {len(args['path'])} path(s) but {len(args['index_path'])} "
                "index_path(s); give one index file per TFRecord file"
            )
        if args["use_o_direct"] and not args["dont_use_mmap"]:
            raise ValueError("readers.tfrecord: use_o_direct=True needs dont_use_mmap=True")
        super().setup()

    def index(self) -> Sequence[tuple[int, int, int]]:
        """Every record listed by the index files, file after file."""
        items = []
        for file_index, (path, index_path) in enumerate(
            zip(self.args["path"], self.args["index_path"], strict=True)
        ):
            size = os.path.getsize(path)
            for offset, length in read_index(index_path):
                if offset + length > size or length < 16:
                    raise ValueError(
                        f"index file {index_path!r}: record at {offset} (+{length} bytes) does "
                        f"not fit in {path!r} ({size} bytes); rebuild the index"
                    )
                items.append((file_index, offset, length))
        if not items:
            raise ValueError("readers.tfrecord: the index files list no record")
        return items

    def _record(self, item: tuple[int, int, int]) -> np.ndarray:
        file_index, offset, size = item
        path = self.args["path"][file_index]
        if self.args["use_o_direct"]:
            raw, start = read_direct(path, offset, size), 0
        else:
            raw, start = self.read_bytes(path), offset
        length = int(raw[start : start + 8].view("<u8")[0])
        if length != size - 16:
            raise ValueError(
                f"{path!r}: the record at byte {offset} holds {length} bytes, the index says "
                f"{size - 16}; rebuild the index"
            )
        return raw[start + 12 : start + 12 + length]

    def load(self, item: tuple[int, int, int]) -> tuple[np.ndarray, ...]:
        """The features of one record."""
        parsed = parse_example(self._record(item))
        return tuple(
            decode_feature(name, feature, parsed) for name, feature in self._features.items()
        )

    def source_info(self, item: tuple[int, int, int]) -> str:
        """``<file> at index <offset>`` (DALI's wording) of the record."""
        return f"{self.args['path'][item[0]]} at index {item[1]}"


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.tfrecord``."""
    registry.add_operator(TFRECORD_SCHEMA, kernels={"cpu": TFRecordReader})
