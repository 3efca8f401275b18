"""``crop_mirror_normalize``: crop, mirror, normalise, change layout and type in one pass.

``out = (in - mean) / std * scale + shift`` per channel, computed in float32 in DALI's order
(``(in - centre) * gain`` with ``gain = (1 / std) * scale`` and ``centre = mean - shift / gain``,
so the float32 results are DALI's), then converted to ``dtype`` (integers rounded to nearest and
saturated). The crop follows :mod:`.crop`'s rules;
``mirror`` flips the window horizontally. Where ``out_of_bounds_policy="pad"`` takes the window
outside the sample, the output holds ``fill_values`` as given (not normalized), as in DALI.
``pad_output`` pads the channels to the next power of two with the fill value (0 by default).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import (
    output_dtype,
    resolve_layout,
    saturate_cast,
)
from feedline.operators.cpu.image.bindings import normalize_u8
from feedline.operators.cpu.image.crop import crop_image, crop_window

__all__ = [
    "CMN_LAYOUTS",
    "CropMirrorNormalizeKernel",
    "centre_gain",
    "crop_mirror_normalize",
    "fill_value",
    "has_crop",
    "normalized_layout",
    "normalized_type",
    "output_plan",
]

OP = "crop_mirror_normalize"
CMN_LAYOUTS = ("HWC", "CHW", "FHWC", "FCHW", "CFHW", "DHWC", "CDHW", "FDHWC", "FCDHW", "CFDHW")
_DEFAULTS = {3: "HWC", 4: "FHWC"}
_OUT_TYPES = (np.float32, np.float16, np.uint8, np.int8, np.int16, np.int32)
_CROP_EXTENTS = ("crop", "crop_d", "crop_h", "crop_w")


def _per_channel(name: str, values: Any, channels: int) -> np.ndarray:
    array = np.asarray(values, dtype=np.float32).ravel()
    if array.size == 1:
        return np.repeat(array, channels)
    if array.size != channels:
        raise ValueError(
            f"{OP}: '{name}' has {array.size} values, the data has {channels} channels"
        )
    return array


@functools.lru_cache(maxsize=64)
def _affine(
    mean: tuple[float, ...], std: tuple[float, ...], scale: float, shift: float, channels: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel float32 ``(centre, gain)`` with ``out = (in - centre) * gain``, computed as
    DALI computes them (cached: the arguments rarely change between samples).

    Raises:
        ValueError: ``mean``/``std`` do not match ``channels``, or ``std`` contains a zero.
    """
    std_values = _per_channel("std", std, channels)
    if np.any(std_values == 0):
        raise ValueError(f"{OP}: 'std' must not contain zeros, got {std}")
    gain = (np.float32(1) / std_values) * np.float32(scale)
    centre = _per_channel("mean", mean, channels) - np.float32(shift) / gain
    gain.flags.writeable = centre.flags.writeable = False
    return centre, gain


_RECENT: dict[tuple[int, int, float, float, int], tuple[Any, Any, np.ndarray, np.ndarray]] = {}


