"""The argument specifications the image family's schemas share: decoding limits, crop windows,
random windows, resampling filters and the normalization that decode fusion can take over."""

from __future__ import annotations

from feedline.core.schema import ArgSpec, InputSpec
from feedline.core.types import DataType, ImageType, InterpType

__all__ = [
    "ADJUST_ORIENTATION_ARG",
    "CROP_VOLUME_ARGS",
    "CROP_WINDOW_ARGS",
    "DALI_DECODER_ARGS",
    "DALI_DECODER_CACHE_ARGS",
    "DECODER_DEPTH_ARGS",
    "DECODE_ARGS",
    "DECODE_DOC",
    "ENCODED",
    "GPU_DECODING",
    "INTERP_ARGS",
    "MAX_DECODED_BYTES",
    "MAX_DECODED_BYTES_ARG",
    "MAX_IMAGE_PIXELS",
    "MAX_PIXELS_ARG",
    "NORMALIZE_ARGS",
    "POS_DOC",
    "RANDOM_WINDOW_ARGS",
    "REMOVED_DECODER_ARGS",
    "RESAMPLED_DTYPE",
    "RESAMPLE_NOTE",
]

#: crop_mirror_normalize's arguments besides the crop (what decode fusion can take over).
NORMALIZE_ARGS = (
    "mirror",
    "mean",
    "std",
    "scale",
    "shift",
    "output_layout",
    "pad_output",
    "fill_values",
)
#: Default largest image (height × width) a decoder allocates: Pillow's own limit, about 179
#: megapixels. A header that claims more is refused before any pixel memory is allocated.
MAX_IMAGE_PIXELS = 178_956_970
MAX_PIXELS_ARG = ArgSpec(
    "max_pixels",
    "int",
    MAX_IMAGE_PIXELS,
    "Largest image (height × width, read from the header before anything is allocated) this "
    "operator accepts, for every format; a larger one fails its sample with an error naming the "
    "file and its size. The default is Pillow's limit (about 179 megapixels). Pillow itself "
    "still refuses non-JPEG images above twice its global ``PIL.Image.MAX_IMAGE_PIXELS``.",
)
#: Default largest decoded image in bytes (height × width × channels × bytes per channel, read
#: from the header before anything is allocated): 256 MiB, i.e. Pillow's warning threshold for
#: 8-bit RGB (about 89 megapixels); a 12-megapixel photo takes 36 MB.
MAX_DECODED_BYTES = 1 << 28
MAX_DECODED_BYTES_ARG = ArgSpec(
    "max_decoded_bytes",
    "int",
    None,
    "Largest decoded image in bytes (height × width × the file's channels × bytes per channel, "
    "read from the header before anything is allocated) this operator accepts; a larger one "
    "fails its sample with an error naming the file, its size and this argument. Unset: the "
    "pipeline's ``max_decoded_bytes``, else 268435456 (256 MiB), which admits 8-bit RGB images "
    "up to about 89 megapixels.",
)
ENCODED = (InputSpec("data", "Encoded image files: 1-D uint8 (e.g. from readers.file)."),)

