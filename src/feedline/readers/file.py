"""``fn.readers.file``: raw file bytes and integer labels (``docs/readers.md``).

This module is the ``file-reader`` plugin (entry point group ``feedline.plugins``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec
from feedline.readers.base import Reader, reader_schema
from feedline.readers.file_index import DEFAULT_FILE_FILTERS, build_file_index

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["FILE_SCHEMA", "FileReader", "feedline_register_operators"]

_DOC = """\
Read files as raw bytes with an integer label.

Outputs ``data`` (the file's bytes, ``uint8``, shape ``(file_size,)``) and ``label`` (``int32``,
shape ``(1,)``); every sample's ``source_info`` is its path as listed (``subdir/name`` in the
directory walk, the name written in ``file_list``, the string given in ``files``).

Exactly one of three modes:

* directory walk (``file_root`` alone): each immediate sub-directory of ``file_root`` is a class;
  the label is the sub-directory's index in the byte-sorted list of sub-directories (those
  without matching files included). Files directly in ``file_root`` and deeper directories are
  ignored. Files matching ``file_filters`` are sorted by name within each class.
* list file (``file_list``): each non-blank line is ``<file name> <label>``, parsed from the end:
  the label is the trailing non-negative decimal integer, the name may contain spaces. Names are
  relative to ``file_root`` if given, else to the list file's directory.
* explicit (``files``, optionally ``labels``): paths used as given (or joined to ``file_root``);
  the label is ``labels[i]``, else ``i``."""

FILE_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("file_root", "str", None, "Root directory of the data set (directory walk), or the "
            "directory the paths of file_list/files are relative to."),
    ArgSpec("file_list", "str", None, "Path of a text file with one '<file name> <label>' per "
            "line. Excludes files."),
    ArgSpec("files", "str_vec", None, "Paths of the files to read. Excludes file_list."),
    ArgSpec("labels", "int_vec", None, "One int32 label per entry of files (default: the index "
            "in files). Needs files."),
    ArgSpec("file_filters", "str_vec", None, "Glob patterns (fnmatch) selecting files in the "
            "directory walk; default: " + " ".join(DEFAULT_FILE_FILTERS) + ". An error in the "
            "file_list and files modes, where every named file is read."),
    ArgSpec("case_sensitive_filter", "bool", False, "Match file_filters and dir_filters with "
            "exact case (default: case-insensitive)."),
    ArgSpec("dir_filters", "str_vec", None, "Glob patterns selecting the class sub-directories "
            "of the directory walk; labels are indices among the selected ones. An error in the "
            "file_list and files modes."),
)  # fmt: skip

FILE_SCHEMA = reader_schema("readers.file", _DOC, FILE_ARGS, outputs=("data", "label"))


class FileReader(Reader):
    """The ``readers.file`` kernel; its items are positions in the file index."""

    def index(self) -> Sequence[int]:
        """List the samples of the selected mode (``docs/readers.md``)."""
        args = self.args
        entries = build_file_index(
            file_root=args["file_root"],
            file_list=args["file_list"],
            files=args["files"],
            labels=args["labels"],
            file_filters=args["file_filters"],
            dir_filters=args["dir_filters"],
            case_sensitive_filter=args["case_sensitive_filter"],
        )
        self._paths = [entry.path for entry in entries]
        self._sources = [entry.source for entry in entries]
        labels = [entry.label for entry in entries]
        self._labels = np.array(labels, dtype=np.int32).reshape(-1, 1)
        return range(len(entries))

    def load(self, item: int) -> tuple[np.ndarray, np.ndarray]:
        """The file's bytes and its label."""
        return self.read_bytes(self._paths[item]), self._labels[item]

    def load_batch(self, items: Sequence[int]) -> tuple[list[np.ndarray], np.ndarray]:
        """The files' bytes and their labels as one ``(len(items), 1)`` array."""
        read, paths = self._file_bytes, self._paths
        return [read(paths[i]) for i in items], self._labels[items]

    def source_info(self, item: int) -> str:
        """The path as listed."""
        return self._sources[item]


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.file``."""
    registry.add_operator(FILE_SCHEMA, kernels={"cpu": FileReader})
