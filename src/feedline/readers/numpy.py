"""``fn.readers.numpy``: NumPy ``.npy`` files as arrays, with DALI's arguments.

This module is the ``numpy-reader`` plugin (entry point group ``feedline.plugins``). Sharding,
shuffling, padding, epochs and checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Batch
from feedline.core.schema import ArgSpec
from feedline.core.tensor import TensorListCPU
from feedline.readers.base import Reader, reader_schema
from feedline.readers.direct_io import read_direct
from feedline.readers.numpy_roi import (
    ROI_ARGS,
    NpyHeader,
    check_consistent,
    extract_roi,
    read_header,
    roi_bounds,
)

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["NUMPY_SCHEMA", "NumpyReader", "feedline_register_operators", "list_numpy_files"]

_DOC = """\
Read NumPy arrays (``.npy`` files).

Outputs ``data``: each file's array, with the file's shape and element type (numbers and bool;
big-endian files are converted to native order). Arrays stored in Fortran order are transposed
to C order (a copy). Without a ROI, C-order arrays are zero-copy views of the memory-mapped file.
Exactly one of three modes:

* directory walk (``file_root`` alone): the files of ``file_root`` whose name matches
  ``file_filter``, then those of each immediate sub-directory (one level, as DALI), names
  sorted bytewise within each directory and sub-directories sorted bytewise;
* list file (``file_list``): one file name per line (kept as written; empty lines are skipped),
  relative to ``file_root`` if given, else to the list file's directory;
* explicit (``files``): paths used as given (or joined to ``file_root``).