DECODE_DOC = (
    "Formats: JPEG (grey, colour, CMYK), PNG, BMP, TIFF, WebP, PNM, GIF (first frame) and "
    "JPEG 2000, chosen by file signature among the registered codecs (plugins add more with "
    "``feedline_register_codecs``). The EXIF orientation is applied (see "
    "``adjust_orientation``). Output layout ``HWC``; RGB/BGR/YCbCr give 3 channels, GRAY 1, "
    "ANY_DATA the file's own (grey 1, grey+alpha 2, "
    "RGB 3, RGBA 4; CMYK becomes RGB). RGB output is bit-identical to libjpeg-turbo's (Pillow's, "
    "DALI's); GRAY and YCbCr of JPEGs come straight from the decoder (no RGB round trip). A "
    "corrupt, truncated or unrecognised file raises an error naming the sample's source."
)
ADJUST_ORIENTATION_ARG = ArgSpec(
    "adjust_orientation",
    "bool",
    True,
    "Apply the EXIF orientation (JPEG, PNG, TIFF, WebP); False keeps the pixels, and the shape, "
    "in the order the file stores them.",
)
DECODE_ARGS = (
    ArgSpec(
        "output_type",
        "image_type",
        ImageType.RGB,
        "Colour space of the output: RGB, BGR, GRAY, YCbCr or ANY_DATA.",
    ),
    ArgSpec(
        "dtype",
        "dtype",
        DataType.UINT8,
        "UINT8, INT8, UINT16, INT16, UINT32, INT32 or FLOAT, rescaled to the type's range "
        "(v * max / 255 for 8-bit files, in float32; FLOAT in [0, 1]).",
    ),
    MAX_PIXELS_ARG,
    MAX_DECODED_BYTES_ARG,
    ADJUST_ORIENTATION_ARG,
    ArgSpec(
        "use_fast_idct",
        "bool",
        False,
        "Decode JPEGs with libjpeg-turbo's fast integer inverse DCT: a little faster, a little "
        "less accurate (the pixels DALI's CPU decoder gives with it). JPEGs that go through "
        "Pillow (CMYK/YCCK files, YCbCr output, or no simplejpeg installed) keep the accurate "
        "IDCT, as Pillow has no such option.",
    ),
)
_MIXED_ONLY = (
    "DALI's ``mixed`` (nvJPEG) decoder only; accepted with DALI's default and meaning, and "
    "changes nothing in feedline's decoders (DALI's CPU decoder ignores it too)."
)
#: DALI's decoder arguments that only its GPU decoder uses (and ``jpeg_fancy_upsampling``, which
#: the CPU decoders always do), for the public decoders.
DALI_DECODER_ARGS = (
    ArgSpec(
        "jpeg_fancy_upsampling",
        "bool",
        False,
        "DALI: make the ``mixed`` decoder upsample chroma the way the CPU decoder does. The CPU "
        "decoders (DALI's and feedline's) always use libjpeg's fancy upsampling, so on the CPU "
        "this changes nothing.",
    ),
    ArgSpec(
        "hw_decoder_load", "float", 0.65, f"Share of JPEGs for a hardware decoder. {_MIXED_ONLY}"
    ),
    ArgSpec("affine", "bool", True, f"Pin the decoder's threads to CPU cores. {_MIXED_ONLY}"),
    ArgSpec(
        "device_memory_padding", "int", 16777216, f"nvJPEG device buffer padding. {_MIXED_ONLY}"
    ),
    ArgSpec("device_memory_padding_jpeg2k", "int", 0, f"nvJPEG2k device padding. {_MIXED_ONLY}"),
    ArgSpec("host_memory_padding", "int", 8388608, f"nvJPEG pinned padding. {_MIXED_ONLY}"),
    ArgSpec("host_memory_padding_jpeg2k", "int", 0, f"nvJPEG2k pinned padding. {_MIXED_ONLY}"),
    ArgSpec(
        "hybrid_huffman_threshold",
        "int",
        1000000,
        f"Pixel count above which nvJPEG decodes Huffman codes on the GPU. {_MIXED_ONLY}",
    ),
    ArgSpec("preallocate_height_hint", "int", 0, f"Hardware decoder hint. {_MIXED_ONLY}"),
    ArgSpec("preallocate_width_hint", "int", 0, f"Hardware decoder hint. {_MIXED_ONLY}"),
)
#: ``decoders.image``'s nvJPEG cache (DALI's mixed decoder only; no-ops here).
DALI_DECODER_CACHE_ARGS = (
    ArgSpec("cache_batch_copy", "bool", True, f"Batched copies out of the cache. {_MIXED_ONLY}"),
    ArgSpec("cache_debug", "bool", False, f"Print the cache's state. {_MIXED_ONLY}"),
    ArgSpec("cache_size", "int", 0, f"Decoded-image cache size in MB. {_MIXED_ONLY}"),
    ArgSpec("cache_threshold", "int", 0, f"Smallest image cached, in bytes. {_MIXED_ONLY}"),
    ArgSpec("cache_type", "str", "", f"'threshold' or 'largest'. {_MIXED_ONLY}"),
)
#: Decoder arguments DALI deprecated without replacement: accepted with a warning, ignored.
REMOVED_DECODER_ARGS = ("memory_stats", "split_stages", "use_chunk_allocator")
GPU_DECODING = ArgSpec(
    "gpu_decoding",
    "str",
    "auto",
    "Where a ``device='mixed'`` decoder decodes JPEGs: 'auto' on the GPU with nvImageCodec "
    "when ``nvidia-nvimgcodec-cu12``/``-cu13`` is installed, else on the CPU thread pool; "
    "'nvimgcodec' on the GPU (an error at build without it); 'cpu' on the CPU thread pool. CPU "
    "decoding writes into pinned memory and copies each batch to the GPU in one asynchronous "
    "transfer; other formats and ``image_slice`` always decode on the CPU. A ``cpu`` decoder "
    "accepts only 'auto' and 'cpu'.",
    choices=("auto", "nvimgcodec", "cpu"),
)
POS_DOC = (
    "Relative position of the window: start = round(pos * (in_size - crop_size)), halves away "
    "from zero; 0.5 centres it."
)
CROP_WINDOW_ARGS = (
    ArgSpec(
        "crop",
        "float_vec",
        None,
        "Window size (H, W) or (D, H, W); fractions are truncated.",
        tensor=True,
    ),
    ArgSpec("crop_h", "float", None, "Window height (instead of ``crop``).", tensor=True),
    ArgSpec("crop_w", "float", None, "Window width (instead of ``crop``).", tensor=True),
    ArgSpec("crop_pos_x", "float", 0.5, POS_DOC, tensor=True),
    ArgSpec("crop_pos_y", "float", 0.5, POS_DOC, tensor=True),
    ArgSpec(
        "rounding",
        "str",
        "round",
        "Anchor rounding: 'round' (nearest, halves away from zero) or 'truncate' (toward zero).",
        choices=("round", "truncate"),
    ),
)
CROP_VOLUME_ARGS = (
    ArgSpec("crop_d", "float", None, "Window depth for volumes (layouts with D).", tensor=True),
    ArgSpec("crop_pos_z", "float", 0.5, POS_DOC, tensor=True),
    ArgSpec(
        "out_of_bounds_policy",
        "str",
        "error",
        "A window leaving the input: 'error', 'pad' (with fill_values) or 'trim_to_shape'.",
        choices=("error", "pad", "trim_to_shape"),
    ),
    ArgSpec("fill_values", "float_vec", (0.0,), "Padding value, one or one per channel."),
)
#: ``decoders.image_crop``'s depth arguments: DALI lists them, images are 2-D, so they are
#: accepted and have no effect (``crop_d`` only together with ``crop_h`` and ``crop_w``).
DECODER_DEPTH_ARGS = (
    ArgSpec(
        "crop_d",
        "float",
        None,
        "Window depth of volumes: no effect on 2-D images, allowed only with crop_h and crop_w.",
        tensor=True,
    ),
    ArgSpec(
        "crop_pos_z",
        "float",
        0.5,
        "Depth position of volumes: no effect on 2-D images.",
        tensor=True,
    ),
)
RESAMPLED_DTYPE = ArgSpec("dtype", "dtype", None, "Output type: the input's (default) or FLOAT.")
RANDOM_WINDOW_ARGS = (
    ArgSpec(
        "random_area",
        "float_vec",
        (0.08, 1.0),
        "Range of the window's area as a fraction of the image's (uniform).",
    ),
    ArgSpec(
        "random_aspect_ratio",
        "float_vec",
        (3 / 4, 4 / 3),
        "Range of the window's width/height ratio (log-uniform).",
    ),
    ArgSpec(
        "num_attempts",
        "int",
        10,
        "Draws before falling back to the largest centred window with an allowed ratio.",
    ),
)
INTERP_ARGS = (
    ArgSpec(
        "interp_type",
        "interp",
        InterpType.INTERP_LINEAR,
        "Filter: INTERP_NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR or GAUSSIAN.",
        True,
    ),
    ArgSpec("min_filter", "interp", None, "Filter when downscaling (default: interp_type).", True),
    ArgSpec("mag_filter", "interp", None, "Filter when upscaling (default: interp_type).", True),
    ArgSpec("antialias", "bool", True, "Widen the filter by the scale when downscaling."),
)
RESAMPLE_NOTE = (
    "Geometry (as DALI): output pixel j samples the source at start + (j + 0.5) * scale; taps at "
    "pixel centres, borders clamped; LINEAR with antialias is a triangle of radius max(scale, "
    "1). 8-bit images with 1, 3 or 4 channels and LINEAR/CUBIC/LANCZOS3 filters use Pillow's "
    "fixed-point resampler (within 1 of the exact result); other cases are exact in float32."
)
