"""Image decoder kernels: ``decoders.image``, ``image_crop``, ``image_random_crop``,
``image_slice`` and ``peek_image_shape``.

The codec of each sample is chosen by its first bytes among the codecs registered through
``feedline_register_codecs`` (highest priority wins). Decoded images are ``HWC`` with the EXIF
orientation applied. ``dtype`` rescales to the type's range as DALI does: the value times the
ratio of the two types' maxima, both taken as float32, multiplied in float32 and, for integer
outputs, rounded half away from zero and saturated (``UINT16 = v * 257`` for 8-bit files).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.registry import load_object
from feedline.core.types import DataType, ImageType, to_numpy_dtype
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.image.codecs import MAX_DECODED_BYTES, MAX_IMAGE_PIXELS
from feedline.operators.cpu.image.crop import crop_window
from feedline.operators.cpu.image.limits import check_decoded_bytes, check_image_size
from feedline.operators.cpu.image.resize import check_rrc_args, rrc_window
from feedline.operators.cpu.tensor.slice import SliceKernel, slice_axes, slice_bounds

__all__ = [
    "CodecKernel",
    "DecodeCropKernel",
    "DecodeKernel",
    "DecodeRandomCropKernel",
    "DecodeSliceKernel",
    "DecoderKernel",
    "PeekImageShapeKernel",
    "check_depth_args",
    "check_window_inside",
    "convert_depth",
    "encoded_bytes",
    "image_crop_window",
    "roi_from_window",
    "slice_region",
]

#: The output types the decoders produce (DALI's list), by their numpy types.
_DEPTHS = {
    DataType.UINT8: np.uint8,
    DataType.INT8: np.int8,
    DataType.UINT16: np.uint16,
    DataType.INT16: np.int16,
    DataType.UINT32: np.uint32,
    DataType.INT32: np.int32,
    DataType.FLOAT: np.float32,
}


def encoded_bytes(op: str, data: np.ndarray) -> np.ndarray:
    """Check that ``data`` is one encoded file (1-D, uint8, non-empty).

    Raises:
        TypeError: wrong type or dimensionality.
        ValueError: empty data.
    """
    if data.dtype != np.uint8:
        raise TypeError(f"{op}: encoded input must be uint8 bytes, got {data.dtype}")
    if data.ndim != 1:
        raise TypeError(
            f"{op}: encoded input must be 1-D (the file's bytes), got shape {data.shape}; "
            "was it decoded already?"
        )
    if data.size == 0:
        raise ValueError(f"{op}: empty input (0 bytes of encoded data)")
    return np.ascontiguousarray(data)


def convert_depth(image: np.ndarray, dtype: DataType) -> np.ndarray:
    """Convert a decoded 8- or 16-bit image to ``dtype``, rescaled to the type's range.

    As DALI's decoders: ``v * (float32(out_max) / float32(in_max))`` computed in float32 (the
    maximum of FLOAT is 1), then for integer types rounded half away from zero and saturated.
    """
    target = np.dtype(_DEPTHS[dtype])
    if image.dtype == target:
        return image
    if target == np.uint16 and image.dtype == np.uint8:
        return image.astype(np.uint16) * np.uint16(257)
    in_max = np.float32(np.iinfo(image.dtype).max)
    out_max = np.float32(1.0 if target.kind == "f" else np.iinfo(target).max)
    scaled = image.astype(np.float32) * (out_max / in_max)
    if target.kind == "f":
        return scaled
    rounded = np.floor(scaled.astype(np.float64) + 0.5)
    return np.clip(rounded, 0, float(np.iinfo(target).max)).astype(target)


class CodecKernel(SampleKernel):
    """Finds the codec of each encoded sample by its signature; each operator holds its own
    codec objects, limited to its ``max_pixels``."""

    op = "decoders.image"
    #: The decoder the user wrote, named in errors about the file (a fused decoder's ``op`` is
    #: the operator fused after it); None: ``op``.
    decoder_op: str | None = None

    @property
    def decoder_name(self) -> str:
        """The user's decoder operator, as errors about the encoded file name it."""
        return self.decoder_op or self.op

    def setup(self) -> None:
        """Check ``max_pixels`` and ``max_decoded_bytes``; fetch the codec registry.

        Raises:
            ValueError: ``max_pixels`` is not a positive number.
        """
        from feedline.core.plugins import get_registry

        self._max_pixels = self._limit("max_pixels", MAX_IMAGE_PIXELS, "pixels")
        pipeline_limit = getattr(self.ctx.pipeline, "max_decoded_bytes", None)
        self._max_bytes = self._limit(
            "max_decoded_bytes", pipeline_limit or MAX_DECODED_BYTES, "bytes"
        )
        self._registry = get_registry()
        self._codecs: dict[str, Any] = {}

    def _limit(self, name: str, default: int, unit: str) -> int:
        """The positive integer argument ``name``.

        Raises:
            ValueError: it is not a positive number.
        """
        limit = self.args.get(name)
        limit = default if limit is None else limit
        if isinstance(limit, bool) or int(limit) != limit or limit <= 0:
            raise ValueError(
                f"{self.op}: {name} must be a positive number of {unit}, got {limit!r}"
            )
        return int(limit)

    def codec(self, data: np.ndarray) -> Any:
        """The codec object for the encoded ``data``. A codec with a ``max_pixels`` attribute
        (:class:`~feedline.operators.cpu.image.codecs.ImageCodec`) checks the operator's limit
        itself; for any other, the size its header gives is checked here.

        Raises:
            ValueError: no registered codec recognises the data, or the image is larger than
                ``max_pixels``.
        """
        entry = self._registry.codec_for(data[:64].tobytes())
        if entry is None:
            names = ", ".join(sorted(self._registry.codecs)) or "none"
            head = data[:8].tobytes().hex(" ")
            raise ValueError(
                f"{self.decoder_name}: unrecognised image format (first bytes {head}); registered "
                f"codecs: {names}"
            )
        codec = self._codecs.get(entry.name)
        if codec is None:
            codec = self._limited(load_object(entry.decoder))
            self._codecs[entry.name] = codec
        if not hasattr(codec, "max_pixels"):
            height, width, channels = codec.shape(data)
            check_image_size(int(height), int(width), self._max_pixels)
            check_decoded_bytes(int(height), int(width), int(channels), 1, self._max_bytes)
        return codec

    def _codec_settings(self) -> dict[str, Any]:
        """The codec attributes this operator sets (on codecs that have them): its limits, and
        ``adjust_orientation`` and ``use_fast_idct`` (as ``fast_idct``) where it takes them."""
        settings: dict[str, Any] = {
            "max_pixels": self._max_pixels,
            "max_decoded_bytes": self._max_bytes,
        }
        if "adjust_orientation" in self.args:
            settings["adjust_orientation"] = bool(self.args["adjust_orientation"])
        if "use_fast_idct" in self.args:
            settings["fast_idct"] = bool(self.args["use_fast_idct"])
        return settings

    def _limited(self, codec: Any) -> Any:
        """``codec`` (instantiated if it is a class, copied if it is a shared object with other
        settings) with this operator's :meth:`_codec_settings`."""
        wanted = self._codec_settings()
        if not wanted.get("adjust_orientation", True) and not hasattr(codec, "adjust_orientation"):
            raise ValueError(
                f"{self.decoder_name}: adjust_orientation=False is not supported by the codec "
                f"{getattr(codec, 'name', type(codec).__name__)!r} (it always applies the EXIF "
                "orientation)"
            )
        settings = {k: v for k, v in wanted.items() if hasattr(codec, k)}
        if isinstance(codec, type):
            codec = codec()
        elif any(getattr(codec, k) != v for k, v in settings.items()):
            codec = copy.copy(codec)
        for name, value in settings.items():
            setattr(codec, name, value)
        return codec

    def image_shape(self, data: np.ndarray) -> tuple[int, int, int]:
        """``(H, W, C)`` of the encoded sample from its header."""
        data = encoded_bytes(self.decoder_name, data)
        return tuple(int(v) for v in self.codec(data).shape(data))  # type: ignore[return-value]


