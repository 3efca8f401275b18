"""``fn.readers.caffe`` and ``fn.readers.caffe2``: LMDB databases of Caffe ``Datum`` and Caffe2
``TensorProtos`` records (``pip install 'feedline[lmdb]'``).

This module is the ``caffe-reader`` plugin (entry point group ``feedline.plugins``). The two
record types are decoded by the protobuf wire-format parser of the TFRecord reader: both are
a handful of scalar, bytes and packed numeric fields, which a generic protobuf runtime and
generated classes would parse no better (and slower, with a copy of every image). Samples are
the records in key order, database after database; sharding, shuffling, padding, epochs and
checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.readers.base import Reader, reader_schema
from feedline.readers.legacy import legacy_name
from feedline.readers.tfrecord_format import _fields, _signed, _varint

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["CAFFE2_SCHEMA", "CAFFE_SCHEMA", "CaffeReader", "parse_datum", "parse_tensor_protos"]

_CAFFE_DOC = """\
Read Caffe LMDB databases: one ``Datum`` record per sample, in key order.

Outputs the record's ``data`` bytes (uint8, 1-D: the encoded image) when ``image_available``
and its ``label`` (int32, shape (1,)) when ``label_available``."""

_CAFFE2_DOC = """\
Read Caffe2 LMDB databases: one ``TensorProtos`` record per sample, in key order.

