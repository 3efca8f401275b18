"""``fn.readers.nemo_asr``: speech samples listed by NeMo manifests, decoded and resampled.

This module is the ``nemo-asr-reader`` plugin (entry point group ``feedline.plugins``). Audio is
decoded by the ``decoders.audio`` kernel of the installed audio plugin, found through the
registry (readers and operators only meet through the core). Sharding, shuffling, padding,
epochs and checkpoints come from :class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.plugins import get_plugin_system
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.core.types import DataType, to_numpy_dtype
from feedline.readers.base import Reader, reader_schema
from feedline.readers.legacy import legacy_name

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["NEMO_ASR_SCHEMA", "ManifestEntry", "NemoAsrReader", "read_manifests"]

_DOC = """\
Read speech samples listed by NeMo ASR manifests and decode their audio.

A manifest has one JSON object per line with ``audio_filepath`` (used as written: a relative
path is relative to the working directory, as in DALI), ``duration`` and ``text`` (seconds;
both optional) and optionally ``offset`` (seconds). The audio is ``int(offset * rate)``
samples into the file, ``int(duration * rate)`` samples long (to the end without a
duration). Entries shorter than ``min_duration`` or longer than ``max_duration`` (by their
manifest ``duration``) are left out.

Outputs, in order: the audio (1-D with ``downmix``, else ``(time, channels)``; ``dtype``; at
``sample_rate`` when given, resampled as ``audio_resample`` does), then, when enabled, the
file's sample rate (float32 scalar — the rate of the file, also when resampled, as DALI
reports it), the transcript (UTF-8 bytes, uint8) and the entry's index (int64, shape
``(1,)``: its position among the entries kept from its manifest). A file that cannot be
decoded raises an error naming it."""

NEMO_ASR_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("manifest_filepaths", "str_vec", REQUIRED, "Paths of the NeMo manifest files."),
    ArgSpec("downmix", "bool", True, "Average all channels into one (1-D audio)."),
    ArgSpec("dtype", "dtype", DataType.FLOAT, "Audio type: INT16, INT32 or FLOAT."),
    ArgSpec("min_duration", "float", 0.0, "If positive, leave out entries shorter than this "
            "(seconds)."),
    ArgSpec("max_duration", "float", 0.0, "If positive, leave out entries longer than this "
            "(seconds)."),
    ArgSpec("quality", "float", 50.0, "Resampling quality in [0, 100] (3, 16 and 64 sinc "
            "lobes at 0, 50 and 100)."),
    ArgSpec("read_idxs", "bool", False, "Output each entry's index in its manifest."),
    ArgSpec("read_sample_rate", "bool", True, "Output each file's sample rate."),
    ArgSpec("read_text", "bool", True, "Output each transcript (UTF-8 bytes)."),
    ArgSpec("sample_rate", "float", -1.0, "Resample the audio to this rate in Hz (-1: keep "
            "each file's)."),
    ArgSpec("normalize_text", "bool", None, "Removed from DALI (0.28); refused."),
)  # fmt: skip


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    flags = (("read_sample_rate", "sample_rate"), ("read_text", "text"), ("read_idxs", "idx"))
    return ("audio", *(name for flag, name in flags if args.get(flag, flag != "read_idxs")))


NEMO_ASR_SCHEMA = reader_schema("readers.nemo_asr", _DOC, NEMO_ASR_ARGS, outputs=_outputs)


@dataclass(frozen=True)
class ManifestEntry:
    """One kept manifest line."""

    path: str
    text: bytes
    offset: float
    duration: float
    index: int


def _number(record: Mapping[str, Any], key: str, where: str) -> float:
    value = record.get(key, 0.0)
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{where}: {key!r} must be a non-negative number, got {value!r}")
    return float(value)


def read_manifests(
    paths: Sequence[str], min_duration: float = 0.0, max_duration: float = 0.0
) -> list[ManifestEntry]:
    """The entries of the manifests, in order, filtered by duration.

    Raises:
        ValueError: a line that is not a JSON object with ``audio_filepath`` (naming the
            manifest and the line).
        FileNotFoundError: a manifest does not exist.
    """
    entries = []
    for manifest in paths:
        kept = 0
        with open(manifest, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                where = f"manifest {manifest!r}, line {number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{where}: not valid JSON ({exc})") from None
                if not isinstance(record, dict) or not isinstance(
                    record.get("audio_filepath"), str
                ):
                    raise ValueError(f"{where}: expected an object with 'audio_filepath'")
                duration = _number(record, "duration", where)
                if (min_duration > 0 and duration < min_duration) or (
                    max_duration > 0 and duration > max_duration
                ):
                    continue
                text = record.get("text", "")
                entries.append(
                    ManifestEntry(
                        record["audio_filepath"],
                        str(text).encode("utf-8"),
                        _number(record, "offset", where),
                        duration,
                        kept,
                    )
                )
                kept += 1
    return entries


def _audio_decoder() -> Callable[..., tuple[np.ndarray, float]]:
    """The installed audio plugin's decoding function (``decoders.audio``'s kernel)."""
    entry = get_plugin_system().ensure_loaded().operators.get("decoders.audio")
    if entry is None or "cpu" not in entry.kernels:
        raise RuntimeError(
            "readers.nemo_asr decodes with decoders.audio: install and enable the audio "
            "plugin (pip install 'feedline[audio]')"
        )
    return entry.kernel_class("cpu")


class NemoAsrReader(Reader):
    """The ``readers.nemo_asr`` kernel; its items are :class:`ManifestEntry` objects."""

    parallel_load = True  # libsndfile and the resampler's NumPy work release the GIL
    decodes_files = True

    def setup(self) -> None:
        """Check the arguments and find the audio decoder, then the common arguments."""
        args = self.args
        if args["normalize_text"] is not None:
            raise ValueError(
                "readers.nemo_asr: normalize_text was removed from DALI (0.28) and is not "
                "supported; normalize transcripts in the manifest"
            )
        if args["dtype"] not in (DataType.INT16, DataType.INT32, DataType.FLOAT):
            raise ValueError(
                f"readers.nemo_asr: dtype {args['dtype'].name} is not supported; use INT16, "
                "INT32 or FLOAT"
            )
        if not args["manifest_filepaths"]:
            raise ValueError("readers.nemo_asr: manifest_filepaths is empty")
        decoder = _audio_decoder()
        decoder.import_soundfile()
        self._decode = decoder.decode
        self._lobes = decoder.lobes_for_quality(float(args["quality"]))
        self._dtype = to_numpy_dtype(args["dtype"])
        super().setup()

    def index(self) -> Sequence[ManifestEntry]:
        """The kept entries of every manifest."""
        args = self.args
        entries = read_manifests(
            args["manifest_filepaths"], args["min_duration"], args["max_duration"]
        )
        if not entries:
            raise ValueError(
                "readers.nemo_asr: the manifests list no sample (after min_duration/max_duration)"
            )
        return entries

    def load(self, item: ManifestEntry) -> tuple[np.ndarray, ...]:
        """Decode one entry's audio; add the outputs that are enabled."""
        args = self.args
        try:
            audio, rate = self._decode(
                self.read_bytes(item.path), self._dtype, args["downmix"], args["sample_rate"],
                self._lobes, item.offset, item.duration,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"readers.nemo_asr: {item.path!r}: {exc}") from None
        outputs = [np.ascontiguousarray(audio)]
        if args["read_sample_rate"]:
            outputs.append(np.array(rate, np.float32))
        if args["read_text"]:
            outputs.append(np.frombuffer(item.text, np.uint8))
        if args["read_idxs"]:
            outputs.append(np.array([item.index], np.int64))
        return tuple(outputs)

    def source_info(self, item: ManifestEntry) -> str:
        """The audio file's path as the manifest writes it."""
        return item.path


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.nemo_asr``."""
    registry.add_operator(NEMO_ASR_SCHEMA, kernels={"cpu": NemoAsrReader})
    registry.add_operator(
        legacy_name(NEMO_ASR_SCHEMA, "nemo_asr_reader"), kernels={"cpu": NemoAsrReader}
    )