class DecoderKernel(CodecKernel):
    """Shared set-up of the decoders: ``dtype`` check, HWC output, decoding in that type."""

    def setup(self) -> None:
        """Check ``dtype`` and fetch the codec registry."""
        super().setup()
        dtype = self.args.get("dtype", DataType.UINT8)
        if dtype not in _DEPTHS:
            allowed = ", ".join(t.name for t in _DEPTHS)
            raise TypeError(f"{self.op}: dtype {DataType(dtype).name} is not supported ({allowed})")
        if self.ctx.device == "cpu" and self.args.get("gpu_decoding", "auto") == "nvimgcodec":
            raise ValueError(
                f"{self.op}: gpu_decoding='nvimgcodec' needs device='mixed' (this decoder runs "
                "on the cpu)"
            )

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """Decoded images are HWC."""
        return ("HWC",)

    def decode(
        self,
        data: np.ndarray,
        args: Mapping[str, Any],
        roi: tuple[int, int, int, int] | None = None,
    ) -> np.ndarray:
        """Decode one encoded sample (optionally only ``roi``) in the requested type.

        Raises:
            ValueError: the codec cannot decode it, as DALI says: "Failed to decode ...".
        """
        data = encoded_bytes(self.decoder_name, data)
        try:
            image = self.codec(data).decode(data, ImageType(args["output_type"]), roi)
        except ValueError as exc:
            if type(exc) is not ValueError:  # a limit's own error type stays as it is
                raise
            raise ValueError(f"{self.decoder_name}: Failed to decode the sample: {exc}") from exc
        if image.size == 0:
            raise ValueError(
                f"{self.decoder_name}: the decoded image is empty (shape {image.shape})"
            )
        return convert_depth(np.ascontiguousarray(image), args["dtype"])


