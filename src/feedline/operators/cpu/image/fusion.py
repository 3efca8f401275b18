"""Decode fusion: a graph pass that merges ``decoders.image`` with the geometry that follows it.

At ``Pipeline.build()`` the pass rewrites, on the CPU:

* ``decoders.image → crop`` into ``decoders.image_crop`` (the codec decodes only the window when
  it can), when the crop keeps the default ``dtype``/``out_of_bounds_policy``/``fill_values``;
* ``decoders.image → random_resized_crop`` into the hidden ``decoders._image_random_resized_crop``
  and ``decoders.image → resize`` into the hidden ``decoders._image_resize``: the size comes from
  the header, and a JPEG is decoded (only the rows and columns the filter reads) and resampled
  in one compiled call; without the region decoder it is decoded straight into an RGBX buffer
  that the compiled resampler (or Pillow) reads in place;
* ``decoders.image_random_crop → resize`` into the hidden ``decoders._image_random_crop_resize``
  and ``decoders.image_crop → resize`` into ``decoders._image_crop_resize`` (DALI's fused
  spellings): the window is placed from the header's size exactly as the decoder places it (with
  the decoder's seed), and the compiled call resamples it with its edges clamped to the window,
  as if only the window had been decoded;
* a fixed crop of a ``crop_mirror_normalize`` that follows such a fused resize is moved into the
  resize, which then computes only the pixels inside the window (``resize(resize_shorter=256)
  → crop_mirror_normalize(crop=224)`` resamples 224 x 224 pixels, not 256 x 341);
* a ``crop_mirror_normalize`` left without a crop after any of these fused operators is folded
  into it: a JPEG is then decoded, resampled and normalised in one compiled call (the slowest
  step of the standard ImageNet pipelines runs without the GIL, and without a trip through the
  executor per sample).

Each rewritten operator must be the only reader of the output it takes over. The fused node keeps
the follower's name, and the seed and position of the operator that draws the window (the
follower, or the window decoder), so it draws the same random windows and produces the same
pixels and values; only a moved crop can differ from the unfused graph, by 1 level where a
value falls on .5 (by Pillow's rounding without the compiled resampler; both are within 1 of the
exact resize).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from feedline.core.graph import DataNode, OpNode
from feedline.core.kernel import SampleContext
from feedline.core.types import DataType, ImageType
from feedline.operators.cpu.image.bindings import Normalization
from feedline.operators.cpu.image.cmn import (
    crop_mirror_normalize,
    fill_value,
    gain_offset,
    has_crop,
    normalized_layout,
    normalized_type,
)
from feedline.operators.cpu.image.crop import crop_window
from feedline.operators.cpu.image.decoders import DecoderKernel, encoded_bytes, roi_from_window
from feedline.operators.cpu.image.resample import (
    FILTER_IDS,
    pil_filter,
    resample_native,
    resample_pil,
)
from feedline.operators.cpu.image.resize import (
    check_rrc_args,
    filters_from_args,
    resample_layout,
    rrc_size,
    rrc_window,
)
from feedline.operators.cpu.image.schemas import NORMALIZE_ARGS
from feedline.operators.cpu.image.windows import Source, resize_plan

__all__ = [
    "FUSED_CROP_RESIZE",
    "FUSED_RANDOM_CROP_RESIZE",
    "FUSED_RESIZE",
    "FUSED_RRC",
    "FusedDecode",
    "FusedDecodeCropResizeKernel",
    "FusedDecodeRandomCropResizeKernel",
    "FusedDecodeRandomResizedCropKernel",
    "FusedDecodeResizeKernel",
    "fuse_decoders",
]

FUSED_RRC = "decoders._image_random_resized_crop"
FUSED_RESIZE = "decoders._image_resize"
FUSED_RANDOM_CROP_RESIZE = "decoders._image_random_crop_resize"
FUSED_CROP_RESIZE = "decoders._image_crop_resize"
_DECODE_ARGS = ("output_type", "dtype", "max_pixels")
_RANDOM_WINDOW_ARGS = ("random_area", "random_aspect_ratio", "num_attempts")
_CROP_ARGS = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "rounding")
#: Window decoders fused with a following resize: the fused operator, the window's arguments.
_WINDOW_DECODERS = {
    "decoders.image_random_crop": (FUSED_RANDOM_CROP_RESIZE, _RANDOM_WINDOW_ARGS),
    "decoders.image_crop": (FUSED_CROP_RESIZE, _CROP_ARGS),
}
_NO_CROP = {"crop": None, "crop_h": None, "crop_w": None, "crop_pos_x": 0.5, "crop_pos_y": 0.5}


def _sole_reader(
    ops: Sequence[OpNode], node: DataNode, outputs: Sequence[DataNode]
) -> OpNode | None:
    """The only operator reading ``node`` (as its only input), or None."""
    readers = [op for op in ops if any(n is node for n in op.upstream())]
    if len(readers) != 1 or any(out is node for out in outputs):
        return None
    (reader,) = readers
    if (
        reader.device != "cpu"
        or len(reader.inputs) != 1
        or reader.inputs[0] is not node
        or any(value is node for value in reader.arg_inputs.values())
    ):
        return None
    return reader


def _crop_fusable(op: OpNode) -> bool:
    args = op.args
    return (
        args.get("dtype") in (None, DataType.UINT8)
        and args.get("out_of_bounds_policy") == "error"
        and args.get("fill_values") in (None, (0.0,))
        and args.get("crop_d") is None
        and "crop_pos_z" not in op.arg_inputs
    )


def _merge(decoder: OpNode, follower: OpNode, schema: Any, args: Mapping[str, Any]) -> None:
    """Turn ``follower`` into the fused operator reading the decoder's input."""
    merged = {**args, **{k: decoder.args[k] for k in _DECODE_ARGS}}
    follower.schema = schema
    follower.args = {spec.name: merged.get(spec.name, spec.default) for spec in schema.args}
    follower.inputs = list(decoder.inputs)
    follower.arg_inputs = {**decoder.arg_inputs, **follower.arg_inputs}
    # A fused node fails mostly on the file it decodes: report and treat that as the decoder's.
    follower.error_name = decoder.error_name or decoder.name
    if decoder.on_error is not None:
        follower.on_error = decoder.on_error


