"""``rotate``: images (HWC, HW, CHW), volumes (DHWC) and sequences of them (FHWC, FDHWC), with
angles, axes and sizes given per sample or per frame (``fn.per_frame``).

2-D rotations go through :func:`~.warp.warp_affine`, 3-D ones through
:func:`~.volumes.warp_volume`. All frames of a sequence share one canvas: with ``size`` or
``keep_size`` it is the given or input size; otherwise, as DALI, each extent is the largest of
the frames' rotated bounding boxes, made odd when most frames' own canvases would be odd there
and even otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import check_frame_counts, frame_value, per_frame_args
from feedline.operators.cpu.common.tensors import (
    check_dtype,
    check_not_empty,
    output_dtype,
    resolve_layout,
)
from feedline.operators.cpu.geometry.volumes import (
    rotate_volume_matrix,
    rotated_volume_size,
    warp_volume,
)
from feedline.operators.cpu.geometry.warp import (
    WARP_DEFAULTS,
    WARP_LAYOUTS,
    WARP_TYPES,
    check_interp,
    image_size,
    rotate_matrix,
    rotated_size,
    size_arg,
    warp_affine,
)

__all__ = ["RotateKernel", "sequence_canvas"]

_VOLUMES = ("DHWC", "FDHWC")
_PER_FRAME = ("angle", "axis", "size")


def sequence_canvas(sizes: Callable[[int, bool], Sequence[int]], frames: int) -> tuple[int, ...]:
    """The canvas all ``frames`` of a sequence share when none is given: per extent, the largest
    rotated bounding box of a frame, odd where most frames' parity-corrected canvases are odd.

    Args:
        sizes: ``sizes(frame, parity)``, the canvas of one frame without (``parity=False``) or
            with DALI's parity correction.
        frames: the number of frames (1 for a single image or volume).
    """
    plain = np.array([sizes(f, False) for f in range(frames)])
    odd = np.array([sizes(f, True) for f in range(frames)]) % 2
    largest = plain.max(axis=0)
    wanted = 2 * odd.sum(axis=0) > frames
    return tuple(int(n + (n % 2 != w)) for n, w in zip(largest, wanted, strict=True))


class RotateKernel(SampleKernel):
    """Per-sample ``rotate``."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Rotate one sample (every frame of a sequence by its own angle and axis)."""
        (image,) = inputs
        declared = sample.layouts[0]
        volume = declared in _VOLUMES
        layouts = (*WARP_LAYOUTS, *_VOLUMES)
        layout = resolve_layout("rotate", declared, image.ndim, layouts, WARP_DEFAULTS)
        check_dtype("rotate", image, WARP_TYPES)
        out_type = output_dtype("rotate", args["dtype"], image.dtype, WARP_TYPES)
        check_interp("rotate", args["interp_type"])
        check_not_empty("rotate", image)  # DALI 2.4 crashes on it
        per_frame = per_frame_args(sample.arg_layouts, layout)
        frames = image.shape[0] if layout.startswith("F") else 1
        counts = {name: len(args[name]) for name in per_frame if name in _PER_FRAME}
        check_frame_counts(sample.index, counts, frames)

        def arg(name: str, frame: int) -> Any:
            return frame_value(args[name], frame) if name in per_frame else args[name]

        frame_images = list(image) if layout.startswith("F") else [image]
        if volume:
            return self._rotate_volumes(frame_images, layout, args, arg, out_type)
        if any(arg("axis", f) for f in range(frames)):
            raise ValueError(
                "rotate: argument 'axis' applies only to 3-D volumes (DHWC, FDHWC); remove it "
                "for 2-D images"
            )
        frame_layout = layout[1:] if layout.startswith("F") else layout
        in_size = image_size(frame_images[0], frame_layout)
        out_size = self._canvas(
            frames,
            lambda f: size_arg("rotate", arg("size", f)),
            in_size if args["keep_size"] else None,
            lambda f, parity: rotated_size(*in_size, float(arg("angle", f)), parity),
        )
        interp, fill = args["interp_type"], args["fill_value"]
        if not per_frame:  # one transform for every frame: one call
            matrix = rotate_matrix(float(args["angle"]), in_size, out_size)
            return warp_affine(image, layout, matrix, out_size, interp, fill, out_type)
        rotated = [
            warp_affine(
                frame,
                frame_layout,
                rotate_matrix(float(arg("angle", f)), in_size, out_size),
                out_size,
                interp,
                fill,
                out_type,
            )
            for f, frame in enumerate(frame_images)
        ]
        return np.stack(rotated)

    def _rotate_volumes(
        self,
        volumes: list[np.ndarray],
        layout: str,
        args: Mapping[str, Any],
        arg: Callable[[str, int], Any],
        out_type: np.dtype,
    ) -> np.ndarray:
        """Rotate the volumes (DHWC) of one sample about their axes."""
        frames = len(volumes)
        axes = [arg("axis", f) for f in range(frames)]
        if any(not axis for axis in axes):
            raise ValueError("rotate: Argument `axis` is required for 3-D volumes (DHWC, FDHWC)")
        in_shape = volumes[0].shape[:3]
        out_shape = self._canvas(
            frames,
            lambda f: size_arg("rotate", arg("size", f), ndim=3),
            in_shape if args["keep_size"] else None,
            lambda f, parity: rotated_volume_size(
                in_shape, axes[f], float(arg("angle", f)), parity
            ),
        )
        rotated = [
            warp_volume(
                volume,
                rotate_volume_matrix(axes[f], float(arg("angle", f)), in_shape, out_shape),
                out_shape,
                args["interp_type"],
                args["fill_value"],
                out_type,
            )
            for f, volume in enumerate(volumes)
        ]
        return np.stack(rotated) if layout.startswith("F") else rotated[0]

    @staticmethod
    def _canvas(
        frames: int,
        given: Callable[[int], tuple[int, ...] | None],
        kept: tuple[int, ...] | None,
        rotated: Callable[[int, bool], Sequence[int]],
    ) -> tuple[int, ...]:
        """The output extents shared by all frames: ``size``, else ``kept`` (``keep_size``),
        else :func:`sequence_canvas`.

        Raises:
            ValueError: per-frame sizes that differ within the sequence.
        """
        sizes = {given(f) for f in range(frames)}
        if len(sizes) > 1:
            raise ValueError(
                f"rotate: the frames of a sequence must share one output size, got {sorted(sizes)}"
            )
        (size,) = sizes
        if size is not None:
            return size
        if kept is not None:
            return tuple(int(n) for n in kept)
        return sequence_canvas(rotated, frames)