def check_window_inside(box: tuple[int, int, int, int], height: int, width: int) -> None:
    """Refuse a window ``(y0, x0, y1, x1)`` that leaves the ``height`` x ``width`` image, with
    DALI's message.

    Raises:
        ValueError: the window leaves the image.
    """
    y0, x0, y1, x1 = box
    if y0 < 0 or x0 < 0 or y1 > height or x1 > width:
        raise ValueError(
            f"The cropping window [{y0}..{y1}, {x0}..{x1}] is not valid for image dimensions "
            f"[{height} x {width}]"
        )


def roi_from_window(window: Mapping[int, tuple[int, int]], height: int, width: int) -> tuple:
    """``(y0, x0, y1, x1)`` of a crop window (axis → (start, size)) inside the image.

    Raises:
        ValueError: the window leaves the image.
    """
    y0, h = window.get(0, (0, height))
    x0, w = window.get(1, (0, width))
    check_window_inside((y0, x0, y0 + h, x0 + w), height, width)
    return (y0, x0, y0 + h, x0 + w)


class DecodeKernel(DecoderKernel):
    """``decoders.image``: decode whole images."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Decode one image."""
        return self.decode(inputs[0], args)


class DecodeCropKernel(DecoderKernel):
    """``decoders.image_crop``: decode only a fixed window (``crop``, ``crop_pos_x/y``)."""

    op = "decoders.image_crop"

    def setup(self) -> None:
        """Check ``crop_d`` as DALI does: only with ``crop_h`` and ``crop_w``."""
        super().setup()
        check_depth_args(self.op, {*self.args_given(), *self.ctx.tensor_args})

    def args_given(self) -> set[str]:
        """The static arguments given a value."""
        return {name for name, value in self.args.items() if value is not None}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Read the header, place the window, decode the window."""
        height, width, _ = self.image_shape(inputs[0])
        window = image_crop_window(self.op, (height, width), args)
        return self.decode(inputs[0], args, roi_from_window(window, height, width))


def check_depth_args(op: str, given: set[str]) -> None:
    """Refuse ``crop_d`` without both ``crop_h`` and ``crop_w``, in DALI's words.

    Raises:
        ArgumentError: (a ValueError and a RuntimeError, as DALI raises) ``crop_d`` is given
            alone or with ``crop``.
    """
    if "crop_d" in given and not {"crop_h", "crop_w"} <= given:
        raise ArgumentError(
            f"{op}: `crop_d` argument must be provided together with `crop_w` and `crop_h`"
        )


def image_crop_window(
    op: str, shape: tuple[int, int], args: Mapping[str, Any]
) -> dict[int, tuple[int, int]]:
    """``decoders.image_crop``'s window ``{axis: (start, size)}`` on an image of ``shape``
    (H, W). As in DALI, a three-value ``crop`` (D, H, W) crops H and W, and the depth
    arguments have no effect on 2-D images.

    Raises:
        ValueError: bad window arguments (a ``crop`` of other than 2 or 3 values, in DALI's
            words).
    """
    crop = args.get("crop")
    if crop is not None:
        values = tuple(crop)
        if len(values) not in (2, 3):
            raise ValueError(
                f"{op}: `crop` argument should have 2 or 3 elements depending on the input "
                f"data shape, got {len(values)}"
            )
        args = {**args, "crop": values[-2:]}
    return crop_window(op, "HW", shape, args)


class DecodeRandomCropKernel(DecoderKernel):
    """``decoders.image_random_crop``: decode a random window (``random_resized_crop``'s)."""

    op = "decoders.image_random_crop"

    def setup(self) -> None:
        """Validate the window arguments."""
        super().setup()
        check_rrc_args(self.args)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Draw the window from the header's size, decode the window."""
        height, width, _ = self.image_shape(inputs[0])
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        return self.decode(inputs[0], args, (y, x, y + h, x + w))


def slice_region(
    shape: tuple[int, int, int], window_inputs: Sequence[np.ndarray], args: Mapping[str, Any]
) -> tuple[int, int, int, int] | None:
    """The region ``(y0, x0, y1, x1)`` that ``decoders.image_slice`` keeps of an image of
    ``shape`` (HWC, from its header), or None when its window pads, is empty or slices the
    channels (the image is then decoded whole and sliced).

    Raises:
        ValueError: the window is invalid, or outside the image under
            ``out_of_bounds_policy='error'`` (DALI's message for a decoder's window).
    """
    axes = slice_axes("HWC", 3, args)
    if 2 in axes:
        return None
    checked = args["out_of_bounds_policy"] == "error"
    unchecked = {**args, "out_of_bounds_policy": "pad"} if checked else args
    bounds = slice_bounds(axes, shape, window_inputs, unchecked)
    box = [(0, shape[0]), (0, shape[1])]
    for axis, bound in zip(axes, bounds, strict=True):
        box[axis] = bound
    region = (box[0][0], box[1][0], box[0][1], box[1][1])
    if checked:
        check_window_inside(region, shape[0], shape[1])
    if any(
        not 0 <= start < end <= extent for (start, end), extent in zip(box, shape[:2], strict=True)
    ):
        return None
    return region


class DecodeSliceKernel(DecoderKernel, SliceKernel):
    """``decoders.image_slice``: ``slice``'s window of each image; only the window is decoded
    when it lies inside the image."""

    op = "decoders.image_slice"

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Decode the window of one image (or the whole image, then slice it)."""
        region = slice_region(self.image_shape(inputs[0]), inputs[1:], args)
        if region is not None:
            return self.decode(inputs[0], args, region)
        image = self.decode(inputs[0], args)
        context = SampleContext(
            sample.index, sample.iteration, sample.source_info, ("HWC", "", ""), 0
        )
        return SliceKernel.run_sample(self, (image, *inputs[1:]), {**args, "dtype": None}, context)


class PeekImageShapeKernel(CodecKernel):
    """``peek_image_shape``: ``[H, W, C]`` from the header, without decoding."""

    op = "peek_image_shape"

    def setup(self) -> None:
        """Fetch the registry; resolve the output type."""
        super().setup()
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The shape has no layout."""
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The shape of one encoded image."""
        height, width, channels = self.image_shape(inputs[0])
        image_type = ImageType(args["image_type"])
        if image_type in (ImageType.RGB, ImageType.BGR, ImageType.YCbCr):
            channels = 3
        elif image_type == ImageType.GRAY:
            channels = 1
        return np.array([height, width, channels], dtype=self._dtype)