def _push_crop(ops: Sequence[OpNode], resize: OpNode, outputs: Sequence[DataNode]) -> None:
    """Move a fixed crop of the ``crop_mirror_normalize`` after ``resize`` into the resize."""
    cmn = _sole_reader(ops, resize.outputs[0], outputs)
    if cmn is None or cmn.schema.name != "crop_mirror_normalize":
        return
    args = cmn.args
    if any(k in cmn.arg_inputs for k in (*_CROP_ARGS, "crop_d", "crop_pos_z")):
        return
    if args["out_of_bounds_policy"] != "error" or args.get("crop_d") is not None:
        return
    if not has_crop(args):
        return
    resize.args = {**resize.args, **{k: args[k] for k in _CROP_ARGS}}
    cmn.args = {**args, **_NO_CROP}


def _absorb_normalize(
    ops: Sequence[OpNode], fused: OpNode, outputs: Sequence[DataNode]
) -> OpNode | None:
    """Fold the ``crop_mirror_normalize`` without a crop that reads ``fused`` into it; returns the
    folded operator (None if there is none)."""
    cmn = _sole_reader(ops, fused.outputs[0], outputs)
    if cmn is None or cmn.schema.name != "crop_mirror_normalize":
        return None
    if has_crop(cmn.args):
        return None
    if any(k not in NORMALIZE_ARGS for k in cmn.arg_inputs):
        return None
    absorbed = {k: cmn.args[k] for k in NORMALIZE_ARGS if k in cmn.args}
    fused.args = {**fused.args, **absorbed, "normalize": True, "normalize_dtype": cmn.args["dtype"]}
    fused.arg_inputs = {**fused.arg_inputs, **cmn.arg_inputs}
    fused.outputs = cmn.outputs
    for node in fused.outputs:
        node.source = fused
    return cmn


def _fold_normalize(result: list[OpNode], fused: OpNode, outputs: Sequence[DataNode]) -> None:
    """Fold a following crop-less ``crop_mirror_normalize`` into ``fused`` and run the fused
    operator where the folded one ran: after the nodes it reads (e.g. a coin_flip for mirror),
    before those that read it."""
    folded = _absorb_normalize(result, fused, outputs)
    if folded is not None:
        result.remove(fused)
        result[result.index(folded)] = fused


