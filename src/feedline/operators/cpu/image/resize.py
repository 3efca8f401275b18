"""``resize`` and ``random_resized_crop`` kernels (geometry in :mod:`.windows`, pixels in
:mod:`.resample`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.tensors import output_dtype, resolve_layout
from feedline.operators.cpu.image.resample import pick_filter, resample, resample_reference
from feedline.operators.cpu.image.windows import (
    Source,
    random_crop_window,
    resize_plan,
    round_half_away,
)

__all__ = [
    "CHANNEL_FIRST_SEQUENCES",
    "RESIZE_LAYOUTS",
    "VOLUME_LAYOUTS",
    "RandomCropGeneratorKernel",
    "RandomResizedCropKernel",
    "ResizeKernel",
    "check_resample_input",
    "filters_from_args",
    "frames_first",
    "resample_layout",
    "rrc_size",
    "rrc_window",
    "spatial_size",
    "to_channels_first",
]

RESIZE_LAYOUTS = ("HWC", "HW", "CHW", "FHWC", "FCHW")
VOLUME_LAYOUTS = ("DHWC", "DHW", "CDHW", "FDHWC", "FCDHW")
"""The volumetric layouts ``resize`` takes on the CPU (three spatial axes, D, H and W)."""
#: Channel-first sequences (C before F), resampled frame by frame as their F-first twins.
CHANNEL_FIRST_SEQUENCES = {"CFHW": "FCHW", "CFDHW": "FCDHW"}
_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def frames_first(image: np.ndarray, layout: str) -> tuple[np.ndarray, str, bool]:
    """A channel-first sequence (:data:`CHANNEL_FIRST_SEQUENCES`) as a view of its F-first twin:
    ``(view, twin layout, True)``; any other sample unchanged: ``(image, layout, False)``."""
    twin = CHANNEL_FIRST_SEQUENCES.get(layout)
    if twin is None:
        return image, layout, False
    return np.moveaxis(image, 0, 1), twin, True


def to_channels_first(out: np.ndarray, moved: bool) -> np.ndarray:
    """Undo :func:`frames_first` on a result (``moved``: what it returned last)."""
    return np.ascontiguousarray(np.moveaxis(out, 1, 0)) if moved else out


_TYPES = (np.uint8, np.int16, np.uint16, np.int32, np.float32)


def filters_from_args(args: Mapping[str, Any]) -> tuple[InterpType, InterpType]:
    """``(min_filter, mag_filter)``: each defaults to ``interp_type``."""
    interp = InterpType(int(args["interp_type"]))
    min_filter = args.get("min_filter")
    mag_filter = args.get("mag_filter")
    return (
        InterpType(int(min_filter)) if min_filter is not None else interp,
        InterpType(int(mag_filter)) if mag_filter is not None else interp,
    )


def resample_layout(
    image: np.ndarray,
    layout: str,
    out_size: Sequence[int],
    source: Source,
    args: Mapping[str, Any],
    out_dtype: np.dtype,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Resample every frame/plane of ``image`` (layout HW, HWC, CHW, FHWC or FCHW, or a volume
    layout with D: ``out_size`` and ``source`` then have three axes); an HW or HWC result goes
    to ``out`` where :func:`resample` can write it there."""
    if image.size == 0:  # DALI passes it through: a zero extent stays zero, the others resize
        shape = list(image.shape)
        for axis, extent in zip(_spatial_axes(layout), out_size, strict=True):
            shape[axis] = extent if shape[axis] else 0
        return np.zeros(shape, out_dtype)
    if "D" in layout:
        return _resample_volume(image, layout, out_size, source, args, out_dtype)
    min_filter, mag_filter = filters_from_args(args)
    antialias = bool(args["antialias"])

    def one(frame: np.ndarray, to: np.ndarray | None = None) -> np.ndarray:
        return resample(frame, out_size, source, min_filter, mag_filter, antialias, out_dtype, to)

    if layout in ("HW", "HWC"):
        return one(image, out)
    if layout == "CHW":
        return np.ascontiguousarray(one(image.transpose(1, 2, 0)).transpose(2, 0, 1))
    frames = [one(f if layout == "FHWC" else f.transpose(1, 2, 0)) for f in image]
    stacked = np.stack(frames)
    return stacked if layout == "FHWC" else np.ascontiguousarray(stacked.transpose(0, 3, 1, 2))


