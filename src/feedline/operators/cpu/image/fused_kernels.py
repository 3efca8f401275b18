"""Kernels of the fused decoders that the decode-fusion pass (:mod:`.fusion`) creates.

Each reads the size from the file's header, places the window the unfused operators would
place (with the same random draws), and hands the codec one job: decode only the rows and
columns the filter reads and resample them in one compiled call, normalising as well when a
``crop_mirror_normalize`` was folded in. Codecs without that call decode (only the window, where
they can) and resample after.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from feedline.core.kernel import SampleContext
from feedline.core.types import ImageType
from feedline.operators.cpu.image.arg_schemas import NORMALIZE_ARGS
from feedline.operators.cpu.image.bindings import Normalization
from feedline.operators.cpu.image.cmn import (
    centre_gain,
    crop_mirror_normalize,
    fill_value,
    has_crop,
    normalized_layout,
    normalized_type,
)
from feedline.operators.cpu.image.crop import crop_window
from feedline.operators.cpu.image.decoders import (
    DecoderKernel,
    encoded_bytes,
    image_crop_window,
    roi_from_window,
    slice_region,
)
from feedline.operators.cpu.image.resample import FILTER_IDS, pick_filter
from feedline.operators.cpu.image.resize import (
    check_rrc_args,
    filters_from_args,
    resample_layout,
    rrc_size,
    rrc_window,
)
from feedline.operators.cpu.image.windows import Source, resize_plan

__all__ = [
    "FusedDecode",
    "FusedDecodeCropResizeKernel",
    "FusedDecodeRandomCropResizeKernel",
    "FusedDecodeRandomResizedCropKernel",
    "FusedDecodeResizeKernel",
    "FusedDecodeSliceResizeKernel",
]

Inputs = tuple[np.ndarray, ...]
Args = Mapping[str, Any]
Shape = tuple[int, int, int]
"""An image's decoded ``(H, W, C)``."""
Window = tuple[int, int, int, int]
"""A decoded window ``(y, x, h, w)``."""


class FusedDecode(NamedTuple):
    """One sample's work for a fused decoder.

    Attributes:
        data: the encoded file.
        codec: its codec.
        probe: the codec's probe of it (None for codecs without ``probe``).
        out_size: the resampled ``(H, W)``.
        source: the source region, ``((y0, y1), (x0, x1))`` in decoded pixels (of the window).
        window: ``(y, x, h, w)``, the decoded window that is the image being resampled (edges
            clamp to it), or None for the whole image.
    """

    data: Any
    codec: Any
    probe: Any
    out_size: tuple[int, int]
    source: Source
    window: tuple[int, int, int, int] | None = None


