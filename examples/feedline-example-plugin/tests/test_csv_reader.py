"""``example.readers.csv`` gets sharding, padding, shuffling and checkpoints from the base."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from feedline.testing import check_reader, run_operator

from feedline_example.csv_reader import CsvReader


def _listing(tmp_path: Path, count: int = 7) -> Path:
    lines = ["path,label,comment"]
    for i in range(count):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * (i + 1))
        lines.append(f"{i}.bin,{i % 3},sample {i}")
    csv_file = tmp_path / "list.csv"
    csv_file.write_text("\n".join(lines) + "\n")
    return csv_file


def test_passes_check_reader(tmp_path: Path) -> None:
    done = check_reader(CsvReader, {"csv_file": str(_listing(tmp_path))})
    assert "checkpoint" in done and "shards=3 pad=True shuffle=True" in done


def test_reads_bytes_and_labels_in_order(tmp_path: Path) -> None:
    csv_file = _listing(tmp_path, 4)
    (data, _), (labels, _) = run_operator(
        "example.readers.csv", args={"csv_file": str(csv_file)}, batch_size=4, iterations=1
    )[0]
    assert [d.tobytes() for d in data] == [bytes([i]) * (i + 1) for i in range(4)]
    assert [int(x[0]) for x in labels] == [0, 1, 2, 0]


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("path,label\na.jpg,cat\n")
    with pytest.raises(Exception, match=r"bad.csv, line 2: label 'cat' is not an integer"):
        run_operator("example.readers.csv", args={"csv_file": str(bad)}, iterations=1)
    bad.write_text("file,label\na.jpg,1\n")
    with pytest.raises(Exception, match=r"lacks the column\(s\) \['path'\]"):
        run_operator("example.readers.csv", args={"csv_file": str(bad)}, iterations=1)


def test_labels_are_int32(tmp_path: Path) -> None:
    _, (labels, _) = run_operator(
        "example.readers.csv", args={"csv_file": str(_listing(tmp_path))}, iterations=1
    )[0]
    assert all(x.dtype == np.int32 and x.shape == (1,) for x in labels)
