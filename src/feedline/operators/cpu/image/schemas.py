"""Family ``image``: schemas and registration of the image decoders, the codecs, ``resize``,
``tensor_resize`` (its schema in :mod:`.tensor_resize_schema`), ``random_resized_crop``,
``crop``, ``crop_mirror_normalize``, DALI's legacy ``resize_crop_mirror``/
``fast_resize_crop_mirror`` and the decode-fusion graph pass (the argument specifications they
share are in :mod:`.arg_schemas`).

Only schemas live here (no Pillow, NumPy kernels or codecs are imported at plugin load); kernels,
codecs and the graph pass are ``"module:attr"`` strings imported on first use: :mod:`.decoders`
and :mod:`.codecs` (decoding), :mod:`.resize` and :mod:`.tensor_resize` with :mod:`.resample`
and :mod:`.windows` (resizing), :mod:`.crop`, :mod:`.cmn`, :mod:`.fusion` (the fused decode
operators and their graph pass) and :mod:`.bindings` (cffi bindings of the compiled kernels).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType, ImageType
from feedline.operators.cpu.common.schemas import OUTPUT_DTYPE_ALIAS, register_cpu_operators
from feedline.operators.cpu.image.arg_schemas import (
    ADJUST_ORIENTATION_ARG,
    CROP_VOLUME_ARGS,
    CROP_WINDOW_ARGS,
    DALI_DECODER_ARGS,
    DALI_DECODER_CACHE_ARGS,
    DECODE_ARGS,
    DECODE_DOC,
    DECODER_DEPTH_ARGS,
    ENCODED,
    GPU_DECODING,
    INTERP_ARGS,
    MAX_DECODED_BYTES_ARG,
    MAX_PIXELS_ARG,
    NORMALIZE_ARGS,
    RANDOM_WINDOW_ARGS,
    REMOVED_DECODER_ARGS,
    RESAMPLE_NOTE,
    RESAMPLED_DTYPE,
)
from feedline.operators.cpu.image.tensor_resize_schema import TENSOR_RESIZE
from feedline.operators.cpu.tensor.schemas import SLICE

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "CODECS",
    "KERNELS",
    "SCHEMAS",
    "SLICE_WINDOW_ARGS",
    "feedline_register_codecs",
    "feedline_register_operators",
]

_KERNELS = "feedline.operators.cpu.image"
DECODERS_IMAGE = OpSchema(
    "decoders.image",
    f"Decodes images.\n\n{DECODE_DOC}",
    inputs=ENCODED,
    args=(*DECODE_ARGS, *DALI_DECODER_ARGS, *DALI_DECODER_CACHE_ARGS, GPU_DECODING),
    removed=REMOVED_DECODER_ARGS,
    random=False,
)
DECODERS_IMAGE_CROP = OpSchema(
    "decoders.image_crop",
    "Decodes a fixed window of each image (``crop`` conventions).\n\nThe window is placed from "
    "the header's size; codecs that support it decode only the window.\n\n" + DECODE_DOC,
    inputs=ENCODED,
    args=(*DECODE_ARGS, *DALI_DECODER_ARGS, GPU_DECODING, *CROP_WINDOW_ARGS, *DECODER_DEPTH_ARGS),
    removed=REMOVED_DECODER_ARGS,
    random=False,
)
DECODERS_IMAGE_RANDOM_CROP = OpSchema(
    "decoders.image_random_crop",
    "Decodes a random window of each image (``random_resized_crop``'s window).\n\nEach attempt "
    "draws an area fraction and an aspect ratio; w = round(sqrt(A * area * ratio)), h = "
    "round(sqrt(A * area / ratio)); the first window that fits is placed uniformly.\n\n"
    + DECODE_DOC,
    inputs=ENCODED,
    args=(*DECODE_ARGS, *DALI_DECODER_ARGS, GPU_DECODING, *RANDOM_WINDOW_ARGS),
    removed=REMOVED_DECODER_ARGS,
)
DECODERS_IMAGE_SLICE = OpSchema(
    "decoders.image_slice",
    "Decodes a slice of each image: ``slice``'s arguments and rounding on the decoded HWC image "
    "(coordinates default to x, y: ``axis_names='WH'``).\n\n" + DECODE_DOC,
    inputs=(*ENCODED, *SLICE.inputs[1:]),
    args=(
        *DECODE_ARGS,
        *DALI_DECODER_ARGS,
        GPU_DECODING,
        *(a for a in SLICE.args if a.name != "dtype"),
    ),
    removed=REMOVED_DECODER_ARGS,
    random=False,
)
PEEK_IMAGE_SHAPE = OpSchema(
    "peek_image_shape",
    "Returns the shape ``[H, W, C]`` of encoded images from their headers, without decoding "
    "(EXIF orientation applied; C is 3 for RGB/BGR/YCbCr, 1 for GRAY, the file's own for "
    "ANY_DATA).",
    inputs=ENCODED,
    args=(
        ArgSpec(
            "dtype",
            "dtype",
            DataType.INT64,
            "Type of the shape.",
            choices=(
                DataType.INT32,
                DataType.INT64,
                DataType.UINT32,
                DataType.UINT64,
                DataType.FLOAT,
                DataType.FLOAT64,
            ),
        ),
        ArgSpec("image_type", "image_type", ImageType.RGB, "Colour space deciding C."),
        ADJUST_ORIENTATION_ARG,
        MAX_PIXELS_ARG,
        MAX_DECODED_BYTES_ARG,
    ),
    random=False,
)
RESIZE = OpSchema(
    "resize",
    "Resizes images (HWC, HW, CHW; sequences FHWC, FCHW, CFHW frame by frame) and, on the CPU, "
    "volumes (DHWC, DHW, CDHW; sequences FDHWC, FCDHW, CFDHW), with separable passes over D, H "
    "and W."
    "\n\n"
    "Output size (as DALI): from resize_x/resize_y (and resize_z for volumes) or size (H, W, or "
    "D, H, W; 0 or a missing one is scaled by the geometric mean of the given scales, or kept "
    "with mode 'stretch'), or resize_shorter/resize_longer; ``mode`` 'not_smaller'/'not_larger' "
    "keep the aspect ratio using the larger/smaller scale. ``max_size`` limits each axis on its "
    "own in the default and 'stretch' modes, and the scale (aspect kept) otherwise; the result is "
    "rounded half away from zero. With ``subpixel_scale`` the exact scale is kept and the source "
    "region shrinks symmetrically to the rounded size. ``roi_start``/``roi_end`` (H, W order; "
    "absolute or relative) select the source region; start > end mirrors. " + RESAMPLE_NOTE,
    inputs=(
        InputSpec(
            "input",
            "Images or volumes.",
            layouts=(
                "HWC",
                "HW",
                "CHW",
                "FHWC",
                "FCHW",
                "CFHW",
                "DHWC",
                "DHW",
                "CDHW",
                "FDHWC",
                "FCDHW",
                "CFDHW",
                "",
            ),
        ),
    ),
    args=(
        ArgSpec("resize_x", "float", None, "Output width.", tensor=True),
        ArgSpec("resize_y", "float", None, "Output height.", tensor=True),
        ArgSpec("resize_z", "float", None, "Output depth (volumes).", tensor=True),
        ArgSpec("size", "float_vec", None, "Output (H, W); 0 keeps the aspect ratio.", tensor=True),
        ArgSpec("resize_shorter", "float", None, "Length of the shorter side.", tensor=True),
        ArgSpec("resize_longer", "float", None, "Length of the longer side.", tensor=True),
        ArgSpec(
            "mode",
            "str",
            "default",
            "default, stretch, not_smaller or not_larger.",
            choices=("default", "stretch", "not_smaller", "not_larger"),
        ),
        ArgSpec("max_size", "float_vec", None, "Upper limit of the output size (one or H, W)."),
        *INTERP_ARGS,
        ArgSpec("roi_start", "float_vec", None, "Source region start (H, W).", tensor=True),
        ArgSpec("roi_end", "float_vec", None, "Source region end (H, W).", tensor=True),
        ArgSpec("roi_relative", "bool", False, "ROI given relative to the input size."),
        ArgSpec("subpixel_scale", "bool", True, "Keep the exact scale for fractional sizes."),
        RESAMPLED_DTYPE,
        ArgSpec(
            "minibatch_size",
            "int",
            32,
            "DALI's GPU batch-splitting hint; accepted, and changes nothing (feedline's kernels "
            "take whole batches).",
        ),
        ArgSpec(
            "temp_buffer_hint",
            "int",
            0,
            "DALI's GPU scratch-memory hint; accepted, and changes nothing (buffers grow as "
            "needed).",
        ),
    ),
    removed=("image_type",),
    random=False,
)
#: ``resize``'s arguments as the operators built on it take them (``resize_crop_mirror``, the
#: fused decoders): all but ``save_attrs``.
RESIZE_ARGS = RESIZE.args
RESIZE = replace(
    RESIZE,
    args=(
        *RESIZE_ARGS,
        ArgSpec(
            "save_attrs",
            "bool",
            False,
            "Also output the input's spatial extents (int32 ``(H, W)`` or ``(D, H, W)``, no "
            "layout), DALI's testing aid.",
        ),
    ),
    outputs=lambda args: ("output", "attrs") if args.get("save_attrs") else ("output",),
)
RANDOM_RESIZED_CROP = OpSchema(
    "random_resized_crop",
    "Crops a random window and resizes it to ``size`` (H, W).\n\nThe window is drawn as in "
    "``decoders.image_random_crop``; all frames of a sequence share it. The resize reads pixels "
    "around the window (as DALI's ROI resize). " + RESAMPLE_NOTE,
    inputs=(
        InputSpec("input", "Images.", layouts=("HWC", "HW", "CHW", "FHWC", "FCHW", "CFHW", "")),
    ),
    args=(
        ArgSpec("size", "float_vec", REQUIRED, "Output size (H, W), or one value for a square."),
        *RANDOM_WINDOW_ARGS,
        *INTERP_ARGS,
        RESAMPLED_DTYPE,
        *(a for a in RESIZE_ARGS if a.name in ("minibatch_size", "temp_buffer_hint")),
    ),
)
CROP = OpSchema(
    "crop",
    "Crops a window of images (HWC, CHW, HW), sequences (FHWC, FCHW) or volumes (DHWC, CDHW).\n\n"
    "Extent from ``crop`` or crop_h/crop_w/crop_d (fractions truncated); start = round(crop_pos "
    "* (in_size - crop_size)), halves away from zero. Axes without an extent are kept whole.",
    inputs=(InputSpec("input", "Data to crop."),),
    args=(
        *CROP_WINDOW_ARGS,
        *CROP_VOLUME_ARGS,
        ArgSpec("dtype", "dtype", None, "Output type (values converted, not rescaled)."),
    ),
    deprecated=OUTPUT_DTYPE_ALIAS,
    removed=("image_type",),
    random=False,
)
CROP_MIRROR_NORMALIZE = OpSchema(
    "crop_mirror_normalize",
    "Crops, mirrors and normalises images, and changes layout and type in one pass.\n\n"
    "out = (in - mean) / std * scale + shift per channel (float32), then ``dtype`` (integers "
    "rounded and saturated). The crop follows ``crop``; ``mirror`` flips horizontally after "
    "cropping; ``pad_output`` pads channels to the next power of two with the fill value.",
    inputs=(InputSpec("input", "Images (HWC, CHW, FHWC, FCHW, DHWC, CDHW)."),),
    args=(
        *CROP_WINDOW_ARGS,
        *CROP_VOLUME_ARGS,
        ArgSpec("mirror", "int", 0, "Non-zero flips the sample horizontally.", tensor=True),
        ArgSpec("mean", "float_vec", (0.0,), "Mean, one or per channel.", tensor=True),
        ArgSpec("std", "float_vec", (1.0,), "Standard deviation, one or per channel.", tensor=True),
        ArgSpec("scale", "float", 1.0, "Multiplier applied after normalising."),
        ArgSpec("shift", "float", 0.0, "Added after scaling."),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "Output type."),
        ArgSpec("output_layout", "layout", "CHW", "Output layout (F is kept for sequences)."),
        ArgSpec("pad_output", "bool", False, "Pad the channels to a power of two."),
    ),
    deprecated=OUTPUT_DTYPE_ALIAS,
    removed=("image_type",),
    random=False,
)
_RESIZE_CROP_MIRROR_DOC = (
    "Resizes, then crops, then mirrors, in one resampling pass (DALI's legacy fused operator)."
    "\n\n"
    "The output size comes from ``resize``'s arguments; the crop window (``crop`` or "
    "crop_h/crop_w/crop_d, placed by crop_pos_x/y/z and ``rounding``, as ``crop`` places it) is "
    "then taken from the resized image and may reach beyond it (border pixels repeat); "
    "``mirror`` is a bit mask: 1 flips horizontally, 2 vertically, 4 along the depth. Only the "
    "window's source region is resampled, so the result equals ``resize`` + ``crop`` + ``flip`` "
    "computed in one go, with ``resize``'s kernels. Layouts: "
    "HWC, HW, CHW, FHWC, FCHW, CFHW and the volumes DHWC, DHW, CDHW, FDHWC, FCDHW, CFDHW."
)
_RESIZE_CROP_MIRROR_ARGS = (
    *RESIZE_ARGS,
    *CROP_WINDOW_ARGS,
    *(a for a in CROP_VOLUME_ARGS if a.name in ("crop_d", "crop_pos_z")),
    ArgSpec(
        "mirror",
        "int",
        0,
        "Flip mask: 0 none, 1 horizontal, 2 vertical, 4 depthwise, or a bitwise combination.",
        tensor=True,
    ),
)
_RESIZE_CROP_MIRROR_INPUTS = (
    InputSpec(
        "input",
        "Images, sequences or volumes.",
        layouts=(
            *RESIZE.inputs[0].layouts[:-1],
            "CFHW",
            "CFDHW",
            "",
        ),
    ),
)
RESIZE_CROP_MIRROR = OpSchema(
    "resize_crop_mirror",
    _RESIZE_CROP_MIRROR_DOC,
    inputs=_RESIZE_CROP_MIRROR_INPUTS,
    args=_RESIZE_CROP_MIRROR_ARGS,
    random=False,
)
FAST_RESIZE_CROP_MIRROR = OpSchema(
    "fast_resize_crop_mirror",
    "Deprecated in DALI (use ``resize_crop_mirror``): ``resize_crop_mirror`` with antialiasing "
    "off by default; building it warns with a DeprecationWarning.\n\n" + _RESIZE_CROP_MIRROR_DOC,
    inputs=_RESIZE_CROP_MIRROR_INPUTS,
    args=tuple(
        replace(a, default=False) if a.name == "antialias" else a for a in _RESIZE_CROP_MIRROR_ARGS
    ),
    random=False,
)
#: A following ``crop_mirror_normalize`` without a crop, absorbed by the fusion pass.
_ABSORBED_NORMALIZE = (
    ArgSpec(
        "normalize",
        "bool",
        False,
        "A following crop_mirror_normalize was fused in; the arguments below are its own.",
    ),
    *(a for a in CROP_MIRROR_NORMALIZE.args if a.name in NORMALIZE_ARGS),
    ArgSpec("normalize_dtype", "dtype", DataType.FLOAT, "crop_mirror_normalize's dtype."),
)
FUSED_RANDOM_RESIZED_CROP = OpSchema(
    "decoders._image_random_resized_crop",
    "decoders.image followed by random_resized_crop (and a crop_mirror_normalize without a "
    "crop), fused by the decode-fusion graph pass.",
    inputs=ENCODED,
    args=(
        *DECODE_ARGS,
        *(a for a in RANDOM_RESIZED_CROP.args if a.name != "dtype"),
        *_ABSORBED_NORMALIZE,
    ),
    hidden=True,
)
FUSED_RESIZE = OpSchema(
    "decoders._image_resize",
    "decoders.image followed by resize (and a following crop_mirror_normalize: its crop, or "
    "all of it), fused by the decode-fusion graph pass.",
    inputs=ENCODED,
    args=(
        *DECODE_ARGS,
        *(a for a in RESIZE_ARGS if a.name != "dtype"),
        *CROP_WINDOW_ARGS,
        *_ABSORBED_NORMALIZE,
    ),
    hidden=True,
)
FUSED_RANDOM_CROP_RESIZE = OpSchema(
    "decoders._image_random_crop_resize",
    "decoders.image_random_crop followed by resize (and a crop_mirror_normalize without a "
    "crop), fused by the decode-fusion graph pass.",
    inputs=ENCODED,
    args=(
        *DECODE_ARGS,
        *RANDOM_WINDOW_ARGS,
        *(a for a in RESIZE_ARGS if a.name != "dtype"),
        *_ABSORBED_NORMALIZE,
    ),
    hidden=True,
)
FUSED_CROP_RESIZE = OpSchema(
    "decoders._image_crop_resize",
    "decoders.image_crop followed by resize (and a crop_mirror_normalize without a crop), fused "
    "by the decode-fusion graph pass.",
    inputs=ENCODED,
    args=(
        *DECODE_ARGS,
        *CROP_WINDOW_ARGS,
        *(a for a in RESIZE_ARGS if a.name != "dtype"),
        *_ABSORBED_NORMALIZE,
    ),
    hidden=True,
)
#: ``slice``'s window arguments as a fused ``decoders.image_slice`` takes them: no ``dtype``, and
#: no ``fill_values`` (it is fused only where no window can pad).
SLICE_WINDOW_ARGS = tuple(a for a in SLICE.args if a.name not in ("dtype", "fill_values"))
FUSED_SLICE_RESIZE = OpSchema(
    "decoders._image_slice_resize",
    "decoders.image_slice followed by resize (and a crop_mirror_normalize without a crop), fused "
    "by the decode-fusion graph pass where no window can pad.",
    inputs=DECODERS_IMAGE_SLICE.inputs,
    args=(
        *DECODE_ARGS,
        *SLICE_WINDOW_ARGS,
        *(a for a in RESIZE_ARGS if a.name != "dtype"),
        *_ABSORBED_NORMALIZE,
    ),
    hidden=True,
)

RANDOM_CROP_GENERATOR = OpSchema(
    "random_crop_generator",
    "Produces the random window ``decoders.image_random_crop`` (with the same seed) would cut "
    "from an image of the given shape.\n\n"
    "The input is a 1-D integer tensor holding the image shape (``HW`` or ``HWC``). Outputs: "
    "the window's anchor ``(y, x)`` and shape ``(h, w)``, int32, ready for ``slice``.",
    inputs=(InputSpec("input", "The image shape, ``HW`` or ``HWC`` (an integer type)."),),
    outputs=("anchor", "shape"),
    args=RANDOM_WINDOW_ARGS,
)

SCHEMAS = (
    RANDOM_CROP_GENERATOR,
    TENSOR_RESIZE,
    DECODERS_IMAGE,
    DECODERS_IMAGE_CROP,
    DECODERS_IMAGE_RANDOM_CROP,
    DECODERS_IMAGE_SLICE,
    PEEK_IMAGE_SHAPE,
    RESIZE,
    RESIZE_CROP_MIRROR,
    FAST_RESIZE_CROP_MIRROR,
    RANDOM_RESIZED_CROP,
    CROP,
    CROP_MIRROR_NORMALIZE,
    FUSED_RANDOM_RESIZED_CROP,
    FUSED_RESIZE,
    FUSED_RANDOM_CROP_RESIZE,
    FUSED_CROP_RESIZE,
    FUSED_SLICE_RESIZE,
)
_FUSED = f"{_KERNELS}.fused_kernels"
KERNELS = {
    "decoders.image": f"{_KERNELS}.decoders:DecodeKernel",
    "decoders.image_crop": f"{_KERNELS}.decoders:DecodeCropKernel",
    "decoders.image_random_crop": f"{_KERNELS}.decoders:DecodeRandomCropKernel",
    "decoders.image_slice": f"{_KERNELS}.decoders:DecodeSliceKernel",
    "peek_image_shape": f"{_KERNELS}.decoders:PeekImageShapeKernel",
    "resize": f"{_KERNELS}.resize:ResizeKernel",
    "tensor_resize": f"{_KERNELS}.tensor_resize:TensorResizeKernel",
    "resize_crop_mirror": f"{_KERNELS}.resize_crop_mirror:ResizeCropMirrorKernel",
    "fast_resize_crop_mirror": f"{_KERNELS}.resize_crop_mirror:ResizeCropMirrorKernel",
    "random_resized_crop": f"{_KERNELS}.resize:RandomResizedCropKernel",
    "random_crop_generator": f"{_KERNELS}.resize:RandomCropGeneratorKernel",
    "crop": f"{_KERNELS}.crop:CropKernel",
    "crop_mirror_normalize": f"{_KERNELS}.cmn:CropMirrorNormalizeKernel",
    "decoders._image_random_resized_crop": f"{_FUSED}:FusedDecodeRandomResizedCropKernel",
    "decoders._image_resize": f"{_FUSED}:FusedDecodeResizeKernel",
    "decoders._image_random_crop_resize": f"{_FUSED}:FusedDecodeRandomCropResizeKernel",
    "decoders._image_crop_resize": f"{_FUSED}:FusedDecodeCropResizeKernel",
    "decoders._image_slice_resize": f"{_FUSED}:FusedDecodeSliceResizeKernel",
}


def _is_webp(head: bytes) -> bool:
    return head[:4] == b"RIFF" and head[8:12] == b"WEBP"


def _is_pnm(head: bytes) -> bool:
    return len(head) > 2 and head[:1] == b"P" and head[1:2] in b"123456" and head[2:3].isspace()


_PILLOW = f"{_KERNELS}.codecs:PillowCodec"
#: name → (signatures, decoder reference)
CODECS = {
    "jpeg": ((b"\xff\xd8\xff",), f"{_KERNELS}.codecs:JpegCodec"),
    "png": ((b"\x89PNG\r\n\x1a\n",), _PILLOW),
    "bmp": ((b"BM",), _PILLOW),
    "tiff": ((b"II*\x00", b"MM\x00*"), _PILLOW),
    "webp": ((_is_webp,), f"{_KERNELS}.webp:WebpCodec"),
    "pnm": ((_is_pnm,), _PILLOW),
    "gif": ((b"GIF87a", b"GIF89a"), _PILLOW),
    "jpeg2000": ((b"\x00\x00\x00\x0cjP  \r\n\x87\n", b"\xff\x4f\xff\x51"), _PILLOW),
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the image operators and the decode-fusion graph pass."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
    registry.add_graph_pass("decode_fusion", f"{_KERNELS}.fusion:fuse_decoders")


@hookimpl
def feedline_register_codecs(registry: Registry) -> None:
    """Register the built-in image codecs."""
    for name, (signatures, decoder) in CODECS.items():
        registry.add_codec(name, signatures, decoder)
