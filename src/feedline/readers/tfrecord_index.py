"""``python -m feedline.readers.tfrecord_index FILE INDEX``: write a TFRecord index file.

The index has one ``<offset> <size>`` line per record (the format of DALI's ``tfrecord2idx``),
which ``readers.tfrecord`` needs to shard and shuffle records without reading the files first.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from feedline.readers.tfrecord_format import scan_records

__all__ = ["main", "write_index"]


def write_index(tfrecord_path: str, index_path: str) -> int:
    """Index ``tfrecord_path`` into ``index_path``; returns the number of records.

    Raises:
        ValueError: the file ends inside a record (names the file and the offset).
    """
    data = np.fromfile(tfrecord_path, np.uint8)
    lines = [f"{offset} {size}\n" for offset, size in scan_records(data, tfrecord_path)]
    with open(index_path, "w", encoding="ascii") as f:
        f.writelines(lines)
    return len(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m feedline.readers.tfrecord_index",
        description="Write the index file readers.tfrecord needs (like DALI's tfrecord2idx).",
    )
    parser.add_argument("tfrecord", help="the TFRecord file")
    parser.add_argument("index", help="the index file to write")
    args = parser.parse_args(argv)
    try:
        write_index(args.tfrecord, args.index)
    except (OSError, ValueError) as exc:
        parser.exit(1, f"error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
