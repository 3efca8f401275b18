"""``fn.readers.webdataset``: samples stored as files in tar archives (the WebDataset format).

This module is the ``webdataset-reader`` plugin (entry point group ``feedline.plugins``). An
archive's files are grouped into samples by name: consecutive files whose paths agree up to the
first dot of the file name form one sample, and the rest of the name (after that dot) is the
component's extension. Index files written by DALI's ``wds2idx`` (format ``v1.1``/``v1.2``) are
read; without them the archive is scanned with :mod:`tarfile`. Sharding, shuffling, padding,
epochs and checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.core.types import DataType, from_numpy_dtype, to_numpy_dtype
from feedline.readers.base import Reader, reader_schema

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "WEBDATASET_SCHEMA",
    "Component",
    "IndexFileError",
    "WebdatasetReader",
    "feedline_register_operators",
    "group_samples",
    "read_wds_index",
    "scan_tar",
    "split_name",
]

_DOC = """\
Read samples stored in tar archives (the WebDataset format).

A sample is a run of consecutive archive members with the same name up to the first dot of the
file name; the text after that dot is the component's extension (files whose name starts with a
dot are ignored). Output ``i`` is the component whose extension is in the ``;``-separated set
``ext[i]``, as a 1-D array of ``dtypes[i]`` (default UINT8) viewing its bytes; the size of the
component must be a multiple of the type's size (checked when the reader is built). Each
sample's ``source_info`` is
``<archive>:<offset>:<member name>`` of the component of its first output."""

_MISSING = ("", "empty", "skip", "error")

WEBDATASET_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("paths", "str_vec", REQUIRED, "Paths of the tar archives, read in this order."),
    ArgSpec("index_paths", "str_vec", None, "Index files (DALI's wds2idx format), one per "
            "archive; without them every archive is scanned when the reader is built."),
    ArgSpec("ext", "str_vec", REQUIRED, "One set of extensions per output, separated by ';' "
            "(e.g. 'jpg;jpeg'); extensions may contain dots ('left.png')."),
    ArgSpec("dtypes", "any", None, "The type of each output (a DataType or a list, one per "
            "output); default UINT8."),
    ArgSpec("case_sensitive_extensions", "bool", True, "Match extensions with exact case."),
    ArgSpec("missing_component_behavior", "str", "", "A sample with no component for an "
            "output: '' or 'empty' gives an empty array, 'skip' leaves the sample out, 'error' "
            "raises.", choices=_MISSING),
)  # fmt: skip


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f"output{i}" for i in range(len(args.get("ext") or ())))


WEBDATASET_SCHEMA = reader_schema("readers.webdataset", _DOC, WEBDATASET_ARGS, outputs=_outputs)


class Component(NamedTuple):
    """One archive member: extension, data offset, size, name, and the number of its sample's
    line in the index file (0 when the archive was scanned)."""

    ext: str
    offset: int
    size: int
    name: str
    line: int = 0


def split_name(path: str) -> tuple[str, str]:
    """``(sample key, extension)`` of an archive member: split at the first dot of the file
    name (no dot: the extension is empty)."""
    slash = path.rfind("/") + 1
    dot = path.find(".", slash)
    return (path, "") if dot < 0 else (path[:dot], path[dot + 1 :])


def scan_tar(path: str) -> list[tuple[int, int, str]]:
    """``(data offset, size, name)`` of every regular file of the archive, in archive order.

    Raises:
        ValueError: not a readable tar archive (names it).
    """
    try:
        with tarfile.open(path, "r:") as archive:
            return [(m.offset_data, m.size, m.name) for m in archive if m.isreg()]
    except tarfile.TarError as exc:
        raise ValueError(f"{path!r} is not a readable (uncompressed) tar archive: {exc}") from None


def group_samples(members: Sequence[tuple[int, int, str]]) -> list[list[Component]]:
    """Consecutive members with the same key form a sample; hidden files are left out."""
    samples: list[list[Component]] = []
    last = None
    for offset, size, name in members:
        key, ext = split_name(name)
        if not key or key.endswith("/"):
            continue
        if key != last:
            samples.append([])
            last = key
        samples[-1].append(Component(ext, offset, size, name))
    return samples


class IndexFileError(ValueError, RuntimeError):
    """A malformed ``wds2idx`` index file. A ``ValueError``, and a ``RuntimeError`` as DALI
    raises (in its words: the file and the sample's line, counting the header as line 0)."""


def _index_error(path: str, line: int, details: str) -> IndexFileError:
    return IndexFileError(f'Malformed index file at "{path}" line {line} - {details}')


_BLOCK = 512
_LEADING_INT = re.compile(r"[+-]?\d+")


def _sample_components(path: str, line: int, text: str, version: str) -> list[Component]:
    """The components of one sample line (``ext offset size [name]`` repeated)."""
    width = 4 if version == "v1.2" else 3
    tokens = text.split()
    components = []
    for start in range(0, len(tokens), width):
        record = tokens[start : start + width]
        numbers = record[1:3]
        if len(record) < width or not all(_LEADING_INT.fullmatch(t) for t in numbers):
            fields, shape = (
                ("offset, size or filename", "<ext> <offset> <size> <filename>")
                if width == 4
                else ("offset or size", "<ext> <offset> <size>")
            )
            raise _index_error(
                path,
                line,
                f"Could not find all necessary component parameters ({fields}). Every record in "
                f"the index file should look like: `{shape}`.",
            )
        offset, size = int(numbers[0]), int(numbers[1])
        if offset % _BLOCK:
            raise _index_error(
                path,
                line,
                f"tar offset is not a multiple of tar block size ({_BLOCK}), perhaps the size "
                "value is exported before offset?",
            )
        name = record[3] if width == 4 else f"{record[0]}@{offset}"
        components.append(Component(record[0], offset, size, name, line))
    if not components:
        raise _index_error(path, line, "no extensions provided for the sample")
    return components


def read_wds_index(path: str) -> list[list[Component]]:
    """The samples of a ``wds2idx`` index file (``v1.2``: ``ext offset size name`` per
    component; ``v1.1``: ``ext offset size``), parsed as DALI does: the header's count of
    sample lines is read (lines after them are ignored).

    Raises:
        IndexFileError: an unknown version or a malformed line, in DALI's words.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = lines[0].split() if lines else []
    if not header:
        raise _index_error(path, 0, "no version signature found")
    version = header[0]
    if version not in ("v1.1", "v1.2"):
        raise _index_error(path, 0, f"Unsupported version of the index file ({version}).")
    count = _LEADING_INT.match(header[1]) if len(header) > 1 else None
    if count is None:
        raise _index_error(path, 0, "no sample count found")
    if int(count.group()) <= 0:
        raise _index_error(path, 0, "sample count must be positive")
    return [
        _sample_components(path, line, lines[line] if line < len(lines) else "", version)
        for line in range(1, int(count.group()) + 1)
    ]


def _dtypes(value: Any, count: int) -> list[np.dtype]:
    if value is None:
        return [np.dtype(np.uint8)] * count
    values = list(value) if isinstance(value, list | tuple) else [value]
    if len(values) != count:
        raise ValueError(
            f"readers.webdataset: dtypes has {len(values)} entries for {count} outputs"
        )
    result = []
    for v in values:
        if isinstance(v, type) and v in (bool, int, float):
            raise TypeError(
                f"readers.webdataset: dtypes entry {v.__name__!r} is a Python type; use a "
                "feedline.types.DataType such as types.FLOAT or types.INT32"
            )
        dtype = to_numpy_dtype(v) if isinstance(v, DataType) else np.dtype(v)
        from_numpy_dtype(dtype)
        result.append(dtype)
    return result


class WebdatasetReader(Reader):
    """The ``readers.webdataset`` kernel; its items are ``(archive index, components)``."""

    def setup(self) -> None:
        """Check the reader's own arguments, then the common ones."""
        args = self.args
        self._ext_sets = [self._ext_set(e) for e in args["ext"]]
        if not self._ext_sets:
            raise ValueError("readers.webdataset: ext is empty; give one extension set per output")
        self._types = _dtypes(args["dtypes"], len(self._ext_sets))
        index_paths = args["index_paths"] or ()
        if index_paths and len(index_paths) != len(args["paths"]):
            raise ValueError(
                f"readers.webdataset: {len(index_paths)} index file(s) for "
                f"{len(args['paths'])} archive(s); give one per archive or none"
            )
        super().setup()

    def _ext_set(self, text: str) -> frozenset[str]:
        parts = [p for p in text.split(";") if p]
        if not self.args["case_sensitive_extensions"]:
            parts = [p.lower() for p in parts]
        return frozenset(parts)

    def _match(self, components: Sequence[Component]) -> list[Component | None]:
        fold = not self.args["case_sensitive_extensions"]
        picked: list[Component | None] = []
        for ext_set in self._ext_sets:
            found = None
            for component in components:
                if (component.ext.lower() if fold else component.ext) in ext_set:
                    found = component
                    break
            picked.append(found)
        return picked

    def index(self) -> Sequence[tuple[int, list[Component | None]]]:
        """Every sample of every archive, its components matched to the outputs."""
        args = self.args
        index_paths = args["index_paths"] or ()
        policy = args["missing_component_behavior"]
        items = []
        for archive, path in enumerate(args["paths"]):
            samples = (
                read_wds_index(index_paths[archive])
                if index_paths
                else group_samples(scan_tar(path))
            )
            for components in samples:
                picked = self._match(components)
                self._check_sizes(path, picked)
                if None in picked:
                    if policy == "skip":
                        continue
                    if policy == "error":
                        missing = args["ext"][picked.index(None)]
                        raise ValueError(
                            f"readers.webdataset: sample {components[0].name!r} of {path!r} has "
                            f"no component with an extension in {missing!r} "
                            "(missing_component_behavior='error')"
                        )
                items.append((archive, picked))
        if not items:
            raise ValueError("readers.webdataset: the archives hold no sample")
        return items

    def _check_sizes(self, path: str, picked: Sequence[Component | None]) -> None:
        for component, dtype in zip(picked, self._types, strict=True):
            if component is not None and component.size % dtype.itemsize:
                raise ValueError(
                    f"readers.webdataset: {path!r}: member {component.name!r} has "
                    f"{component.size} bytes, not a multiple of {dtype} ({dtype.itemsize} bytes)"
                )

    def load(self, item: tuple[int, list[Component | None]]) -> tuple[np.ndarray, ...]:
        """The components of one sample, viewed as the output types."""
        archive, picked = item
        path = self.args["paths"][archive]
        raw = self.read_bytes(path)
        out = []
        for component, dtype in zip(picked, self._types, strict=True):
            if component is None:
                out.append(np.empty(0, dtype))
                continue
            if component.offset >= raw.size and self.args["index_paths"]:
                index_path = self.args["index_paths"][archive]
                raise _index_error(
                    index_path, component.line, "offset is outside of the archive file"
                )
            end = component.offset + component.size
            if end > raw.size:
                raise ValueError(
                    f"{path!r}: member {component.name!r} ({component.size} bytes at "
                    f"{component.offset}) passes the end of the archive; rebuild the index"
                )
            out.append(raw[component.offset : end].view(dtype))
        return tuple(out)

    def source_info(self, item: tuple[int, list[Component | None]]) -> str:
        """``<archive>:<offset>:<member name>`` of the first output's component."""
        archive, picked = item
        component = next((c for c in picked if c is not None), None)
        path = self.args["paths"][archive]
        return path if component is None else f"{path}:{component.offset}:{component.name}"


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.webdataset``."""
    registry.add_operator(WEBDATASET_SCHEMA, kernels={"cpu": WebdatasetReader})