def centre_gain(args: Mapping[str, Any], channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel ``(centre, gain)`` with ``out = (in - centre) * gain`` for the sample's
    arguments: :func:`_affine`, remembered by the identity of ``mean`` and ``std`` (static
    arguments are the same objects for every sample)."""
    mean, std = args["mean"], args["std"]
    key = (id(mean), id(std), float(args["scale"]), float(args["shift"]), channels)
    hit = _RECENT.get(key)
    if hit is not None and hit[0] is mean and hit[1] is std:
        return hit[2], hit[3]
    centre, gain = _affine(_as_tuple(mean), _as_tuple(std), key[2], key[3], channels)
    if len(_RECENT) >= 64:
        _RECENT.clear()
    _RECENT[key] = (mean, std, centre, gain)
    return centre, gain


def _as_tuple(values: Any) -> tuple[float, ...]:
    """``values`` (a number, sequence or array) as a hashable tuple of floats."""
    return tuple(float(v) for v in np.asarray(values, dtype=np.float64).ravel())


@functools.lru_cache(maxsize=64)
def normalized_layout(requested: str, layout: str) -> str:
    """The output layout for input ``layout`` (``F`` prepended for sequences).

    Raises:
        ValueError: ``requested`` is not a permutation of ``layout``.
    """
    if "F" in layout and "F" not in requested:
        requested = "F" + requested
    if sorted(requested) != sorted(layout):
        raise ValueError(
            f"{OP}: output_layout {requested!r} is not a permutation of the input layout {layout!r}"
        )
    return requested


def output_plan(
    layout: str, window_shape: Sequence[int], args: Mapping[str, Any]
) -> tuple[str, list[int], int, int, int, list[int]]:
    """Where the output puts a window of ``window_shape`` (in ``layout``).

    Returns:
        ``(output layout, input axis of each output axis, output channel axis, the window's
        channels, the output's channels, output shape)``; with ``pad_output`` the output's
        channels are the next power of two.
    """
    channels = window_shape[layout.index("C")]
    out_layout = normalized_layout(args["output_layout"] or layout, layout)
    order = [layout.index(a) for a in out_layout]
    out_channel = out_layout.index("C")
    padded = 1 << (channels - 1).bit_length() if args.get("pad_output") else channels
    shape = [window_shape[a] for a in order]
    shape[out_channel] = padded
    return out_layout, order, out_channel, channels, padded, shape


def has_crop(args: Mapping[str, Any]) -> bool:
    """Whether the arguments set a crop extent (without one the window is the whole sample)."""
    return any(args.get(k) is not None for k in _CROP_EXTENTS)


def fill_value(args: Mapping[str, Any]) -> float:
    """The value of ``pad_output``'s padding channels: the single ``fill_values`` entry, else 0."""
    fill = args.get("fill_values") or (0.0,)
    return float(fill[0]) if len(fill) == 1 else 0.0


def normalized_type(dtype: Any) -> np.dtype:
    """The NumPy type of ``dtype`` (float32 when unset).

    Raises:
        TypeError: ``crop_mirror_normalize`` does not produce that type.
    """
    return output_dtype(OP, dtype, np.dtype(np.float32), _OUT_TYPES)


def crop_mirror_normalize(
    image: np.ndarray,
    layout: str,
    args: Mapping[str, Any],
    out_dtype: np.dtype,
    allocate: Callable[[Sequence[int], Any], np.ndarray] = np.empty,
) -> tuple[np.ndarray, str]:
    """Crop, mirror, normalise and transpose one sample; returns it with its layout.

    ``allocate(shape, dtype)`` provides the float output buffer (e.g. a row of the batch).
    """
    window = crop_image(OP, image, layout, args) if has_crop(args) else image
    outside = _padded_area(image.shape, layout, args) if has_crop(args) else None
    out_layout, order, out_channel, channels, pad, shape = output_plan(layout, window.shape, args)
    centre, gain = centre_gain(args, channels)
    float_out = out_dtype == np.float32
    out = (allocate if float_out else np.empty)(shape, np.float32)
    fill = fill_value(args)
    if (
        layout == "HWC"
        and out_layout in ("HWC", "CHW")
        and normalize_u8(
            window, out, gain, centre, bool(args.get("mirror")), out_layout == "CHW", fill
        )
    ):
        if outside is not None:
            _fill_padding(out, outside, layout, order, out_channel, channels, args)
        return (out if float_out else saturate_cast(out, out_dtype)), out_layout
    if args.get("mirror"):
        flip = [slice(None)] * window.ndim
        flip[layout.index("W")] = slice(None, None, -1)
        window = window[tuple(flip)]
    broadcast = [1] * out.ndim
    broadcast[out_channel] = channels
    head = (slice(None),) * out_channel
    target = out[(*head, slice(0, channels))]
    source = window.transpose(order)
    if source.dtype.itemsize == 1:
        # Converting a strided byte window while multiplying is slow: gather it contiguously.
        source = np.ascontiguousarray(source)
    np.subtract(source, centre.reshape(broadcast), out=target, dtype=np.float32, casting="unsafe")
    np.multiply(target, gain.reshape(broadcast), out=target)
    if pad > channels:
        out[(*head, slice(channels, None))] = fill
    if outside is not None:
        _fill_padding(out, outside, layout, order, out_channel, channels, args)
    if not float_out:
        out = saturate_cast(out, out_dtype)
    return out, out_layout


def _padded_area(shape: tuple[int, ...], layout: str, args: Mapping[str, Any]) -> np.ndarray | None:
    """With ``out_of_bounds_policy="pad"``: a mask of the crop window (extent 1 on the axes
    not cropped), True where the window lies outside the sample; None when nothing is."""
    if (args.get("out_of_bounds_policy") or "error") != "pad":
        return None
    window = crop_window(OP, layout, shape, args)
    outside = np.zeros([window[a][1] if a in window else 1 for a in range(len(shape))], bool)
    for axis, (start, size) in window.items():
        position = np.arange(start, start + size)
        view = [1] * len(shape)
        view[axis] = size
        outside |= ((position < 0) | (position >= shape[axis])).reshape(view)
    return outside if outside.any() else None


def _fill_padding(
    out: np.ndarray,
    outside: np.ndarray,
    layout: str,
    order: Sequence[int],
    out_channel: int,
    channels: int,
    args: Mapping[str, Any],
) -> None:
    """Write ``fill_values`` as they are (not normalized, as in DALI) where the crop window
    left the sample."""
    if args.get("mirror"):
        outside = np.flip(outside, layout.index("W"))
    fill = np.asarray(args.get("fill_values") or (0.0,), np.float32).ravel()
    view = [1] * out.ndim
    if fill.size > 1:
        view[out_channel] = fill.size
    head = (slice(None),) * out_channel
    target = out[(*head, slice(0, channels))]
    np.copyto(target, fill.reshape(view), where=outside.transpose(order))


class CropMirrorNormalizeKernel(SampleKernel):
    """Per-sample ``crop_mirror_normalize``."""

    def setup(self) -> None:
        """Check ``dtype`` once (it is not a per-sample argument)."""
        self._out_type = normalized_type(self.args["dtype"])

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """``output_layout`` (with ``F`` prepended for sequences)."""
        layout = input_layouts[0] if input_layouts else ""
        requested = self.args["output_layout"]
        if not requested:
            return (layout,)
        if "F" in layout and "F" not in requested:
            requested = "F" + requested
        return (requested,)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Process one sample."""
        (image,) = inputs
        layout = resolve_layout(OP, sample.layouts[0], image.ndim, CMN_LAYOUTS, _DEFAULTS)
        out, _ = crop_mirror_normalize(image, layout, args, self._out_type, sample.output)
        return out