The record's tensors are, in order: the image (when ``image_available``: a STRING tensor's
first string as encoded bytes, or a BYTE tensor's pixels shaped ``H×W×C`` by its dims), the
label (``label_type``: 0 one value, shape (1,); 1 class indices → a ``num_labels`` vector with
ones at them; 2 the values as they are; 3 indices and a tensor of their weights → a float32
``num_labels`` vector of the weights; 4 none), typed as the label tensor (FLOAT → float32,
INT32 → int32), then ``additional_inputs`` FLOAT/INT32/INT64 tensors (1-D, in their types)
and, with ``bbox``, a last INT32 tensor of 4 values. Outputs follow the same order."""

_COMMON: tuple[ArgSpec, ...] = (
    ArgSpec("path", "str_vec", REQUIRED, "Paths of the LMDB database directories."),
    ArgSpec("image_available", "bool", True, "The records hold an image (first output)."),
)


def _caffe_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    flags = (("images", "image_available"), ("labels", "label_available"))
    return tuple(name for name, flag in flags if args.get(flag, True))


CAFFE_SCHEMA = reader_schema(
    "readers.caffe",
    _CAFFE_DOC,
    (*_COMMON, ArgSpec("label_available", "bool", True, "The records hold a label.")),
    outputs=_caffe_outputs,
)


def _caffe2_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    names = ["images"] if args.get("image_available", True) else []
    if args.get("label_type", 0) != 4:
        names.append("labels")
    names += [f"additional_{i}" for i in range(int(args.get("additional_inputs", 0)))]
    return (*names, "bboxes") if args.get("bbox") else tuple(names)


CAFFE2_SCHEMA = reader_schema(
    "readers.caffe2",
    _CAFFE2_DOC,
    (
        *_COMMON,
        ArgSpec("label_type", "int", 0, "0 single label, 1 sparse multi-label, 2 dense "
                "multi-label, 3 weighted sparse multi-label, 4 no label.",
                choices=(0, 1, 2, 3, 4)),
        ArgSpec("num_labels", "int", 1, "Number of classes (length of multi-label vectors)."),
        ArgSpec("additional_inputs", "int", 0, "Auxiliary tensors per record after the "
                "label."),
        ArgSpec("bbox", "bool", False, "The records end with bounding boxes."),
    ),
    outputs=_caffe2_outputs,
)  # fmt: skip


def parse_datum(record: np.ndarray) -> tuple[np.ndarray, int]:
    """``(data bytes, label)`` of a serialized Caffe ``Datum``."""
    buf = memoryview(record)
    data, label = record[:0], 0
    for number, _, value in _fields(buf, 0, len(record)):
        if number == 4:
            data = record[value[0] : value[1]]
        elif number == 5:
            label = _signed(value)  # int32 varints are sign-extended to 64 bits
    return data, label


def _packed(buf: memoryview, record: np.ndarray, value: Any, wire: int, kind: str) -> list:
    """Values of one occurrence of a repeated numeric field (packed or not)."""
    if kind == "float":
        if wire == 5:
            return [record[value[0] : value[1]].view("<f4")[0]]
        return list(record[value[0] : value[1]].view("<f4"))
    if kind == "double":
        if wire == 1:
            return [record[value[0] : value[1]].view("<f8")[0]]
        return list(record[value[0] : value[1]].view("<f8"))
    if wire == 0:
        return [_signed(value)]
    items, pos = [], value[0]
    while pos < value[1]:
        item, pos = _varint(buf, pos)
        items.append(_signed(item))
    return items


def _tensor(buf: memoryview, record: np.ndarray, begin: int, end: int) -> dict[str, Any]:
    tensor: dict[str, Any] = {"dims": [], "type": 1, "float": [], "int32": [], "int64": [],
                              "double": [], "bytes": None, "strings": []}  # fmt: skip
    kinds = {1: ("dims", "int"), 3: ("float", "float"), 4: ("int32", "int"),
             9: ("double", "double"), 10: ("int64", "int")}  # fmt: skip
    for number, wire, value in _fields(buf, begin, end):
        if number in kinds:
            key, kind = kinds[number]
            tensor[key] += _packed(buf, record, value, wire, kind)
        elif number == 2:
            tensor["type"] = value
        elif number == 5:
            tensor["bytes"] = record[value[0] : value[1]]
        elif number == 6:
            tensor["strings"].append(record[value[0] : value[1]])
    return tensor


def parse_tensor_protos(record: np.ndarray) -> list[dict[str, Any]]:
    """The tensors of a serialized Caffe2 ``TensorProtos``: dicts with ``dims``, ``type`` and
    the data fields."""
    buf = memoryview(record)
    return [_tensor(buf, record, *value) for number, wire, value in
            _fields(buf, 0, len(record)) if number == 1 and wire == 2]  # fmt: skip


_NUMERIC = {1: ("float", np.float32), 2: ("int32", np.int32), 10: ("int64", np.int64)}
_NO_LABEL, _WEIGHTED, _SPARSE, _SINGLE = 4, 3, 1, 0


def _numbers(tensor: Mapping[str, Any], allowed: tuple[int, ...], what: str) -> np.ndarray:
    """The values of a FLOAT, INT32 or INT64 tensor, 1-D, in its type."""
    if tensor["type"] not in allowed:
        raise ValueError(f"{what} has the unsupported data type {tensor['type']}")
    field_name, dtype = _NUMERIC[tensor["type"]]
    return np.array(tensor[field_name], dtype)


def _image(tensor: Mapping[str, Any]) -> np.ndarray:
    """An encoded image (STRING: its first string, 1-D) or raw pixels (BYTE: ``H×W×C``)."""
    if tensor["type"] == 4 and tensor["strings"]:
        return np.array(tensor["strings"][0], np.uint8)
    if tensor["type"] == 3 and tensor["bytes"] is not None:
        dims = [int(d) for d in tensor["dims"]]
        shape = (*dims[:2], dims[2] if len(dims) == 3 else 1)
        return np.array(tensor["bytes"], np.uint8).reshape(shape)
    raise ValueError("the image tensor is neither STRING nor BYTE data")


def _label(tensors: Sequence[Mapping[str, Any]], at: int, kind: int, count: int) -> np.ndarray:
    """The label output of ``label_type`` ``kind`` from the tensor at ``at`` (and the weights
    after it); its type is the label tensor's (FLOAT or INT32), float32 when weighted."""
    values = _numbers(tensors[at], (1, 2), "the label")
    if kind == _SINGLE:
        if values.size != 1:
            raise ValueError(f"a single label holds {values.size} values")
        return values
    if kind not in (_SPARSE, _WEIGHTED):
        return values
    weights = np.ones(values.size, values.dtype)
    dense = np.zeros(count, values.dtype)
    if kind == _WEIGHTED:
        weights = _numbers(tensors[at + 1], (1,), "the label weights")
        dense = np.zeros(count, np.float32)
    indices = values.astype(np.int64)
    if indices.size and (indices.min() < 0 or indices.max() >= count):
        raise ValueError(f"label index {int(indices.max())} is not below num_labels={count}")
    dense[indices] = weights[: indices.size]
    return dense


_ENVIRONMENTS: dict[str, Any] = {}
_ENVIRONMENTS_LOCK = threading.Lock()