class _FusedDecodeKernel(DecoderKernel):
    """Decode (only the rows and columns the filter reads when the codec can) and resample in one
    step, then normalise when a ``crop_mirror_normalize`` was folded in."""

    def setup(self) -> None:
        """Check the decoder's and the folded ``crop_mirror_normalize``'s arguments."""
        super().setup()
        self._normalize = bool(self.args["normalize"])
        if self._normalize:
            self._normalized_type = normalized_type(self.args["normalize_dtype"])
            self._layout = normalized_layout(self.args["output_layout"] or "HWC", "HWC")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """HWC, or the folded ``crop_mirror_normalize``'s ``output_layout``."""
        return (self._layout,) if self._normalize else ("HWC",)

    @staticmethod
    def probe(codec: Any, data: Any) -> tuple[Any, tuple[int, int, int]]:
        """The codec's probe of ``data`` (None if it has none) and the decoded ``(H, W, C)``."""
        if hasattr(codec, "probe"):
            probe = codec.probe(data)
            return probe, probe.shape
        return None, codec.shape(data)

    def read_sample(
        self, inputs: tuple[np.ndarray, ...]
    ) -> tuple[Any, Any, Any, tuple[int, int, int]]:
        """The encoded file of a sample, its codec, the codec's probe and the decoded
        ``(H, W, C)``."""
        data = encoded_bytes(self.decoder_name, inputs[0])
        codec = self.codec(data)
        probe, shape = self.probe(codec, data)
        return data, codec, probe, shape

    def decode_resampled(
        self, job: FusedDecode, args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The output of one sample: the resampled image, normalised if a
        ``crop_mirror_normalize`` was folded in; in the sample's batch buffer where possible."""
        data, codec, probe, out_size, source, window = job
        if not self._normalize:
            return self._resampled(job, args, sample.output)
        if (
            self._normalized_type == np.float32
            and self._layout in ("CHW", "HWC")
            and probe is not None
            and ImageType(args["output_type"]) == ImageType.RGB
            and hasattr(codec, "decode_resampled")
        ):
            channels = 4 if args["pad_output"] else 3
            planar = self._layout == "CHW"
            out = sample.output(
                (channels, *out_size) if planar else (*out_size, channels), np.float32
            )
            centre, gain = centre_gain(args, 3)
            normalization = Normalization(
                gain, centre, bool(args["mirror"]), planar, fill_value(args)
            )
            ids = self._filter_ids(out_size, source, args)
            if codec.decode_resampled(
                data, probe, out, source, ids, bool(args["antialias"]), normalization, window
            ):
                return out
        image = self._resampled(job, args, np.empty)
        normalize_args = {k: args[k] for k in NORMALIZE_ARGS}
        out, _ = crop_mirror_normalize(
            image, "HWC", normalize_args, self._normalized_type, sample.output
        )
        return out

    @staticmethod
    def _filter_ids(out_size: tuple[int, int], source: Source, args: Args) -> tuple[int, int]:
        """The compiled resampler's id of each axis's filter, as :func:`resample` picks it."""
        min_filter, mag_filter = filters_from_args(args)
        scales = [(e - s) / n for (s, e), n in zip(source, out_size, strict=True)]
        y, x = (FILTER_IDS[pick_filter(scale, min_filter, mag_filter)] for scale in scales)
        return y, x

    def _resampled(self, job: FusedDecode, args: Mapping[str, Any], allocate: Any) -> np.ndarray:
        """The resampled 8-bit image, in ``allocate(shape, dtype)`` where possible: decoded and
        resampled in one call when the codec can, else decoded (only the window, where the codec
        can) and resampled by :func:`resample_layout`."""
        data, codec, probe, out_size, source, window = job
        uint8 = np.dtype(np.uint8)
        if (
            ImageType(args["output_type"]) == ImageType.RGB
            and probe is not None
            and hasattr(codec, "decode_resampled")
        ):
            rgb = allocate((*out_size, 3), uint8)
            ids = self._filter_ids(out_size, source, args)
            antialias = bool(args["antialias"])
            if codec.decode_resampled(data, probe, rgb, source, ids, antialias, None, window):
                return rgb
        roi = (
            None
            if window is None
            else (window[0], window[1], window[0] + window[2], window[1] + window[3])
        )
        image = self.decode(data, args, roi)
        out = allocate((*out_size, image.shape[2]), uint8)
        return resample_layout(image, "HWC", out_size, source, args, uint8, out)


class FusedDecodeRandomResizedCropKernel(_FusedDecodeKernel):
    """``decoders.image`` + ``random_resized_crop`` (same window, same pixels)."""

    op = "random_resized_crop"
    decoder_op = "decoders.image"

    def setup(self) -> None:
        """Validate arguments like both fused operators."""
        super().setup()
        check_rrc_args(self.args)
        self._size = rrc_size(self.args)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Read the size, draw the window, decode and resample it."""
        data, codec, probe, (height, width, _) = self.read_sample(inputs)
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        source = ((float(y), float(y + h)), (float(x), float(x + w)))
        job = FusedDecode(data, codec, probe, self._size, source)
        return self.decode_resampled(job, args, sample)


class FusedDecodeResizeKernel(_FusedDecodeKernel):
    """``decoders.image`` + ``resize`` (+ the crop of a following ``crop_mirror_normalize``)."""

    op = "resize"
    decoder_op = "decoders.image"

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Plan the resize from the header, decode and resample (only the crop window when one
        was moved here)."""
        data, codec, probe, shape = self.read_sample(inputs)
        out_size, source = resize_plan(self.op, shape[:2], args)
        if has_crop(args):
            window = crop_window("crop_mirror_normalize", "HW", out_size, args)
            sub, size = [], []
            for axis, ((start, end), extent) in enumerate(zip(source, out_size, strict=True)):
                first, count = window.get(axis, (0, extent))
                if first < 0 or first + count > extent:
                    raise ValueError(
                        f"crop_mirror_normalize: crop window [{first}, {first + count}) along "
                        f"axis {axis} is outside the resized extent {extent}; use "
                        "out_of_bounds_policy='pad' or 'trim_to_shape'"
                    )
                step = (end - start) / extent
                sub.append((start + first * step, start + (first + count) * step))
                size.append(count)
            source, out_size = (sub[0], sub[1]), (size[0], size[1])
        size = (int(out_size[0]), int(out_size[1]))
        return self.decode_resampled(FusedDecode(data, codec, probe, size, source), args, sample)


class _FusedWindowResizeKernel(_FusedDecodeKernel):
    """A window decoder (``decoders.image_random_crop``/``image_crop``) + ``resize``: the window
    placed from the header's size as the decoder places it, then resized as if it were the
    image."""

    op = "resize"

    def window(self, inputs: Inputs, args: Args, shape: Shape, sample: SampleContext) -> Window:
        """The decoded window ``(y, x, h, w)`` of an image of ``shape`` (HWC)."""
        raise NotImplementedError

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Place the window, plan the resize of it, decode and resample it."""
        data, codec, probe, shape = self.read_sample(inputs)
        window = self.window(inputs, args, shape, sample)
        out_size, source = resize_plan(self.op, window[2:], args)
        size = (int(out_size[0]), int(out_size[1]))
        job = FusedDecode(data, codec, probe, size, source, window)
        return self.decode_resampled(job, args, sample)


class FusedDecodeRandomCropResizeKernel(_FusedWindowResizeKernel):
    """``decoders.image_random_crop`` + ``resize`` (the decoder's window draw and seed)."""

    decoder_op = "decoders.image_random_crop"

    def setup(self) -> None:
        """Validate the window arguments too."""
        super().setup()
        check_rrc_args(self.args)

    def window(self, inputs: Inputs, args: Args, shape: Shape, sample: SampleContext) -> Window:
        """``random_resized_crop``'s window, drawn with the sample's generator."""
        return rrc_window(args, shape[0], shape[1], sample.rng)


class FusedDecodeCropResizeKernel(_FusedWindowResizeKernel):
    """``decoders.image_crop`` + ``resize``."""

    decoder_op = "decoders.image_crop"

    def window(self, inputs: Inputs, args: Args, shape: Shape, sample: SampleContext) -> Window:
        """The fixed window, placed as ``decoders.image_crop`` places it."""
        crop = image_crop_window("decoders.image_crop", shape[:2], args)
        y0, x0, y1, x1 = roi_from_window(crop, shape[0], shape[1])
        return y0, x0, y1 - y0, x1 - x0


class FusedDecodeSliceResizeKernel(_FusedWindowResizeKernel):
    """``decoders.image_slice`` + ``resize`` (fused only where no window can pad or slice the
    channels: ``out_of_bounds_policy`` ``error`` or ``trim_to_shape``)."""

    decoder_op = "decoders.image_slice"

    def window(self, inputs: Inputs, args: Args, shape: Shape, sample: SampleContext) -> Window:
        """The window ``decoders.image_slice`` keeps.

        Raises:
            ValueError: as ``decoders.image_slice`` and ``resize`` raise, for a window outside
                the image or an empty one.
        """
        region = slice_region(shape, inputs[1:], args)
        if region is None:
            raise ValueError(
                f"decoders.image_slice: the slice window of the {shape[0]}x{shape[1]} image is "
                "empty, so resize has nothing to resize"
            )
        y0, x0, y1, x1 = region
        return y0, x0, y1 - y0, x1 - x0
