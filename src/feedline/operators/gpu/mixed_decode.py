"""``mixed`` image decoders: ``decoders.image``, ``image_crop``, ``image_random_crop`` and
``image_slice`` with ``device="mixed"`` (encoded files on the CPU in, images on the GPU out).

By default each sample is decoded on the pipeline's CPU thread pool by the CPU decoder kernel
(same codecs, same windows: a sample's random window comes from the generator the CPU kernel
uses, so a seeded pipeline crops the same windows on either device) and packed into a pinned
host buffer; the batch then goes to the GPU in one asynchronous copy on the pipeline's stream
(:func:`~feedline.operators.gpu.transfer.upload`).

Where nvImageCodec (``nvidia-nvimgcodec-cu12``/``-cu13``) is installed, JPEGs are decoded on the
GPU instead (``gpu_decoding='auto'``, the default, or ``'nvimgcodec'``; ``'cpu'`` turns it off):
the window is still placed on the CPU from the file's header, the image decoded on the stream
and the window cut out on the device. GPU decoding applies to 8-bit RGB, BGR and GRAY output of
``image``, ``image_crop`` and ``image_random_crop``; everything else decodes on the CPU.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from feedline.core.errors import OperatorError
from feedline.core.execution.chains import sample_arg
from feedline.core.kernel import Batch, Kernel, SampleContext, set_active_source
from feedline.core.types import DataType, ImageType
from feedline.operators.cpu.image.crop import crop_window
from feedline.operators.cpu.image.decoders import (
    DecodeCropKernel,
    DecodeKernel,
    DecodeRandomCropKernel,
    DecoderKernel,
    DecodeSliceKernel,
    encoded_bytes,
    roi_from_window,
)
from feedline.operators.cpu.image.limits import check_jpeg_entropy
from feedline.operators.cpu.image.resize import rrc_window
from feedline.operators.gpu.transfer import PinnedStaging, require_stream, upload

__all__ = [
    "MixedDecodeCropKernel",
    "MixedDecodeKernel",
    "MixedDecodeRandomCropKernel",
    "MixedDecodeSliceKernel",
    "nvimgcodec_module",
]

_JPEG = b"\xff\xd8\xff"
_GPU_TYPES = (ImageType.RGB, ImageType.BGR, ImageType.GRAY)


def nvimgcodec_module() -> Any:
    """The ``nvidia.nvimgcodec`` module, or None when it is not installed."""
    try:
        from nvidia import nvimgcodec
    except ImportError:
        return None
    return nvimgcodec


class _MixedDecoder(Kernel):
    """Runs the CPU twin's ``run_sample`` on the pool, then uploads the batch (or decodes
    JPEGs with nvImageCodec)."""

    cpu_kernel: ClassVar[type[DecoderKernel]]
    gpu_capable: ClassVar[bool] = True

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._cpu = self.cpu_kernel(ctx)

    def setup(self) -> None:
        """Set up the CPU twin (its argument checks), the stream and the decoding backend.

        Raises:
            RuntimeError: ``gpu_decoding='nvimgcodec'`` without nvImageCodec installed.
        """
        self._stream = require_stream(self)
        self._cpu.setup()
        self._staging = PinnedStaging(self._stream)
        self._kinds = {name: spec.kind for name, spec in self.ctx.schema.arg_map.items()}
        choice = self.args.get("gpu_decoding", "auto")
        module = nvimgcodec_module() if choice != "cpu" else None
        if choice == "nvimgcodec" and module is None:
            raise RuntimeError(
                f"{self.ctx.name}: gpu_decoding='nvimgcodec' but nvImageCodec is not installed "
                "(pip install nvidia-nvimgcodec-cu12 or nvidia-nvimgcodec-cu13)"
            )
        usable = (
            self.gpu_capable
            and self.args["dtype"] == DataType.UINT8
            and ImageType(self.args["output_type"]) in _GPU_TYPES
        )
        self._gpu = None
        if module is not None and usable:
            try:
                self._gpu = _NvImageCodec(module, self._stream, self.ctx.name)
            except Exception as exc:  # installed but unusable here (no driver, no device…)
                if choice == "nvimgcodec":
                    raise RuntimeError(
                        f"{self.ctx.name}: gpu_decoding='nvimgcodec' but nvImageCodec cannot "
                        f"create a decoder: {exc}"
                    ) from exc
                warnings.warn(
                    f"{self.ctx.name}: nvImageCodec is installed but cannot create a decoder "
                    f"({exc}); decoding on the CPU (gpu_decoding='cpu' silences this)",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def run(self, batch: Batch) -> list[Any]:
        """Decode the batch; one device batch out."""
        data = batch.inputs[0]
        if self._stream.is_device_batch(data):
            raise TypeError(f"{self.ctx.name}: the encoded input must be in CPU memory")
        inputs = [tl.samples() for tl in batch.inputs]
        arg_samples = {k: tl.samples() for k, tl in batch.arg_inputs.items()}
        infos = data.source_infos()
        layouts = tuple(tl.layout() for tl in batch.inputs)
        n = len(data)
        on_gpu = (
            [bytes(np.asarray(s[:3])) == _JPEG for s in inputs[0]]
            if self._gpu is not None
            else [False] * n
        )

        def one(i: int) -> Any:
            args: Mapping[str, Any] = self.args
            if arg_samples:
                args = {
                    **args,
                    **{k: sample_arg(v[i], self._kinds[k]) for k, v in arg_samples.items()},
                }
            context = SampleContext(i, batch.iteration, infos[i], layouts, self.ctx.seed)
            set_active_source(infos[i])
            try:
                sample = tuple(x[i] for x in inputs)
                if on_gpu[i]:
                    window = self.window(sample[0], args, context)
                    check_jpeg_entropy(np.ascontiguousarray(sample[0]))
                    return window
                return self._cpu.run_sample(sample, args, context)
            except Exception as exc:
                raise OperatorError(
                    f"{type(exc).__name__}: {exc}",
                    operator=self.ctx.name,
                    iteration=batch.iteration,
                    sample_index=i,
                    source_info=infos[i],
                ) from exc
            finally:
                context.release()

        results = batch.map(one, n)
        if not any(on_gpu):
            return [upload(self._stream, self._staging, results, "HWC", infos, batch.map)]
        assert self._gpu is not None
        return [self._gpu.decode(inputs[0], results, on_gpu, self.args, infos, self._staging)]

    def window(
        self, data: np.ndarray, args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[int, int, int, int] | None:
        """The ``(y0, x0, y1, x1)`` window to keep of a GPU-decoded sample (None: all of it),
        placed exactly as the CPU kernel places it. The header is read either way, so the
        operator's ``max_pixels`` and ``max_decoded_bytes`` are checked before the GPU allocates
        anything (and, in :meth:`run`, that the file is long enough for the size it declares)."""
        self._cpu.image_shape(data)
        return None


class MixedDecodeKernel(_MixedDecoder):
    """``decoders.image`` on ``mixed``."""

    cpu_kernel = DecodeKernel


class MixedDecodeCropKernel(_MixedDecoder):
    """``decoders.image_crop`` on ``mixed``."""

    cpu_kernel = DecodeCropKernel

    def window(
        self, data: np.ndarray, args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[int, int, int, int] | None:
        """The fixed window, from the header's size."""
        height, width, _ = self._cpu.image_shape(data)
        window = crop_window(self._cpu.op, "HW", (height, width), args)
        return roi_from_window(window, height, width)