def _spatial_axes(layout: str) -> list[int]:
    return [layout.index(axis) for axis in "DHW" if axis in layout]


def spatial_size(layout: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``(height, width)`` of a sample of ``shape`` in ``layout`` (``(depth, height, width)``
    for a volume)."""
    return tuple(shape[axis] for axis in _spatial_axes(layout))


def _resample_volume(
    image: np.ndarray,
    layout: str,
    out_size: Sequence[int],
    source: Sequence[tuple[float, float]],
    args: Mapping[str, Any],
    out_dtype: np.dtype,
) -> np.ndarray:
    """Resample a volume (DHWC, DHW, CDHW) or a sequence of them (FDHWC, FCDHW): separable
    passes over D, H and W in float32, rounded once at the end."""
    min_filter, mag_filter = filters_from_args(args)
    scales = [(end - start) / n for (start, end), n in zip(source, out_size, strict=True)]
    filters = [pick_filter(scale, min_filter, mag_filter) for scale in scales]
    antialias = bool(args["antialias"])

    def one(volume: np.ndarray) -> np.ndarray:  # spatial axes first, channels (if any) last
        return resample_reference(volume, out_size, source, filters, antialias, out_dtype)

    def planar(volume: np.ndarray) -> np.ndarray:  # CDHW
        return np.ascontiguousarray(np.moveaxis(one(np.moveaxis(volume, 0, -1)), -1, 0))

    if layout in ("DHWC", "DHW"):
        return one(image)
    if layout == "CDHW":
        return planar(image)
    return np.stack([one(v) if layout == "FDHWC" else planar(v) for v in image])


class ResizeKernel(SampleKernel):
    """Per-sample ``resize``."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    @staticmethod
    def resize(
        op: str, image: np.ndarray, layout: str, args: Mapping[str, Any], out_dtype: np.dtype
    ) -> np.ndarray:
        """``resize`` of one sample in a checked ``layout``, for ``op`` (named in errors): the
        size arguments as :func:`resize_plan` reads them, the filters and ``antialias`` as
        :func:`resample_layout` does. Also what other plugins (``readers.video_resize``) call
        through the registry."""
        out_size, source = resize_plan(op, spatial_size(layout, image.shape), args)
        return resample_layout(image, layout, out_size, source, args, out_dtype)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Resize one sample."""
        image, declared, moved = frames_first(inputs[0], sample.layouts[0])
        layout, out_type = check_resample_input("resize", image, declared, args, volumes=True)
        out = to_channels_first(self.resize("resize", image, layout, args, out_type), moved)
        if not args.get("save_attrs"):
            return out
        return out, np.array(spatial_size(layout, image.shape), np.int32)

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input's layout; the extents of ``save_attrs`` have none."""
        layout = input_layouts[0] if input_layouts else ""
        return (layout, "") if self.args.get("save_attrs") else (layout,)


def check_resample_input(
    op: str, image: Any, layout: str, args: Mapping[str, Any], volumes: bool = False
) -> tuple[str, np.dtype]:
    """``(layout, output type)`` of a ``resize``/``random_resized_crop`` sample (``volumes``:
    whether the :data:`VOLUME_LAYOUTS` are accepted too).

    Raises:
        ValueError: an unsupported layout.
        TypeError: an unsupported input or output type.
    """
    layouts = RESIZE_LAYOUTS + VOLUME_LAYOUTS if volumes else RESIZE_LAYOUTS
    layout = resolve_layout(op, layout, image.ndim, layouts, _DEFAULTS)
    out_type = output_dtype(op, args["dtype"], image.dtype, _TYPES)
    if image.dtype not in [np.dtype(t) for t in _TYPES]:
        raise TypeError(
            f"{op}: input type {image.dtype} is not supported; expected uint8, int16, "
            "uint16, int32 or float32"
        )
    return layout, out_type


def rrc_size(args: Mapping[str, Any]) -> tuple[int, int]:
    """The ``(height, width)`` output size of ``random_resized_crop``.

    Raises:
        ValueError: ``size`` does not have 1 or 2 positive values.
    """
    size = tuple(args["size"])
    if len(size) == 1:
        size = size * 2
    if len(size) != 2 or min(size) <= 0:
        raise ValueError(
            f"random_resized_crop: 'size' needs 1 or 2 positive values (height, width), got {size}"
        )
    return round_half_away(size[0]), round_half_away(size[1])


def check_rrc_args(args: Mapping[str, Any]) -> None:
    """Validate ``random_area``, ``random_aspect_ratio`` and ``num_attempts``."""
    area = tuple(args["random_area"])
    ratio = tuple(args["random_aspect_ratio"])
    if len(area) == 1:
        area = (area[0], area[0])
    if len(ratio) == 1:
        ratio = (ratio[0], ratio[0])
    if len(area) != 2 or not 0 < area[0] <= area[1] <= 1:
        raise ValueError(f"'random_area' must be [min, max] with 0 < min <= max <= 1, got {area}")
    if len(ratio) != 2 or not 0 < ratio[0] <= ratio[1]:
        raise ValueError(
            f"'random_aspect_ratio' must be [min, max] with 0 < min <= max, got {ratio}"
        )
    if args["num_attempts"] < 1:
        raise ValueError(f"'num_attempts' must be at least 1, got {args['num_attempts']}")


def rrc_window(
    args: Mapping[str, Any], height: int, width: int, rng: np.random.Generator
) -> tuple[int, int, int, int]:
    """The random window ``(y, x, h, w)`` of one sample."""
    area = tuple(args["random_area"])
    ratio = tuple(args["random_aspect_ratio"])
    return random_crop_window(
        rng,
        height,
        width,
        area * 2 if len(area) == 1 else area,
        ratio * 2 if len(ratio) == 1 else ratio,
        args["num_attempts"],
    )


class RandomResizedCropKernel(SampleKernel):
    """Per-sample ``random_resized_crop``: a random window resized to ``size``."""

    def setup(self) -> None:
        """Validate the static arguments once."""
        check_rrc_args(self.args)
        self._size = rrc_size(self.args)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Crop and resize one sample (all frames of a sequence share the window)."""
        image, declared, moved = frames_first(inputs[0], sample.layouts[0])
        op = "random_resized_crop"
        layout, out_type = check_resample_input(op, image, declared, args)
        height, width = spatial_size(layout, image.shape)
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        source = ((float(y), float(y + h)), (float(x), float(x + w)))
        out = resample_layout(image, layout, self._size, source, args, out_type)
        return to_channels_first(out, moved)


class RandomCropGeneratorKernel(SampleKernel):
    """``random_crop_generator``: the window of ``decoders.image_random_crop`` for a shape."""

    def setup(self) -> None:
        """Validate the static arguments once."""
        check_rrc_args(self.args)

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout on either output."""
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw one window from the sample's generator."""
        shape = inputs[0]
        if not np.issubdtype(shape.dtype, np.integer):
            raise TypeError(f"Only integer types are supported. Got: {shape.dtype}")
        if shape.ndim != 1 or shape.size not in (2, 3):
            raise ValueError(
                "Expected a 1D tensor with 2 or 3 values representing an input shape (HW or "
                f"HWC), got shape {shape.shape}"
            )
        height, width = int(shape[0]), int(shape[1])
        if height <= 0 or width <= 0:  # as DALI: an empty window for an empty (or invalid) shape
            return np.zeros(2, np.int32), np.zeros(2, np.int32)
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        return np.array([y, x], np.int32), np.array([h, w], np.int32)
