"""``fn.readers.sequence``: sequences of frames stored as image files, one folder per video.

This module is the ``sequence-reader`` plugin (entry point group ``feedline.plugins``). Each
sub-folder of ``file_root`` holds the frames of one video as image files (the image extensions
of ``readers.file``, any case; other files are ignored), in name order. Frames are decoded with
Pillow.
Sharding, shuffling, padding, epochs and checkpoints come from
:class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import fnmatch
import io
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.core.types import ImageType
from feedline.readers.base import Reader, reader_schema
from feedline.readers.file_index import DEFAULT_FILE_FILTERS
from feedline.readers.legacy import legacy_name
from feedline.readers.video_index import sequence_starts

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["SEQUENCE_SCHEMA", "SequenceReader", "decode_frame", "list_frame_folders"]

_DOC = """\
Read sequences of frames from folders of image files (``file_root/<video>/<frame>``).

The frames of each sub-folder, sorted by name, are cut into sequences of ``sequence_length``
frames ``stride`` apart, a new sequence starting every ``step`` frames; folders with too few
frames give none. A sample is one sequence of decoded frames, ``F×H×W×C`` uint8 (layout
``FHWC``; C is 3, or 1 for GRAY)."""

SEQUENCE_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("file_root", "str", REQUIRED, "The folder whose sub-folders hold the frames."),
    ArgSpec("sequence_length", "int", REQUIRED, "Frames per sequence."),
    ArgSpec("step", "int", 1, "Frames between the first frames of consecutive sequences."),
    ArgSpec("stride", "int", 1, "Frames between consecutive frames of a sequence."),
    ArgSpec("image_type", "image_type", ImageType.RGB, "Colour space of the frames: RGB, BGR, "
            "GRAY or YCbCr."),
)  # fmt: skip

SEQUENCE_SCHEMA = reader_schema("readers.sequence", _DOC, SEQUENCE_ARGS, outputs=("frames",))

_SOUNDS = ("*.flac", "*.ogg", "*.wav")  # readers.file's default filters without the audio

_MODES = {ImageType.RGB: "RGB", ImageType.BGR: "RGB", ImageType.GRAY: "L",
          ImageType.YCbCr: "YCbCr"}  # fmt: skip


def list_frame_folders(file_root: str) -> list[list[str]]:
    """The image files of each sub-folder of ``file_root`` (folders and files sorted).

    Raises:
        FileNotFoundError: ``file_root`` is not a directory.
    """
    if not os.path.isdir(file_root):
        raise FileNotFoundError(f"readers.sequence: file_root {file_root!r} is not a directory")
    folders = sorted(e.path for e in os.scandir(file_root) if e.is_dir())
    patterns = [p for p in DEFAULT_FILE_FILTERS if p not in _SOUNDS]
    listed = []
    for folder in folders:
        names = sorted(
            e.name for e in os.scandir(folder)
            if e.is_file() and any(fnmatch.fnmatch(e.name.lower(), p) for p in patterns)
        )  # fmt: skip
        listed.append([os.path.join(folder, name) for name in names])
    return listed


def decode_frame(data: np.ndarray, image_type: ImageType, source: str) -> np.ndarray:
    """One image file decoded to ``H×W×C`` uint8.

    Raises:
        ValueError: the file is not a decodable image (naming it).
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(memoryview(data))) as image:
            pixels = np.asarray(image.convert(_MODES[image_type]))
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ValueError(f"cannot decode the frame {source!r}: {exc}") from None
    if pixels.ndim == 2:
        return pixels[..., None]
    return pixels[..., ::-1] if image_type == ImageType.BGR else pixels


class SequenceReader(Reader):
    """The ``readers.sequence`` kernel; items are ``(folder, first frame)``."""

    parallel_load = True  # decoding releases the GIL

    def setup(self) -> None:
        """Check the sequence arguments, then the common ones."""
        args = self.args
        if args["sequence_length"] < 1 or args["step"] < 1 or args["stride"] < 1:
            raise ValueError(
                "readers.sequence: sequence_length, step and stride must be positive (got "
                f"{args['sequence_length']}, {args['step']}, {args['stride']})"
            )
        if args["image_type"] not in _MODES:
            raise ValueError(f"readers.sequence: image_type {args['image_type'].name} is not "
                             "supported")  # fmt: skip
        super().setup()

    def output_layouts(self) -> tuple[str, ...]:
        """``FHWC``."""
        return ("FHWC",)

    def index(self) -> Sequence[tuple[int, int]]:
        """Every sequence of every folder."""
        args = self.args
        self._folders = list_frame_folders(args["file_root"])
        items = []
        for number, frames in enumerate(self._folders):
            starts = sequence_starts(0, len(frames), args["sequence_length"], args["stride"],
                                     args["step"], False)  # fmt: skip
            items += [(number, start) for start in starts]
        if not items:
            raise ValueError(
                f"readers.sequence: no folder of {args['file_root']!r} holds "
                f"{args['sequence_length']} frames"
            )
        return items

    def load(self, item: tuple[int, int]) -> tuple[np.ndarray]:
        """Decode one sequence's frames."""
        number, start = item
        args = self.args
        paths = [self._folders[number][start + k * args["stride"]]
                 for k in range(args["sequence_length"])]  # fmt: skip
        frames = [decode_frame(self.read_bytes(p), args["image_type"], p) for p in paths]
        shapes = {f.shape for f in frames}
        if len(shapes) > 1:
            raise ValueError(f"readers.sequence: the frames of {paths[0]!r}… differ in size")
        return (np.stack(frames),)

    def source_info(self, item: tuple[int, int]) -> str:
        """The path of the sequence's first frame."""
        return self._folders[item[0]][item[1]]


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.sequence``."""
    registry.add_operator(SEQUENCE_SCHEMA, kernels={"cpu": SequenceReader})
    registry.add_operator(
        legacy_name(SEQUENCE_SCHEMA, "sequence_reader"), kernels={"cpu": SequenceReader}
    )
