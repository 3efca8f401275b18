"""``example.readers.csv``: files listed in a CSV file with an integer label each.

The reader only says what its samples are (:meth:`CsvReader.index`) and how to load one
(:meth:`CsvReader.load`); sharding, shuffling, padding, epochs, prefetching and checkpoints are
the ``Reader`` base class's, with the common reader arguments added by ``reader_schema``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from feedline.core.schema import ArgSpec
from feedline.readers.base import Reader, reader_schema

CSV_SCHEMA = reader_schema(
    "example.readers.csv",
    "Reads the files listed in a CSV file, with their integer labels.\n\n"
    "The CSV file has a header row naming a ``path`` and a ``label`` column (others are "
    "ignored). Outputs ``data`` (the file's bytes, uint8) and ``label`` (int32, shape (1,)).",
    (
        ArgSpec("csv_file", "str", doc="Path of the CSV file."),
        ArgSpec("root", "str", None, "Folder the paths are relative to (default: the CSV's)."),
    ),
    outputs=("data", "label"),
)


def read_listing(csv_file: Path, root: Path) -> list[tuple[Path, int]]:
    """The ``(path, label)`` rows of ``csv_file``.

    Raises:
        ValueError: a missing column, an empty file or a label that is not an integer (the
            message names the file and the line).
    """
    with csv_file.open(newline="") as handle:
        rows = csv.DictReader(handle)
        missing = {"path", "label"} - set(rows.fieldnames or ())
        if missing:
            raise ValueError(f"{csv_file}: the header lacks the column(s) {sorted(missing)}")
        listing = []
        for row in rows:
            try:
                label = int(row["label"])
            except (TypeError, ValueError):
                raise ValueError(
                    f"{csv_file}, line {rows.line_num}: label {row['label']!r} is not an integer"
                ) from None
            listing.append((root / row["path"], label))
    if not listing:
        raise ValueError(f"{csv_file}: no rows")
    return listing


class CsvReader(Reader):
    """The reader's kernel: its items are ``(path, label)`` rows."""

    def index(self) -> Sequence[tuple[Path, int]]:
        """Read the CSV file (at build, or at first use with ``lazy_init``)."""
        csv_file = Path(self.args["csv_file"])
        root = Path(self.args["root"]) if self.args["root"] else csv_file.parent
        return read_listing(csv_file, root)

    def load(self, item: tuple[Path, int]) -> tuple[np.ndarray, np.ndarray]:
        """The file's bytes and its label."""
        path, label = item
        return self.read_bytes(str(path)), np.array([label], np.int32)

    def source_info(self, item: tuple[Path, int]) -> str:
        """The file's path, shown in error messages."""
        return str(item[0])