A region of interest reads part of each array: a start (``roi_start`` or ``rel_roi_start``) and
an end (``roi_end``, ``rel_roi_end``, ``roi_shape`` or ``rel_roi_shape``), one value per axis of
``roi_axes`` (default: every axis). Relative values are fractions of the extent, rounded to the
nearest integer. ``out_of_bounds_policy`` says what happens to a region that leaves the array."""

_GPU_ONLY = "GPU reader only (cuFile); on the CPU it has no effect."

NUMPY_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("file_root", "str", None, "Root directory of the files (it and its immediate "
            "sub-directories are listed when neither file_list nor files is given), or the "
            "directory relative paths start at."),
    ArgSpec("file_filter", "str", "*.npy", "Glob pattern (fnmatch, case-sensitive) selecting "
            "file names in the directory walk."),
    ArgSpec("file_list", "str", None, "Path of a text file with one file name per line. "
            "Excludes files."),
    ArgSpec("files", "str_vec", None, "Paths of the files to read. Excludes file_list."),
    ArgSpec("cache_header_information", "bool", False, "Parse each file's header once and "
            "reuse it (files must not change while the reader runs)."),
    ArgSpec("use_o_direct", "bool", False, "Read files with O_DIRECT, bypassing the page cache "
            "(needs dont_use_mmap=True and a file system that supports it)."),
    ArgSpec("register_buffers", "bool", True, _GPU_ONLY),
    ArgSpec("roi_start", "int_vec", None, "ROI start, in elements, per axis of roi_axes.",
            tensor=True),
    ArgSpec("rel_roi_start", "float_vec", None, "ROI start as a fraction of each extent.",
            tensor=True),
    ArgSpec("roi_end", "int_vec", None, "ROI end (exclusive), in elements.", tensor=True),
    ArgSpec("rel_roi_end", "float_vec", None, "ROI end as a fraction of each extent.", tensor=True),
    ArgSpec("roi_shape", "int_vec", None, "ROI extent, in elements.", tensor=True),
    ArgSpec("rel_roi_shape", "float_vec", None, "ROI extent as a fraction of each extent.",
            tensor=True),
    ArgSpec("roi_axes", "int_vec", (), "The axes the ROI arguments give values for, in order "
            "(default: every axis)."),
    ArgSpec("out_of_bounds_policy", "str", "error", "A ROI that leaves the array: 'error' "
            "raises, 'trim_to_shape' cuts it to the array, 'pad' fills the outside with "
            "fill_value.", choices=("error", "trim_to_shape", "pad")),
    ArgSpec("fill_value", "float", 0.0, "The padding value of out_of_bounds_policy='pad' (rounded "
            "and saturated to the array's type)."),
)  # fmt: skip

NUMPY_SCHEMA = reader_schema("readers.numpy", _DOC, NUMPY_ARGS, outputs=("data",))


def list_numpy_files(
    file_root: str | None,
    file_filter: str = "*.npy",
    file_list: str | None = None,
    files: Sequence[str] | None = None,
) -> list[tuple[str, str]]:
    """``(path to open, source_info)`` of every sample, in canonical order.

    Raises:
        ValueError: conflicting or missing modes, an empty data set.
        FileNotFoundError: ``file_root`` or ``file_list`` does not exist.
    """
    if file_list is not None and files is not None:
        raise ValueError("readers.numpy: file_list and files are mutually exclusive")
    if files is not None:
        if not files:
            raise ValueError("readers.numpy: files is empty")
        return [(os.path.join(file_root, f) if file_root else f, f) for f in files]
    if file_list is not None:
        base = file_root if file_root is not None else os.path.dirname(file_list)
        with open(file_list, encoding="utf-8") as f:
            names = [line.rstrip("\n") for line in f if line.rstrip("\n")]
        if not names:
            raise ValueError(f"readers.numpy: file_list {file_list!r} names no file")
        return [(os.path.join(base, name), name) for name in names]
    if file_root is None:
        raise ValueError("readers.numpy: give file_root, file_list or files")
    if not os.path.isdir(file_root):
        raise FileNotFoundError(f"readers.numpy: file_root {file_root!r} is not a directory")
    found = _matching(file_root, "", file_filter)
    with os.scandir(file_root) as entries:
        subdirs = sorted((e.name for e in entries if e.is_dir()), key=os.fsencode)
    for subdir in subdirs:
        found += _matching(file_root, subdir, file_filter)
    if not found:
        raise ValueError(
            f"readers.numpy: no file in file_root {file_root!r} or its sub-directories matches "
            f"file_filter {file_filter!r}"
        )
    return [(os.path.join(file_root, rel), rel) for rel in found]


def _matching(file_root: str, subdir: str, file_filter: str) -> list[str]:
    """Files (and links) of ``file_root/subdir`` whose name matches, byte-sorted."""
    with os.scandir(os.path.join(file_root, subdir)) as entries:
        names = [
            e.name
            for e in entries
            if (e.is_file() or e.is_symlink()) and fnmatch.fnmatchcase(e.name, file_filter)
        ]
    return [os.path.join(subdir, name) for name in sorted(names, key=os.fsencode)]


class NumpyReader(Reader):
    """The ``readers.numpy`` kernel; its items are positions in the file list."""

    def setup(self) -> None:
        """Check the reader's own arguments, then the common ones."""
        if self.args["use_o_direct"] and not self.args["dont_use_mmap"]:
            raise ValueError(
                "readers.numpy: use_o_direct=True needs dont_use_mmap=True (they are mutually "
                "exclusive with memory mapping)"
            )
        self._headers: dict[str, NpyHeader] = {}
        self._roi_per_sample = bool(self.ctx.tensor_args & set(ROI_ARGS))
        if self._roi_per_sample and self.ctx.on_error == "skip":
            raise ValueError(
                "readers.numpy: per-sample ROI arguments (DataNodes) cannot be combined with "
                'on_error="skip" (replacement samples would have no ROI values)'
            )
        super().setup()

    def index(self) -> Sequence[int]:
        """List the files of the selected mode."""
        args = self.args
        entries = list_numpy_files(
            args["file_root"], args["file_filter"], args["file_list"], args["files"]
        )
        self._paths = [path for path, _ in entries]
        self._sources = [source for _, source in entries]
        return range(len(entries))

    def _header(self, path: str) -> NpyHeader:
        if not self.args["cache_header_information"]:
            return read_header(path)
        header = self._headers.get(path)
        if header is None:
            header = self._headers[path] = read_header(path)
        return header

    def load(self, item: int) -> tuple[np.ndarray]:
        """The file's array (or its region of interest)."""
        path = self._paths[item]
        header = self._header(path)
        raw = read_direct(path) if self.args["use_o_direct"] else self.read_bytes(path)
        count = int(np.prod(header.shape))
        if raw.size < header.offset + count * header.dtype.itemsize:
            raise ValueError(
                f"{path!r} is truncated: its header announces {header.shape} {header.dtype}"
            )
        flat = np.frombuffer(raw, header.dtype, count=count, offset=header.offset)
        if header.fortran_order:
            array = np.ascontiguousarray(flat.reshape(header.shape[::-1]).T)
        else:
            array = flat.reshape(header.shape)
        if not header.dtype.isnative:
            array = array.astype(header.dtype.newbyteorder("="))
        if not self._roi_per_sample:
            array = self._roi(array, self.args)
        return (array,)

    def _roi(self, array: np.ndarray, args: Mapping[str, Any]) -> np.ndarray:
        """The region of interest that ``args`` select (the whole array without one)."""
        bounds = roi_bounds(args, array.shape)
        if bounds is None:
            return array
        return extract_roi(array, bounds, args["out_of_bounds_policy"], args["fill_value"])

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The next batch; per-sample ROI arguments are applied here, to whole arrays loaded
        ahead (a sample's ROI values arrive with its iteration)."""
        outputs = super().run(batch)
        if not self._roi_per_sample:
            return outputs
        (whole,) = outputs
        per_sample = {name: batch.arg_inputs[name] for name in ROI_ARGS if name in batch.arg_inputs}

        def cut(i: int) -> np.ndarray:
            args = dict(self.args)
            args.update(
                {
                    name: np.asarray(values[i]).reshape(-1).tolist()
                    for name, values in per_sample.items()
                }
            )
            return self._roi(np.asarray(whole[i]), args)

        samples = batch.map(cut, len(whole))
        return [TensorListCPU.from_samples(samples, whole.layout(), whole.source_infos())]

    def load_batch(self, items: Sequence[int]) -> Sequence[Sequence[np.ndarray] | np.ndarray]:
        """The arrays of ``items``; all must have one element type and number of dimensions."""
        columns = super().load_batch(items)
        check_consistent(list(columns[0]), [self._paths[item] for item in items])
        return columns

    def source_info(self, item: int) -> str:
        """The path as listed."""
        return self._sources[item]


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.numpy``."""
    registry.add_operator(NUMPY_SCHEMA, kernels={"cpu": NumpyReader})