def _open_lmdb(path: str) -> Any:
    """The read-only environment of the database at ``path``, shared by every reader of the
    process (LMDB refuses to open one database twice in a process)."""
    try:
        import lmdb
    except ImportError:
        raise ImportError(
            "readers.caffe/caffe2 read LMDB databases with the lmdb package: "
            "pip install 'feedline[lmdb]'"
        ) from None
    key = os.path.realpath(path)
    with _ENVIRONMENTS_LOCK:
        if key not in _ENVIRONMENTS:
            try:
                _ENVIRONMENTS[key] = lmdb.open(
                    path, readonly=True, lock=False, readahead=False, max_readers=512
                )
            except lmdb.Error as exc:
                raise ValueError(f"cannot open the LMDB database {path!r}: {exc}") from None
        return _ENVIRONMENTS[key]


class CaffeReader(Reader):
    """The kernel of ``readers.caffe`` and ``readers.caffe2``; items are ``(database, key)``."""

    parallel_load = True

    def setup(self) -> None:
        """Open the databases, then check the common arguments."""
        self._envs = [_open_lmdb(path) for path in self.args["path"]]
        super().setup()

    def index(self) -> Sequence[tuple[int, bytes]]:
        """Every key of every database, in key order."""
        items = []
        for number, env in enumerate(self._envs):
            with env.begin() as txn:
                items += [(number, bytes(key)) for key in txn.cursor().iternext(values=False)]
        if not items:
            raise ValueError(f"{self.ctx.schema.name}: the databases hold no record")
        return items

    def _record(self, item: tuple[int, bytes]) -> np.ndarray:
        number, key = item
        with self._envs[number].begin() as txn:
            value = txn.get(key)
        if value is None:
            raise ValueError(f"record {key!r} vanished from {self.args['path'][number]!r}")
        return np.frombuffer(value, np.uint8)

    def load(self, item: tuple[int, bytes]) -> tuple[np.ndarray, ...]:
        """Decode one record into the enabled outputs."""
        record = self._record(item)
        try:
            if "label_available" in self.args:  # readers.caffe (or caffe_reader)
                return self._caffe(record)
            return self._caffe2(record)
        except (ValueError, IndexError) as exc:
            path = self.args["path"][item[0]]
            raise ValueError(f"{path!r}, record {item[1]!r}: malformed record ({exc})") from None

    def _caffe(self, record: np.ndarray) -> tuple[np.ndarray, ...]:
        data, label = parse_datum(record)
        outputs = []
        if self.args["image_available"]:
            outputs.append(data.copy())
        if self.args["label_available"]:
            outputs.append(np.array([label], np.int32))
        return tuple(outputs)

    def _caffe2(self, record: np.ndarray) -> tuple[np.ndarray, ...]:
        args = self.args
        tensors = parse_tensor_protos(record)
        outputs, position = [], 0
        if args["image_available"]:
            outputs.append(_image(tensors[0]))
            position = 1
        if args["label_type"] != _NO_LABEL:
            outputs.append(_label(tensors, position, args["label_type"], args["num_labels"]))
            position += 2 if args["label_type"] == _WEIGHTED else 1
        for extra in tensors[position : position + args["additional_inputs"]]:
            outputs.append(_numbers(extra, (1, 2, 10), "an additional input"))
        position += args["additional_inputs"]
        if args["bbox"]:
            if len(tensors) != position + 1:
                raise ValueError(f"expected a bounding-box tensor at position {position}")
            boxes = _numbers(tensors[position], (2,), "the bounding box")
            if boxes.size != 4:
                raise ValueError(f"the bounding box holds {boxes.size} values, not 4")
            outputs.append(boxes)
        return tuple(outputs)

    def source_info(self, item: tuple[int, bytes]) -> str:
        """``<database> at key <key>``."""
        return f"{self.args['path'][item[0]]} at key {item[1].decode(errors='replace')}"


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.caffe`` and ``readers.caffe2`` (and DALI's older names
    ``caffe_reader``, ``caffe2_reader``)."""
    for schema, legacy in ((CAFFE_SCHEMA, "caffe_reader"), (CAFFE2_SCHEMA, "caffe2_reader")):
        registry.add_operator(schema, kernels={"cpu": CaffeReader})
        registry.add_operator(legacy_name(schema, legacy), kernels={"cpu": CaffeReader})
