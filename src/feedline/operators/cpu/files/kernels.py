"""Kernels of ``io.file.read`` and ``decoders.numpy``."""

from __future__ import annotations

import io
import mmap
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import to_numpy_dtype

__all__ = ["FileReadKernel", "NumpyDecodeKernel", "decode_npy", "read_file"]

_NPY_MAGIC = b"\x93NUMPY"


def read_file(path: str, use_mmap: bool) -> np.ndarray:
    """The bytes of ``path`` as uint8 (through a memory map when ``use_mmap``).

    Raises:
        OSError: the file cannot be opened or read (naming it).
    """
    try:
        with open(path, "rb") as handle:
            if use_mmap:
                size = handle.seek(0, io.SEEK_END)
                if size == 0:
                    return np.zeros(0, np.uint8)
                with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    return np.frombuffer(mapped, np.uint8).copy()
            return np.frombuffer(handle.read(), np.uint8)
    except OSError as exc:
        raise OSError(f"cannot read file {path!r}: {exc.strerror or exc}") from exc


class FileReadKernel(SampleKernel):
    """``io.file.read``: a path in, the file's bytes out."""

    def setup(self) -> None:
        """``use_o_direct`` is refused (not supported)."""
        if self.args["use_o_direct"]:
            raise ValueError("io.file.read: use_o_direct=True is not supported; leave it False")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout."""
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        encoded = inputs[0]
        if encoded.dtype not in (np.uint8, np.int8) or encoded.ndim != 1:
            raise TypeError(
                f"Unexpected input data type: file paths must be 1-D uint8 or int8, got "
                f"{encoded.dtype} {encoded.shape}"
            )
        return read_file(encoded.tobytes().decode("utf-8"), not args["dont_use_mmap"])


def decode_npy(data: np.ndarray) -> np.ndarray:
    """The array serialized in ``data`` (``.npy`` format 1.0), C-contiguous.

    Raises:
        ValueError: bad magic string, another format version, a size other than the header
            announces (DALI's message), or an unsupported type.
    """
    raw = data.tobytes()
    if raw[:6] != _NPY_MAGIC:
        raise ValueError(
            f"Got bad magic string for numpy header {raw[:6]!r}, expected {_NPY_MAGIC!r}"
        )
    if raw[6:8] != b"\x01\x00":
        raise ValueError(f"only .npy format version 1.0 is supported, got {raw[6:8]!r}")
    stream = io.BytesIO(raw)
    try:
        np.lib.format.read_magic(stream)
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    except ValueError as exc:
        raise ValueError(f"cannot decode the .npy header: {exc}") from exc
    expected = stream.tell() + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if expected != len(raw):
        raise ValueError(
            f"Expected data numpy size {expected} bytes does not match the actual size "
            f"{len(raw)} bytes."
        )
    try:
        array = np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"cannot decode the .npy data: {exc}") from exc
    if array.dtype.kind not in "biuf":
        raise ValueError(f"the .npy type {array.dtype} is not supported (numbers and bool only)")
    return np.ascontiguousarray(array)


class NumpyDecodeKernel(SampleKernel):
    """``decoders.numpy``: ``.npy`` bytes in, the array out.

    As in DALI, every sample the operator decodes must have the number of dimensions of the
    first one, and (without ``dtype``) its element type.
    """

    def setup(self) -> None:
        """Nothing decoded yet: no reference sample."""
        self._first: tuple[int, np.dtype] | None = None
        self._lock = threading.Lock()

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout."""
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        array = decode_npy(inputs[0])
        self._check_like_first(array, args["dtype"] is None)
        if args["dtype"] is not None:
            array = array.astype(to_numpy_dtype(args["dtype"]))
        return array

    def _check_like_first(self, array: np.ndarray, same_type: bool) -> None:
        """Refuse a sample whose dimensions (or type) differ from the first one's.

        Raises:
            ValueError: in DALI's words.
        """
        with self._lock:
            if self._first is None:
                self._first = (array.ndim, array.dtype)
            ndim, dtype = self._first
        if array.ndim != ndim:
            raise ValueError(
                "All samples in the dataset must have the same number of dimensions, but got "
                f"differing sample dimensions: {ndim} and {array.ndim}"
            )
        if same_type and array.dtype != dtype:
            raise ValueError(
                "All samples in the dataset must have the same data type, but got differing "
                f"types: {dtype} and {array.dtype}"
            )