def fuse_decoders(ops: Sequence[OpNode], outputs: Sequence[DataNode]) -> list[OpNode]:
    """The graph pass: returns ``ops`` with fusable decoder/geometry pairs merged."""
    from feedline.core.plugins import get_registry

    registry = get_registry()
    result = list(ops)
    for decoder in list(result):
        fusable = ("decoders.image", *_WINDOW_DECODERS)
        if decoder.schema.name not in fusable or decoder.device != "cpu":
            continue
        if decoder.args.get("dtype") != DataType.UINT8 and decoder.schema.name != "decoders.image":
            continue
        follower = _sole_reader(result, decoder.outputs[0], outputs)
        if follower is None:
            continue
        name = follower.schema.name
        if decoder.schema.name in _WINDOW_DECODERS:
            if name != "resize" or follower.args.get("dtype") not in (None, DataType.UINT8):
                continue
            fused, window_args = _WINDOW_DECODERS[decoder.schema.name]
            window = {k: decoder.args[k] for k in window_args if k in decoder.args}
            _merge(decoder, follower, registry.operators[fused].schema, {**follower.args, **window})
            # The window is the decoder's draw: the fused node takes its seed and position.
            follower.seed, follower.position = decoder.seed, decoder.position
            _fold_normalize(result, follower, outputs)
        elif name == "crop" and _crop_fusable(follower):
            schema = registry.operators["decoders.image_crop"].schema
            _merge(decoder, follower, schema, {k: follower.args.get(k) for k in _CROP_ARGS})
        elif (
            name in ("random_resized_crop", "resize")
            and decoder.args.get("dtype") == DataType.UINT8
            and follower.args.get("dtype") in (None, DataType.UINT8)
        ):
            fused = FUSED_RRC if name == "random_resized_crop" else FUSED_RESIZE
            _merge(decoder, follower, registry.operators[fused].schema, follower.args)
            if name == "resize":
                _push_crop(result, follower, outputs)
            _fold_normalize(result, follower, outputs)
        else:
            continue
        result.remove(decoder)
    return result


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
    """Decode (straight to RGBX for RGB JPEGs, only the rows and columns the filter reads when
    the codec can) and resample in one step, then normalise when a ``crop_mirror_normalize`` was
    folded in."""

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
    def probe(codec: Any, data: Any) -> tuple[Any, tuple[int, int]]:
        """The codec's probe of ``data`` (None if it has none) and the decoded ``(H, W)``."""
        if hasattr(codec, "probe"):
            probe = codec.probe(data)
            return probe, (probe.shape[0], probe.shape[1])
        shape = codec.shape(data)
        return None, (shape[0], shape[1])

    def read_sample(self, inputs: tuple[np.ndarray, ...]) -> tuple[Any, Any, Any, tuple[int, int]]:
        """The encoded file of a sample, its codec, the codec's probe and the decoded ``(H, W)``."""
        data = encoded_bytes(self.op, inputs[0])
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
            gain, offset = gain_offset(args, 3)
            normalization = Normalization(
                gain, offset, bool(args["mirror"]), planar, fill_value(args)
            )
            filters, _ = self._filters(out_size, source, args)
            ids = (FILTER_IDS[filters[0]], FILTER_IDS[filters[1]])
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
    def _filters(
        out_size: tuple[int, int], source: Source, args: Mapping[str, Any]
    ) -> tuple[list[str], list[float]]:
        """The filter of each axis (``min_filter`` when it shrinks, else ``mag_filter``) and the
        scales (source extent per output pixel)."""
        min_filter, mag_filter = filters_from_args(args)
        scales = [(e - s) / n for (s, e), n in zip(source, out_size, strict=True)]
        return [min_filter if abs(s) > 1 else mag_filter for s in scales], scales

    def _resampled(self, job: FusedDecode, args: Mapping[str, Any], allocate: Any) -> np.ndarray:
        """The resampled 8-bit image, in ``allocate(shape, dtype)`` where possible."""
        data, codec, probe, out_size, source, window = job
        roi = (
            None
            if window is None
            else (window[0], window[1], window[0] + window[2], window[1] + window[3])
        )
        uint8 = np.dtype(np.uint8)
        if ImageType(args["output_type"]) == ImageType.RGB and hasattr(codec, "decode_rgbx"):
            filters, scales = self._filters(out_size, source, args)
            antialias = bool(args["antialias"])
            rgb = allocate((*out_size, 3), uint8)
            ids = (FILTER_IDS[filters[0]], FILTER_IDS[filters[1]])
            if probe is not None and codec.decode_resampled(
                data, probe, rgb, source, ids, antialias, None, window
            ):
                return rgb
            image = codec.decode_rgbx(data)
            if image is not None:
                if roi is not None:
                    image = image[roi[0] : roi[2], roi[1] : roi[3]]
                if resample_native(image, out_size, source, filters, antialias, rgb) is not None:
                    return rgb
                name = pil_filter(image, filters, scales, antialias, uint8)
                if name is not None:
                    return resample_pil(image, out_size, source, name, drop_fourth=True)
                image = np.ascontiguousarray(image[:, :, :3])
                return resample_layout(image, "HWC", out_size, source, args, uint8)
        image = self.decode(data, args, roi)
        return resample_layout(image, "HWC", out_size, source, args, uint8)


