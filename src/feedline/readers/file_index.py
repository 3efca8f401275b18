"""The sample list of ``readers.file``: directory walk, ``file_list`` parsing, ``files``/``labels``.

The rules are stated in ``docs/readers.md``. Every function returns :class:`FileEntry` items in
canonical order (before sharding and shuffling) and raises an error that names the argument, the
path and, for list files, the line.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = [
    "DEFAULT_FILE_FILTERS",
    "FileEntry",
    "build_file_index",
    "explicit_files",
    "parse_file_list",
    "walk_directory",
]

DEFAULT_FILE_FILTERS: tuple[str, ...] = (
    "*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm", "*.ppm", "*.pgm", "*.pbm",
    "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav",
)  # fmt: skip

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_LIST_LINE = re.compile(r"(.*\S)\s+([0-9]+)", re.DOTALL)


class FileEntry(NamedTuple):
    """One sample of ``readers.file``.

    Attributes:
        path: the path that is opened.
        label: the int32 label.
        source: the sample's ``source_info`` (the path as listed).
    """

    path: str
    label: int
    source: str


def _matcher(patterns: Sequence[str], case_sensitive: bool) -> re.Pattern[str]:
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile("|".join(fnmatch.translate(p) for p in patterns), flags)


def _byte_order(name: str) -> bytes:
    return os.fsencode(name)


def walk_directory(
    file_root: str,
    file_filters: Sequence[str] = DEFAULT_FILE_FILTERS,
    dir_filters: Sequence[str] | None = None,
    case_sensitive_filter: bool = False,
) -> list[FileEntry]:
    """Samples of the class sub-directories of ``file_root`` (one level deep).

    Labels are indices in the byte-sorted list of (filtered) sub-directories, empty ones included.
    Files directly in ``file_root`` and deeper directories are ignored.

    Raises:
        FileNotFoundError: ``file_root`` does not exist.
        NotADirectoryError: ``file_root`` is not a directory.
        ValueError: no file matches.
    """
    if not os.path.exists(file_root):
        raise FileNotFoundError(f"file_root {file_root!r} does not exist")
    if not os.path.isdir(file_root):
        raise NotADirectoryError(f"file_root {file_root!r} is not a directory")
    with os.scandir(file_root) as it:
        subdirs = [e.name for e in it if e.is_dir()]
    if dir_filters is not None:
        keep = _matcher(dir_filters, case_sensitive_filter)
        subdirs = [d for d in subdirs if keep.match(d)]
    subdirs.sort(key=_byte_order)
    wanted = _matcher(file_filters, case_sensitive_filter)
    entries: list[FileEntry] = []
    for label, subdir in enumerate(subdirs):
        directory = os.path.join(file_root, subdir)
        with os.scandir(directory) as it:
            names = [e.name for e in it if (e.is_symlink() or e.is_file()) and wanted.match(e.name)]
        names.sort(key=_byte_order)
        entries += [
            FileEntry(os.path.join(directory, name), label, f"{subdir}/{name}") for name in names
        ]
    if not entries:
        selected = f" selected by dir_filters {list(dir_filters)!r}" if dir_filters else ""
        raise ValueError(
            f"No files found in file_root {file_root!r}: none of its {len(subdirs)} class "
            f"sub-directories{selected} holds a file matching file_filters "
            f"{list(file_filters)!r} (case_sensitive_filter={case_sensitive_filter})"
        )
    return entries


def _line_error(list_path: str, lineno: int, line: str) -> ValueError:
    if re.search(r"\s-[0-9]+$", line):
        reason = "the label must not be negative"
    elif re.search(r"\s[-+]?[0-9]*\.[0-9]+$", line):
        reason = "the label must be an integer"
    elif not re.search(r"[0-9]$", line):
        reason = "the line must end with an integer label"
    else:
        reason = "expected a file name, whitespace and a label"
    return ValueError(
        f"file_list {list_path!r}, line {lineno}: {reason} ('<file name> <label>'); got {line!r}"
    )


def parse_file_list(list_path: str, file_root: str | None = None) -> list[FileEntry]:
    """Samples named by a list file whose lines read ``<file name> <label>``.

    Each line is parsed from its end: the label is the trailing run of decimal digits, the
    whitespace before it is skipped, the rest is the file name (inner spaces allowed). Blank
    lines are skipped. Names are joined to ``file_root`` if given, else to the list's directory;
    ``source`` keeps the name as written.

    Raises:
        FileNotFoundError: the list file does not exist.
        ValueError: a malformed line (naming the file and line number), or no entries.
    """
    if not os.path.isfile(list_path):
        raise FileNotFoundError(f"file_list {list_path!r} does not exist or is not a file")
    with open(list_path, "rb") as f:
        text = f.read().decode("utf-8", errors="surrogateescape")
    base = file_root if file_root is not None else os.path.dirname(list_path)
    entries: list[FileEntry] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip()
        if not line:
            continue
        match = _LIST_LINE.fullmatch(line)
        if match is None:
            raise _line_error(list_path, lineno, line)
        name, digits = match.group(1), match.group(2).lstrip("0") or "0"
        # Compare lengths first: int() refuses strings of thousands of digits.
        if len(digits) > len(str(INT32_MAX)) or int(digits) > INT32_MAX:
            raise ValueError(
                f"file_list {list_path!r}, line {lineno}: label {digits:.20} does not fit in int32"
            )
        if "\0" in name:
            raise ValueError(f"file_list {list_path!r}, line {lineno}: NUL byte in the file name")
        label = int(digits)
        entries.append(FileEntry(os.path.join(base, name), label, name))
    if not entries:
        raise ValueError(f"No files found: file_list {list_path!r} has no entries")
    return entries


def explicit_files(
    files: Sequence[str], labels: Sequence[int] | None = None, file_root: str | None = None
) -> list[FileEntry]:
    """Samples given as a list of paths (joined to ``file_root`` if given) and optional labels.

    Without ``labels`` the label of ``files[i]`` is ``i``.

    Raises:
        ValueError: empty ``files``, an empty path, ``labels`` of another length, or a label out
            of int32 range.
    """
    if not files:
        raise ValueError("files must not be empty")
    if labels is None:
        labels = range(len(files))
    elif len(labels) != len(files):
        raise ValueError(
            f"labels must have one label per file: got {len(labels)} labels for {len(files)} files"
        )
    entries: list[FileEntry] = []
    for i, (name, label) in enumerate(zip(files, labels, strict=True)):
        if not name:
            raise ValueError(f"files[{i}] is an empty path")
        if not INT32_MIN <= label <= INT32_MAX:
            raise ValueError(f"labels[{i}] = {label} does not fit in int32")
        path = os.path.join(file_root, name) if file_root is not None else name
        entries.append(FileEntry(path, int(label), name))
    return entries


def build_file_index(
    *,
    file_root: str | None = None,
    file_list: str | None = None,
    files: Sequence[str] | None = None,
    labels: Sequence[int] | None = None,
    file_filters: Sequence[str] | None = None,
    dir_filters: Sequence[str] | None = None,
    case_sensitive_filter: bool = False,
) -> list[FileEntry]:
    """Check the ``readers.file`` mode arguments (``docs/readers.md``) and list the samples.

    ``file_filters`` (default :data:`DEFAULT_FILE_FILTERS`) and ``dir_filters`` apply to the
    directory walk only; giving them with ``file_list`` or ``files`` is an error rather than
    being silently ignored.

    Raises:
        ValueError: a missing or conflicting mode argument, an empty filter list, or no files.
        FileNotFoundError, NotADirectoryError: a missing ``file_root`` or ``file_list``.
    """
    if files is not None and file_list is not None:
        raise ValueError("readers.file: give either files or file_list, not both")
    if labels is not None and files is None:
        raise ValueError("readers.file: labels can only be given together with files")
    for arg, value in (("file_filters", file_filters), ("dir_filters", dir_filters)):
        if value is not None and not value:
            raise ValueError(f"readers.file: {arg} must not be an empty list")
    if files is not None or file_list is not None:
        for arg, value in (("file_filters", file_filters), ("dir_filters", dir_filters)):
            if value is not None:
                raise ValueError(
                    f"readers.file: {arg} applies only to the directory walk (file_root alone); "
                    f"it has no effect with {'files' if files is not None else 'file_list'}"
                )
    if files is not None:
        return explicit_files(files, labels, file_root)
    if file_list is not None:
        if not file_list:
            raise ValueError("readers.file: file_list must not be an empty path")
        return parse_file_list(file_list, file_root)
    if file_root is None:
        raise ValueError("readers.file needs one of file_root, file_list or files")
    if not file_root:
        raise ValueError("readers.file: file_root must not be an empty path")
    return walk_directory(
        file_root, file_filters or DEFAULT_FILE_FILTERS, dir_filters, case_sensitive_filter
    )
