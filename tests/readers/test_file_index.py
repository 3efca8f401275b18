"""Tests of the readers.file sample list: directory walk, file_list parsing, files/labels."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.readers.file_index import (
    DEFAULT_FILE_FILTERS,
    build_file_index,
    explicit_files,
    parse_file_list,
    walk_directory,
)
from tests.conftest import sample_data

FILE_TREE = sample_data("file_tree")


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(name.encode())


def sources(entries: list) -> list[tuple[str, int]]:
    return [(e.source, e.label) for e in entries]


def test_walk_order_labels_and_levels(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "beta/b.jpg", "alpha/z.png", "alpha/a1.png", "alpha/a 3.jpeg", "Zeta/x.bmp",
        "_under/u.webp", "top.jpg", "alpha/nested/deep.jpg", "beta/notes.txt",
    )  # fmt: skip
    (tmp_path / "empty").mkdir()
    (tmp_path / "sub").mkdir()
    touch(tmp_path, "sub/s.wav")
    entries = walk_directory(str(tmp_path))
    assert sources(entries) == [
        ("Zeta/x.bmp", 0),
        ("_under/u.webp", 1),
        ("alpha/a 3.jpeg", 2),
        ("alpha/a1.png", 2),
        ("alpha/z.png", 2),
        ("beta/b.jpg", 3),
        # "empty" consumes label 4
        ("sub/s.wav", 5),
    ]
    assert entries[0].path == os.path.join(str(tmp_path), "Zeta", "x.bmp")


def test_case_sensitivity_and_custom_filters(tmp_path: Path) -> None:
    touch(tmp_path, "c/z1.JPG", "c/z2.jpg", "c/data.BIN", "C2/q.bin")
    assert sources(walk_directory(str(tmp_path))) == [("c/z1.JPG", 1), ("c/z2.jpg", 1)]
    exact = walk_directory(str(tmp_path), case_sensitive_filter=True)
    assert sources(exact) == [("c/z2.jpg", 1)]
    assert sources(walk_directory(str(tmp_path), ["*.bin"])) == [("C2/q.bin", 0), ("c/data.BIN", 1)]
    assert sources(walk_directory(str(tmp_path), ["*.bin"], case_sensitive_filter=True)) == [
        ("C2/q.bin", 0)
    ]
    assert sources(walk_directory(str(tmp_path), ["z?.*", "*.bin"])) == [
        ("C2/q.bin", 0), ("c/data.BIN", 1), ("c/z1.JPG", 1), ("c/z2.jpg", 1),
    ]  # fmt: skip


def test_dir_filters_relabel_and_list_each_dir_once(tmp_path: Path) -> None:
    touch(tmp_path, "cat/1.jpg", "dog/2.jpg", "cow/3.jpg", "Cap/4.jpg")
    got = walk_directory(str(tmp_path), dir_filters=["c*", "ca*"])
    assert sources(got) == [("Cap/4.jpg", 0), ("cat/1.jpg", 1), ("cow/3.jpg", 2)]
    got = walk_directory(str(tmp_path), dir_filters=["c*"], case_sensitive_filter=True)
    assert sources(got) == [("cat/1.jpg", 0), ("cow/3.jpg", 1)]


def test_symlinks_are_followed(tmp_path: Path) -> None:
    touch(tmp_path, "data/real.jpg", "outside/o.jpg")
    os.symlink(tmp_path / "outside" / "o.jpg", tmp_path / "data" / "link.jpg")
    os.symlink(tmp_path / "outside", tmp_path / "linked_dir")
    got = sources(walk_directory(str(tmp_path), dir_filters=["data", "linked_dir"]))
    assert got == [("data/link.jpg", 0), ("data/real.jpg", 0), ("linked_dir/o.jpg", 1)]


def test_walk_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"file_root '.*nope' does not exist"):
        walk_directory(str(tmp_path / "nope"))
    touch(tmp_path, "f.jpg")
    with pytest.raises(NotADirectoryError, match=r"file_root '.*f\.jpg' is not a directory"):
        walk_directory(str(tmp_path / "f.jpg"))
    (tmp_path / "d").mkdir()
    touch(tmp_path, "d/readme.txt")
    with pytest.raises(ValueError, match=r"No files found.*file_filters"):
        walk_directory(str(tmp_path))


def test_default_filters_match_spec() -> None:
    assert " ".join(DEFAULT_FILE_FILTERS) == (
        "*.jpg *.jpeg *.png *.bmp *.tif *.tiff *.pnm *.ppm *.pgm *.pbm *.jp2 *.webp *.flac "
        "*.ogg *.wav"
    )


def write_list(tmp_path: Path, text: str) -> str:
    path = tmp_path / "list.txt"
    path.write_bytes(text.encode())
    return str(path)


def test_file_list_parsing(tmp_path: Path) -> None:
    text = (
        "a.png 1\n"
        "\n"
        "cute kitten.jpg 1\n"
        "b.png\t0012\r\n"
        "   \n"
        " lead.png 2\n"
        "x y.png  4  \n"
        "a 1 2\n"
        "./root.jpg 3\n"
        "/abs/p.jpg 7\n"
        "notes.txt 2147483647"
    )
    entries = parse_file_list(write_list(tmp_path, text))
    assert sources(entries) == [
        ("a.png", 1), ("cute kitten.jpg", 1), ("b.png", 12), (" lead.png", 2), ("x y.png", 4),
        ("a 1", 2), ("./root.jpg", 3), ("/abs/p.jpg", 7), ("notes.txt", 2**31 - 1),
    ]  # fmt: skip
    # Relative to the list's directory unless file_root is given; absolute paths stay absolute.
    assert entries[0].path == os.path.join(str(tmp_path), "a.png")
    assert entries[7].path == "/abs/p.jpg"
    rooted = parse_file_list(write_list(tmp_path, "sub/c.jpg 0\n"), file_root="/data")
    assert rooted[0].path == "/data/sub/c.jpg"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("a.png", "must end with an integer label"),
        ("a.png -1", "must not be negative"),
        ("a.png 3.5", "must be an integer"),
        ("a.png 3 extra", "must end with an integer label"),
        ("a.png3", "expected a file name, whitespace and a label"),
        ("5", "expected a file name, whitespace and a label"),
    ],
)
def test_file_list_errors_name_the_line(tmp_path: Path, line: str, reason: str) -> None:
    path = write_list(tmp_path, f"ok.png 0\n\n{line}\nok2.png 1\n")
    with pytest.raises(
        ValueError, match=rf"list\.txt', line 3: .*{reason}.*{re.escape(repr(line))}"
    ):
        parse_file_list(path)


def test_file_list_other_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line 1: label 2147483648 does not fit in int32"):
        parse_file_list(write_list(tmp_path, "a.png 2147483648\n"))
    with pytest.raises(ValueError, match=r"No files found: file_list .* has no entries"):
        parse_file_list(write_list(tmp_path, "\n  \n"))
    with pytest.raises(FileNotFoundError, match=r"file_list '.*missing\.txt' does not exist"):
        parse_file_list(str(tmp_path / "missing.txt"))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(
                st.characters(
                    # no line breaks; no NUL, which no path can hold (refused with its line)
                    codec="utf-8",
                    exclude_characters="\0\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
                ),
                min_size=1,
                max_size=12,
            )
            .map(str.strip)
            .filter(bool),
            st.integers(0, 2**31 - 1),
            st.sampled_from([" ", "\t", "  ", " \t "]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_file_list_round_trip(rows: list[tuple[str, int, str]]) -> None:
    import tempfile

    text = "".join(f"{name}{sep}{label}\n" for name, label, sep in rows)
    with tempfile.TemporaryDirectory() as tmp:
        entries = parse_file_list(write_list(Path(tmp), text))
    assert sources(entries) == [(name, label) for name, label, _ in rows]


def test_explicit_files(tmp_path: Path) -> None:
    got = explicit_files(["b.jpg", "a.jpg", "b.jpg"], file_root="/r")
    assert [(e.path, e.label, e.source) for e in got] == [
        ("/r/b.jpg", 0, "b.jpg"), ("/r/a.jpg", 1, "a.jpg"), ("/r/b.jpg", 2, "b.jpg"),
    ]  # fmt: skip
    got = explicit_files(["x", "y"], labels=[-5, 2**31 - 1])
    assert [(e.path, e.label) for e in got] == [("x", -5), ("y", 2**31 - 1)]
    with pytest.raises(ValueError, match="files must not be empty"):
        explicit_files([])
    with pytest.raises(ValueError, match="2 labels for 3 files"):
        explicit_files(["a", "b", "c"], labels=[1, 2])
    with pytest.raises(ValueError, match=r"labels\[1\] = 2147483648 does not fit in int32"):
        explicit_files(["a", "b"], labels=[0, 2**31])
    with pytest.raises(ValueError, match=r"files\[1\] is an empty path"):
        explicit_files(["a", ""])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, ValueError, "needs one of file_root, file_list or files"),
        ({"files": ["a"], "file_list": "l.txt"}, ValueError, "either files or file_list"),
        ({"file_root": "/x", "labels": [1]}, ValueError, "labels can only be given together"),
        (
            {"file_root": "/x", "file_filters": []},
            ValueError,
            "file_filters must not be an empty",
        ),
        (
            {"file_root": "/x", "dir_filters": []},
            ValueError,
            "dir_filters must not be an empty",
        ),
        ({"file_list": ""}, ValueError, "file_list must not be an empty path"),
        ({"file_root": ""}, ValueError, "file_root must not be an empty path"),
        ({"files": ["a"], "file_filters": ["*"]}, ValueError, "file_filters applies only"),
        ({"file_list": "l.txt", "dir_filters": ["*"]}, ValueError, "dir_filters applies only"),
        ({"files": []}, ValueError, "files must not be empty"),
        ({"file_root": "/nonexistent/root"}, FileNotFoundError, "/nonexistent/root"),
        ({"file_list": "/nonexistent/l.txt"}, FileNotFoundError, "/nonexistent/l.txt"),
    ],
)
def test_mode_argument_errors(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        build_file_index(**kwargs)


def test_build_index_modes(tmp_path: Path) -> None:
    touch(tmp_path, "k/a.jpg", "k/b.dat")
    walked = build_file_index(file_root=str(tmp_path))
    assert sources(walked) == [("k/a.jpg", 0)]
    filtered = build_file_index(file_root=str(tmp_path), file_filters=["*.dat"])
    assert sources(filtered) == [("k/b.dat", 0)]
    listed = build_file_index(file_list=write_list(tmp_path, "k/b.dat 9\n"))
    assert sources(listed) == [("k/b.dat", 9)]
    given_ = build_file_index(files=["k/a.jpg"], labels=[3], file_root=str(tmp_path))
    assert [(e.path, e.label) for e in given_] == [(str(tmp_path / "k" / "a.jpg"), 3)]


# Expected values below were produced by DALI 2.4 readers.file on the same tree.
DALI_WALK = [
    ("100/swan-3584559_640.jpg", 0), ("414/backpack-3510412_640.jpg", 1),
    ("510/ship-1083562_640.jpg", 2), ("695/padlock-406986_640.jpg", 3),
    ("704/parking-meter-3556171_960_720.jpg", 4), ("704/parking-meter-828887_960_720.jpg", 4),
    ("704/street-2116802_960_720.jpg", 4), ("814/motor-boats-3524545_960_720.jpg", 5),
    ("814/powerboat-2784250_960_720.jpg", 5), ("814/speedboat-271768_960_720.jpg", 5),
    ("84/peacock-90051_640.jpg", 6),
]  # fmt: skip


def test_real_file_tree() -> None:
    assert sources(walk_directory(str(FILE_TREE))) == DALI_WALK
    listed = parse_file_list(str(FILE_TREE / "image_list.txt"))
    assert len(listed) == 11
    assert all(e.label == int(e.source.split("/")[0]) for e in listed)
    assert all(os.path.isfile(e.path) for e in listed)
    assert listed[0].source == "704/parking-meter-3556171_960_720.jpg"