class FusedDecodeRandomResizedCropKernel(_FusedDecodeKernel):
    """``decoders.image`` + ``random_resized_crop`` (same window, same pixels)."""

    op = "random_resized_crop"

    def setup(self) -> None:
        """Validate arguments like both fused operators."""
        super().setup()
        check_rrc_args(self.args)
        self._size = rrc_size(self.args)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Read the size, draw the window, decode and resample it."""
        data, codec, probe, (height, width) = self.read_sample(inputs)
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        source = ((float(y), float(y + h)), (float(x), float(x + w)))
        job = FusedDecode(data, codec, probe, self._size, source)
        return self.decode_resampled(job, args, sample)


class FusedDecodeResizeKernel(_FusedDecodeKernel):
    """``decoders.image`` + ``resize`` (+ the crop of a following ``crop_mirror_normalize``)."""

    op = "resize"

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Plan the resize from the header, decode and resample (only the crop window when one
        was moved here)."""
        data, codec, probe, shape = self.read_sample(inputs)
        out_size, source = resize_plan(self.op, shape, args)
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

    def window(
        self, args: Mapping[str, Any], height: int, width: int, sample: SampleContext
    ) -> tuple[int, int, int, int]:
        """The decoded window ``(y, x, h, w)`` of an ``height`` x ``width`` image."""
        raise NotImplementedError

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Place the window, plan the resize of it, decode and resample it."""
        data, codec, probe, (height, width) = self.read_sample(inputs)
        window = self.window(args, height, width, sample)
        out_size, source = resize_plan(self.op, window[2:], args)
        size = (int(out_size[0]), int(out_size[1]))
        job = FusedDecode(data, codec, probe, size, source, window)
        return self.decode_resampled(job, args, sample)


class FusedDecodeRandomCropResizeKernel(_FusedWindowResizeKernel):
    """``decoders.image_random_crop`` + ``resize`` (the decoder's window draw and seed)."""

    def setup(self) -> None:
        """Validate the window arguments too."""
        super().setup()
        check_rrc_args(self.args)

    def window(
        self, args: Mapping[str, Any], height: int, width: int, sample: SampleContext
    ) -> tuple[int, int, int, int]:
        """``random_resized_crop``'s window, drawn with the sample's generator."""
        return rrc_window(args, height, width, sample.rng)


class FusedDecodeCropResizeKernel(_FusedWindowResizeKernel):
    """``decoders.image_crop`` + ``resize``."""

    def window(
        self, args: Mapping[str, Any], height: int, width: int, sample: SampleContext
    ) -> tuple[int, int, int, int]:
        """The fixed window, placed as ``decoders.image_crop`` places it."""
        crop = crop_window("decoders.image_crop", "HW", (height, width), args)
        y0, x0, y1, x1 = roi_from_window(crop, height, width)
        return y0, x0, y1 - y0, x1 - x0