class MixedDecodeRandomCropKernel(_MixedDecoder):
    """``decoders.image_random_crop`` on ``mixed``."""

    cpu_kernel = DecodeRandomCropKernel

    def window(
        self, data: np.ndarray, args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[int, int, int, int] | None:
        """The random window, drawn from the sample's generator as on the CPU."""
        height, width, _ = self._cpu.image_shape(data)
        y, x, h, w = rrc_window(args, height, width, sample.rng)
        return (y, x, y + h, x + w)


class MixedDecodeSliceKernel(_MixedDecoder):
    """``decoders.image_slice`` on ``mixed`` (always decoded on the CPU)."""

    cpu_kernel = DecodeSliceKernel
    gpu_capable = False


class _NvImageCodec:
    """JPEG decoding on the GPU with nvImageCodec, on the pipeline's stream."""

    def __init__(self, module: Any, stream: Any, name: str) -> None:
        self._module = module
        self._stream = stream
        self._name = name
        self._decoder = module.Decoder(device_id=stream.device_id)

    def decode(
        self,
        encoded: list[np.ndarray],
        results: list[Any],
        on_gpu: list[bool],
        args: Mapping[str, Any],
        infos: list[str],
        staging: PinnedStaging,
    ) -> Any:
        """The device batch: GPU-decoded JPEGs cut to their windows (``results[i]``), the other
        samples (decoded on the CPU, ``results[i]``) uploaded in one copy."""
        import cupy

        nvimgcodec = self._module
        image_type = ImageType(args["output_type"])
        color = (
            nvimgcodec.ColorSpec.GRAY if image_type == ImageType.GRAY else nvimgcodec.ColorSpec.RGB
        )
        orient = bool(args.get("adjust_orientation", True))
        params = nvimgcodec.DecodeParams(apply_exif_orientation=orient, color_spec=color)
        picked = [i for i, flag in enumerate(on_gpu) if flag]
        files = [encoded_bytes(self._name, encoded[i]).tobytes() for i in picked]
        images = self._decoder.decode(files, params=params, cuda_stream=self._stream.ptr)
        samples: list[Any] = [None] * len(results)
        for i, image in zip(picked, images, strict=True):
            if image is None:
                raise OperatorError(
                    "nvImageCodec could not decode the JPEG",
                    operator=self._name,
                    sample_index=i,
                    source_info=infos[i],
                )
            array = cupy.asarray(image)
            if array.ndim == 2:
                array = array[:, :, None]
            window = results[i]
            if window is not None:
                y0, x0, y1, x1 = window
                array = array[y0:y1, x0:x1]
            if image_type == ImageType.BGR:
                array = array[:, :, ::-1]
            samples[i] = cupy.ascontiguousarray(array)
        rest = [i for i, flag in enumerate(on_gpu) if not flag]
        if rest:
            uploaded = upload(
                self._stream, staging, [results[i] for i in rest], "HWC", [infos[i] for i in rest]
            )
            for i, sample in zip(rest, uploaded.samples(), strict=True):
                samples[i] = sample
        return self._stream.batch(samples, "HWC", infos)
