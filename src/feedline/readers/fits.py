"""``fn.experimental.readers.fits``: image data of FITS files (``pip install 'feedline[fits]'``).

This module is the ``fits-reader`` plugin (entry point group ``feedline.plugins``). Files are
read with astropy, which also decompresses tile-compressed HDUs. Sharding, shuffling,
padding, epochs and checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import fnmatch
import io
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec
from feedline.core.types import to_numpy_dtype
from feedline.readers.base import Reader, reader_schema

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["FITS_SCHEMA", "FitsReader", "list_fits_files"]

_DOC = """\
Read the data of chosen HDUs of FITS files, one output per entry of ``hdu_indices``.

HDUs are numbered from 1 (the primary HDU); the default reads HDU 2, the first extension.
Each output is the HDU's data array (astropy's axis order: the last FITS axis first), in native
byte order, with the HDU's scaling (BSCALE/BZERO) applied; compressed image HDUs are
decompressed. Exactly one of three modes lists the files: ``file_root`` (the files of it and of
its immediate sub-folders matching ``file_filter``, sorted), ``file_list`` (a text file of
paths, relative to ``file_root`` or to the list's folder) or ``files``."""

FITS_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("file_root", "str", None, "A folder of FITS files (and sub-folders of them), or "
            "the folder relative paths start at."),
    ArgSpec("file_filter", "str", "*.fits", "Glob pattern selecting file names in file_root."),
    ArgSpec("file_list", "str", None, "A text file with one path per line."),
    ArgSpec("files", "str_vec", None, "Paths of the FITS files."),
    ArgSpec("hdu_indices", "int_vec", (2,), "The HDUs to read (1 = primary), one output each."),
    ArgSpec("dtypes", "any", None, "The type of each output (a list of feedline.types); an "
            "HDU holding another type is an error. Default: each HDU's own type."),
)  # fmt: skip


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f"hdu_{i}" for i in args.get("hdu_indices", (2,)))


FITS_SCHEMA = reader_schema("experimental.readers.fits", _DOC, FITS_ARGS, outputs=_outputs)


def list_fits_files(
    file_root: str | None, file_filter: str, file_list: str | None, files: Sequence[str] | None
) -> list[str]:
    """The paths of the one listing mode given, in canonical order.

    Raises:
        ValueError: no mode or several, or nothing found.
    """
    if file_list is not None and files is not None:
        raise ValueError("file_list and files are mutually exclusive")
    if files is not None:
        return [os.path.join(file_root, f) if file_root else f for f in files]
    if file_list is not None:
        base = file_root if file_root is not None else os.path.dirname(file_list)
        with open(file_list, encoding="utf-8") as lines:
            names = [line.strip() for line in lines if line.strip()]
        return [os.path.join(base, name) for name in names]
    if file_root is None:
        raise ValueError("give file_root, file_list or files")
    if not os.path.isdir(file_root):
        raise FileNotFoundError(f"file_root {file_root!r} is not a directory")
    found = []
    for folder in [file_root, *sorted(e.path for e in os.scandir(file_root) if e.is_dir())]:
        names = sorted(e.name for e in os.scandir(folder)
                       if e.is_file() and fnmatch.fnmatch(e.name, file_filter))  # fmt: skip
        found += [os.path.join(folder, name) for name in names]
    return found


class FitsReader(Reader):
    """The ``experimental.readers.fits`` kernel; items are file paths."""

    parallel_load = True

    def setup(self) -> None:
        """Check astropy, the HDU indices and the types, then the common arguments."""
        try:
            import astropy.io.fits  # noqa: F401
        except ImportError:
            raise ImportError(
                "experimental.readers.fits reads FITS files with astropy: "
                "pip install 'feedline[fits]'"
            ) from None
        args = self.args
        indices = args["hdu_indices"]
        if not indices or min(indices) < 1:
            raise ValueError(
                f"experimental.readers.fits: hdu_indices {list(indices)} must be 1 or more "
                "(1 is the primary HDU)"
            )
        dtypes = args["dtypes"]
        if dtypes is not None:
            dtypes = list(dtypes) if isinstance(dtypes, list | tuple) else [dtypes]
            if len(dtypes) != len(indices):
                raise ValueError(
                    f"experimental.readers.fits: {len(dtypes)} dtypes for {len(indices)} "
                    "hdu_indices; give one type per HDU"
                )
            self._dtypes = [to_numpy_dtype(d) for d in dtypes]
        else:
            self._dtypes = [None] * len(indices)
        super().setup()

    def index(self) -> Sequence[str]:
        """The listed files."""
        a = self.args
        try:
            paths = list_fits_files(a["file_root"], a["file_filter"], a["file_list"], a["files"])
        except ValueError as exc:
            raise ValueError(f"experimental.readers.fits: {exc}") from None
        if not paths:
            raise ValueError("experimental.readers.fits: no file found")
        return paths

    def load(self, path: str) -> tuple[np.ndarray, ...]:
        """The data of the chosen HDUs of one file."""
        from astropy.io import fits

        outputs = []
        try:
            with fits.open(io.BytesIO(memoryview(self.read_bytes(path)))) as hdus:
                for index, dtype in zip(self.args["hdu_indices"], self._dtypes, strict=True):
                    if index > len(hdus):
                        raise ValueError(f"has {len(hdus)} HDUs, HDU {index} does not exist")
                    data = hdus[index - 1].data
                    if data is None:
                        raise ValueError(f"HDU {index} holds no data")
                    array = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("="))
                    if dtype is not None and array.dtype != dtype:
                        raise ValueError(f"HDU {index} holds {array.dtype}, dtypes says {dtype}")
                    outputs.append(array)
        except (OSError, TypeError) as exc:
            raise ValueError(
                f"experimental.readers.fits: {path!r}: not a FITS file ({exc})"
            ) from None
        except ValueError as exc:
            raise ValueError(f"experimental.readers.fits: {path!r}: {exc}") from None
        return tuple(outputs)

    def source_info(self, path: str) -> str:
        """The file's path."""
        return path


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``experimental.readers.fits``."""
    registry.add_operator(FITS_SCHEMA, kernels={"cpu": FitsReader})
